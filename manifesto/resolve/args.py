"""vLLM argument assembly: shared, then role ``vllm:``, then computed, then raw args."""

from __future__ import annotations

import json
from typing import Any

from manifesto.errors import ResolveError
from manifesto.resolve.plan import Arg

__all__ = ["flag_name", "owned_flag", "to_args", "DEFAULT_QUIET_ENDPOINTS"]

DEFAULT_QUIET_ENDPOINTS = "/health,/v1/models,/metrics"

# Flags Manifesto derives itself; a spec setting them would let GPU allocation and the
# vLLM worker topology disagree, so each is rejected with the field to use instead.
_OWNED = {
    "pipeline-parallel-size": "parallelism.pp",
    "tensor-parallel-size": "parallelism.tp",
    "data-parallel-size": "parallelism.dp",
    "data-parallel-size-local": "parallelism.dp and lws.size",
    "data-parallel-rank": "parallelism.dp and lws.size",
    "data-parallel-start-rank": "parallelism.dp and lws.size",
    "data-parallel-address": "the generated launch script",
    "data-parallel-rpc-port": "the generated launch script",
    "enable-expert-parallel": "parallelism.ep",
    "revision": "model.revision",
    "kv-transfer-config": "the role's kv_transfer_config",
    "port": "the generated launch script",
    "headless": "the generated launch script",
    "nnodes": "lws.size",
    "node-rank": "the generated launch script",
    "master-addr": "the generated launch script",
}
_SHORT = {"-pp": "pipeline-parallel-size", "-tp": "tensor-parallel-size", "-dp": "data-parallel-size"}


def flag_name(key: str) -> str:
    """``attention_config.use_x`` -> ``attention-config.use_x`` (JSON sub-keys keep their case)."""
    head, dot, tail = key.lstrip("-").partition(".")
    return head.replace("_", "-") + dot + tail


def owned_flag(name: str) -> str | None:
    """The field that owns flag ``name`` (kebab form, no dashes), if Manifesto derives it."""
    return _OWNED.get(name.split(".", 1)[0])


def _reject_owned(key: str, where: str) -> None:
    name = flag_name(key)
    owner = owned_flag(name)
    if owner:
        raise ResolveError(f"--{name} is set by Manifesto; configure it through {owner}", path=where)


def _value(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def to_args(layers: list[tuple[str, str, dict[str, Any]]], raw: list[str], raw_where: str) -> tuple[Arg, ...]:
    """Merge ``(source, where, mapping)`` layers in order; later keys win in place.

    ``true`` is a bare flag; ``false`` and ``null`` leave the flag out (use a ``no_...``
    key for an explicit negation); mappings and lists become compact JSON.
    """
    merged: dict[str, tuple[str, Any]] = {}
    for source, where, mapping in layers:
        for key, value in mapping.items():
            if where:  # user-written layers only; Manifesto's own layers pass where=""
                _reject_owned(key, f"{where}.{key}")
            merged[flag_name(key)] = (source, value)
    out: list[Arg] = []
    for name, (source, value) in merged.items():
        if value is None or value is False:
            continue
        if value is True:
            out.append(Arg(f"--{name}", None, source))
        elif "." in name:  # --json-config.key=value sets one key of a JSON-valued config
            out.append(Arg(f"--{name}={_value(value)}", None, source))
        else:
            out.append(Arg(f"--{name}", _value(value), source))
    for i, text in enumerate(raw):
        first = text.strip().split("=", 1)[0].split(" ", 1)[0]
        if first in _SHORT:
            first = "--" + _SHORT[first]
        if first.startswith("--"):
            _reject_owned(first[2:].replace("_", "-"), f"{raw_where}[{i}]")
        out.append(Arg(text, None, "vllm_raw_args", raw=True))
    return tuple(out)
