"""A stand-in renderer for the build-engine tests (``MANIFESTO_BUILD_RENDERER=fake_renderer``).

It follows the renderer contract of ``manifesto.build_renderer`` with a toy input format,
one ``key: value`` per line:

    extends: base.yaml          parent file, relative to this one (followed, cycles fail)
    accelerator: gb200          the cluster must list it under ``accelerators:``
    fail: some message          raise an InputError pointing at this line (with ``inputs``)

A cluster lists ``accelerators: a b`` and ``platform: slurm`` for ``.sbatch``. The
artifact holds the file names and contents it read, never an absolute path.
Test hooks (plain environment variables of the test process):

    FAKE_RENDER_LOG    append "<model file>|<cluster file>" for every render
    FAKE_CODE_FILE     one more file in the code fingerprint
    FAKE_RENDER_SPIN   burn this many milliseconds of CPU per render (benchmarks)
    FAKE_RENDER_SLEEP  sleep this many milliseconds per render (kill tests)
    FAKE_NO_INPUTS     raise errors without ``inputs`` (a less careful renderer)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from manifesto.errors import ExtendsError, IncompatiblePairError, InputError, Origin


def __getattr__(name: str):
    """``RenderOptions``: the one Struct of every render option, imported on first use (a
    no-op build must not import msgspec)."""
    if name == "RenderOptions":
        from manifesto.resolve.options import Options

        return Options
    raise AttributeError(name)


@dataclass(frozen=True)
class Artifact:
    text: str
    suffix: str
    inputs: tuple[str, ...]


def code_fingerprint_paths() -> list[str]:
    extra = os.environ.get("FAKE_CODE_FILE")
    return [os.path.abspath(__file__)] + ([extra] if extra else [])


def render_pair(model: str, cluster: str, options, roots: tuple = ()) -> Artifact:
    _log(model, cluster)
    _spend_time()
    chain = _chain(model, ())
    fields = _fields(chain)
    inputs = [*chain, cluster] + ([options.routing_profile] if options.routing_profile else [])
    cluster_fields = _fields([cluster])
    _check_accelerator(model, cluster, fields, cluster_fields, inputs)
    if "fail" in fields:  # like a careful renderer, say which files the error came from
        path, line, value = fields["fail"]
        err = InputError(value, Origin(os.path.basename(path), line, 1), "fail")
        err.inputs = tuple(inputs)
        raise err
    suffix = ".sbatch" if cluster_fields.get("platform", ("", 0, ""))[2] == "slurm" else ".yaml"
    return Artifact(_text(inputs, options), suffix, tuple(inputs))


def _log(model: str, cluster: str) -> None:
    log = os.environ.get("FAKE_RENDER_LOG")
    if log:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, f"{_short(model)}|{os.path.basename(cluster)}\n".encode())
        os.close(fd)


def _short(path: str) -> str:
    parts = path.split(os.sep)
    return "/".join(parts[parts.index("models") + 1:]) if "models" in parts else os.path.basename(path)


def _spend_time() -> None:
    spin = float(os.environ.get("FAKE_RENDER_SPIN") or 0) / 1000
    end = time.process_time() + spin  # CPU time, like a real render, even on a busy machine
    while spin and time.process_time() < end:
        pass
    sleep = float(os.environ.get("FAKE_RENDER_SLEEP") or 0) / 1000
    if sleep:
        time.sleep(sleep)


def _chain(path: str, seen: tuple) -> list[str]:
    if path in seen:
        names = " -> ".join(os.path.basename(p) for p in (*seen, path))
        raise ExtendsError(f"extends cycle: {names}", Origin(os.path.basename(path)))
    if not os.path.isfile(path):
        raise ExtendsError("extends parent not found", Origin(os.path.basename(path)))
    parent = _fields([path]).get("extends")
    if parent is None:
        return [path]
    return _chain(os.path.join(os.path.dirname(path), parent[2]), (*seen, path)) + [path]


def _fields(paths) -> dict:
    """``key -> (file, line, value)``; later files override earlier ones."""
    out = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                key, sep, value = line.partition(":")
                if sep and not line.startswith((" ", "#")):
                    out[key.strip()] = (path, n, value.strip())
    return out


def _check_accelerator(model, cluster, fields, cluster_fields, inputs) -> None:
    wanted = fields.get("accelerator", (None, 0, ""))[2]
    offered = cluster_fields.get("accelerators", (None, 0, ""))[2].split()
    if wanted and wanted not in offered:
        name = os.path.basename(cluster).removesuffix(".yaml")
        err = IncompatiblePairError(
            f"the spec pins accelerator '{wanted}' but cluster '{name}' offers {', '.join(offered) or 'none'}",
            Origin(_short(model)),
        )
        if not os.environ.get("FAKE_NO_INPUTS"):
            err.inputs = tuple(inputs)
        raise err


def _text(inputs, options) -> str:
    lines = [f"# options: {options.user} {options.namespace} {options.idle_shutdown} {options.idle_timeout_minutes}"]
    for path in inputs:
        with open(path, encoding="utf-8") as f:
            lines.append(f"--- {os.path.basename(path)}\n{f.read().rstrip()}")
    return "\n".join(lines) + "\n"
