#!/usr/bin/env python3
"""Derive the table of ``vllm serve`` arguments and ``VLLM_*`` variables from a vLLM release.

Not run by CI (it downloads the release from PyPI and takes minutes). Run it when the image
catalog's vLLM pin moves, and commit its output:

    python3 tools/gen_vllm_table.py 0.33.0          # writes manifesto/data/vllm-0.33.0.json

It makes a scratch venv, installs the CPU build of torch (``pip install torch==2.13.0``
takes a local file on our machines), the ``vllm`` wheel *without* its dependencies, and the
few pure-Python packages that importing vLLM's CLI modules needs; then it runs itself inside
that venv (``--emit``) to build the very parser ``vllm serve`` builds (the top-level
``FlexibleArgumentParser`` plus ``ServeSubcommand().subparser_init()``) and reads every
action off it. Lists that vLLM checks only after parsing (KV-cache dtypes, tool-call and
reasoning parsers), numeric bounds of the config dataclasses' fields and the names in
``vllm.envs.environment_variables`` come from the same installed release.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMAT = 1

# What `import vllm.entrypoints.cli.serve` needs beside torch, found by importing until it
# stopped failing (pip names). Installed at their current releases: none of them changes
# which arguments vLLM declares.
IMPORT_DEPS = [
    "packaging", "uvloop", "pydantic", "regex", "numpy", "cbor2", "psutil", "pyzmq", "urllib3",
    "transformers", "aiohttp", "requests", "openai-harmony", "openai", "msgspec", "cloudpickle",
    "pillow", "pybase64", "cachetools", "py-cpuinfo", "fastapi", "prometheus-client",
    "partial-json-parser", "xgrammar", "llguidance", "uvicorn", "watchfiles", "orjson",
]
TORCH = "torch==2.13.0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version", help="vLLM release on PyPI, e.g. 0.33.0")
    ap.add_argument("--venv", help="reuse this venv (created if missing) instead of a temporary one")
    ap.add_argument("--emit", action="store_true", help="internal: run inside the venv, print the table")
    ap.add_argument("--wheel", default="", help="internal: wheel file name and digest for the header")
    args = ap.parse_args(argv)
    if args.emit:
        json.dump(emit(args.version, args.wheel), sys.stdout, indent=1, sort_keys=True)
        return 0
    venv = Path(args.venv) if args.venv else Path(tempfile.mkdtemp(prefix="vllm-table-"))
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q"]
    subprocess.run(pip + [TORCH], check=True)
    wheels = venv / "wheels"
    subprocess.run([str(py), "-m", "pip", "download", "-q", "--no-deps", f"vllm=={args.version}",
                    "-d", str(wheels)], check=True)
    wheel = next(wheels.glob(f"vllm-{args.version}-*.whl"))
    subprocess.run(pip + ["--no-deps", str(wheel)], check=True)
    subprocess.run(pip + IMPORT_DEPS, check=True)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    out = subprocess.run([str(py), __file__, args.version, "--emit", "--wheel", f"{wheel.name} sha256:{digest}"],
                         check=True, capture_output=True, text=True, env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"})
    target = ROOT / "manifesto" / "data" / f"vllm-{args.version}.json"
    target.write_text(out.stdout + "\n")
    print(f"wrote {target.relative_to(ROOT)}")
    return 0


# --- everything below runs inside the venv that has the vLLM release ------------------------

def emit(version: str, wheel: str) -> dict:
    import importlib.metadata

    from vllm import platforms
    from vllm.platforms.cpu import CpuPlatform

    found = importlib.metadata.version("vllm")
    if found != version:
        raise SystemExit(f"the venv has vllm {found}, not {version}")
    # No GPU here: the config dataclasses' defaults need some platform to be built.
    platforms.current_platform = CpuPlatform()
    parser = serve_parser()
    bounds = field_bounds()
    args = [describe(parser, action, bounds) for action in parser._actions if action.option_strings]
    args = [a for a in args if a is not None]
    return {
        "format": FORMAT,
        "vllm": version,
        "source": f"PyPI vllm=={version} ({wheel})" if wheel else f"PyPI vllm=={version}",
        "generator": "tools/gen_vllm_table.py",
        "args": sorted(args, key=lambda a: a["name"]),
        "after_parse": after_parse_lists(),
        "removed": removed_flags(),
        "env": sorted(env_names()),
    }


def serve_parser():
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(description="vLLM CLI")
    top.add_argument("-v", "--version", action="version", version=version_of_vllm())
    subparsers = top.add_subparsers(required=False, dest="subparser")
    return ServeSubcommand().subparser_init(subparsers)


def version_of_vllm() -> str:
    import importlib.metadata

    return importlib.metadata.version("vllm")


def describe(parser, action, bounds: dict) -> dict | None:
    import argparse as ap

    if isinstance(action, (ap._HelpAction, ap._VersionAction)):
        return None
    # Every option string the parser accepts for this action, hidden ones included
    # (EnableDisableAction keeps --no-enable-x out of help but still parses it).
    options = sorted(s for s, a in parser._option_string_actions.items() if a is action)
    name = max((s for s in options if s.startswith("--")), key=lambda s: (s == "--" + action.dest.replace("_", "-"), -len(s)))
    kind, negatives = "value", []
    if isinstance(action, ap.BooleanOptionalAction):
        kind = "onoff"
        negatives = sorted(getattr(action, "negative_option_strings", None)
                           or [s for s in options if s.startswith("--no-")])
    elif action.nargs == 0:
        kind = "flag"
    elif isinstance(action, ap._AppendAction):
        kind = "append"
    type_name, optional = type_of(action.type)
    entry = {
        "name": name[2:],
        "dest": action.dest,
        "options": options,
        "kind": kind,
        "type": type_name if kind in ("value", "append") else None,
        "optional": optional,
        "nargs": action.nargs if isinstance(action.nargs, (str, int)) and kind in ("value", "append") else None,
        "choices": sorted(str(c) for c in action.choices) if action.choices else None,
        "negatives": negatives or None,
        "deprecated": deprecation(parser, action),
        "bounds": bounds.get(action.dest),
    }
    return entry


def type_of(fn) -> tuple[str, bool]:
    """(type name from a closed vocabulary, whether '' and 'None' mean unset)."""
    if fn is None:
        return "str", False
    qual = getattr(fn, "__qualname__", type(fn).__name__)
    if qual.startswith("optional_type."):
        inner, _ = type_of(_closure(fn)[0])
        return inner, True
    if qual.startswith("parse_type."):
        return type_of(_closure(fn)[0])
    simple = {"int": "int", "float": "float", "str": "str", "loads": "json", "union_dict_and_str": "json_or_str",
              "human_readable_int": "size", "human_readable_int_or_auto": "size_or_auto",
              "parse_reasoning_parser": "str"}
    if qual in simple:
        return simple[qual], qual == "union_dict_and_str"
    if qual.endswith("parse_dataclass"):
        return "json", False
    if "<lambda>" in qual:  # choice lists lower-cased by a lambda: the choices carry the check
        return "str", False
    return "str", False


def _closure(fn) -> list:
    return [c.cell_contents for c in (fn.__closure__ or ())]


def deprecation(parser, action) -> dict | None:
    import re

    help_text = " ".join((action.help or "").split())
    deprecated = action in getattr(parser, "_deprecated", ()) or "Deprecat" in type(action).__name__ \
        or re.search(r"\bis deprecated\b|^Deprecated\b", help_text)
    if not deprecated:
        return None
    use = re.search(r"[Uu]se (--[\w.-]+)", help_text)
    return {"message": help_text.split(". ")[0].rstrip(".") + ".", "replacement": use.group(1) if use else None}


def field_bounds() -> dict:
    """dest -> {"gt"|"ge"|"lt"|"le": number} from the config dataclasses' pydantic fields,
    kept only where every dataclass with a field of that name agrees."""
    import vllm.config as config

    seen: dict[str, list] = {}
    for cls_name in config.__all__:
        fields = getattr(getattr(config, cls_name), "__pydantic_fields__", None) or {}
        for field, info in fields.items():
            b = {}
            for m in info.metadata:
                for key in ("gt", "ge", "lt", "le"):
                    if type(m).__name__.lower() == key:
                        b[key] = getattr(m, key)
            seen.setdefault(field, []).append(b)
    out = {}
    for field, variants in seen.items():
        if variants[0] and all(v == variants[0] for v in variants):
            out[field] = variants[0]
    return out


def after_parse_lists() -> dict:
    """Values vLLM checks after argparse accepted the string."""
    import vllm.reasoning  # noqa: F401  (registers the lazy parsers)
    import vllm.tool_parsers  # noqa: F401
    from vllm.config.cache import KV_CACHE_DTYPES
    from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
    from vllm.tool_parsers.abstract_tool_parser import ToolParserManager

    def names(manager, attr):
        return sorted(set(manager.lazy_parsers) | set(getattr(manager, attr, {})))

    return {
        "kv-cache-dtype": sorted(KV_CACHE_DTYPES),
        "tool-call-parser": names(ToolParserManager, "tool_parsers"),
        "reasoning-parser": names(ReasoningParserManager, "reasoning_parsers"),
    }


def removed_flags() -> dict:
    """Flags the release names as gone, with its own hint: read from FlexibleArgumentParser.error."""
    import inspect
    import re

    from vllm.utils.argparse_utils import FlexibleArgumentParser

    src = inspect.getsource(FlexibleArgumentParser.error)
    out = {}
    for flag in re.findall(r"--(\w[\w-]*) is not a vllm serve option", src):
        hint = re.search(r'"[^"]*Hint: --' + flag + r'.*?\)', src, re.S)
        text = "".join(re.findall(r'"([^"]*)"', hint.group(0))).replace("\\n", " ") if hint else ""
        out[flag] = " ".join(text.split()).removeprefix("Hint: ")
    return out


def env_names() -> list[str]:
    import vllm.envs as envs

    return list(envs.environment_variables)


if __name__ == "__main__":
    sys.exit(main())
