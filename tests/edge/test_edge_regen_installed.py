"""``manifesto regen`` from the editable install the test environment has (``uv sync``
installs this checkout editable): run from outside the checkout with nothing turning the
checkout note off, every committed artifact and golden is identical.

A render from there carries "(checkout at git commit ...)" on its Source line; regen renders
without it and reads the file's line without it, so out/ does not differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # starts the installed manifesto

REPO = Path(__file__).resolve().parents[2]
# out/gitops/: Argo CD objects that only `manifesto build` makes (no render command, no regen header).
ARTIFACTS = sorted(
    [p for p in (REPO / "out").rglob("*") if p.is_file() and p.suffix in (".yaml", ".sbatch")
     and ".cache" not in p.parts and p.relative_to(REPO / "out").parts[0] != "gitops"]
    + sorted((REPO / "tests" / "golden").glob("*/expected.*"))
)

_LOOP = """
import contextlib, io, json, sys
from manifesto.cli import main
codes = {}
for path in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        codes[path] = [main(["regen", path]), err.getvalue()]
print(json.dumps(codes))
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "MANIFESTO_SOURCE_COMMIT"}


def _installed(tmp_path: Path) -> Path:
    script = Path(sys.executable).parent / "manifesto"
    found = subprocess.run([sys.executable, "-c", "import manifesto, importlib.metadata as m; "
                            "print(manifesto.__file__); print(m.distribution('llm-manifesto').read_text("
                            "'direct_url.json') or '')"], cwd=tmp_path, capture_output=True, text=True, env=_env())
    where, _, direct = found.stdout.partition("\n")
    if found.returncode != 0 or not script.exists() or '"editable":true' not in direct.replace(" ", ""):
        pytest.skip("the test environment has no editable install of this checkout")
    assert Path(where.strip()).resolve().is_relative_to(REPO)
    return script


def test_every_artifact_regenerates_from_an_editable_install(tmp_path):
    script = _installed(tmp_path)
    render = subprocess.run([str(script), "render", "manifest", str(REPO / "models/qwen/qwen3-0.6b.yaml"),
                             "--cluster", str(REPO / "clusters/example-gb200.yaml"), "--user", "u", "--namespace",
                             "ns"], cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=120)
    assert render.returncode == 0, render.stderr
    if "(checkout at git commit " not in render.stdout:
        pytest.skip("this checkout's commit cannot be read, so renders carry no note")
    mine = tmp_path / "mine.yaml"
    mine.write_text(render.stdout)
    one = subprocess.run([str(script), "regen", str(mine)], cwd=tmp_path, capture_output=True, text=True,
                         env=_env(), timeout=120)
    assert (one.returncode, one.stdout) == (0, ""), one.stderr
    loop = subprocess.run([sys.executable, "-c", _LOOP, *map(str, ARTIFACTS)], cwd=tmp_path, capture_output=True,
                          text=True, env=_env(), timeout=600)
    assert loop.returncode == 0, loop.stderr
    codes = json.loads(loop.stdout)
    assert {path: result for path, result in codes.items() if result[0] != 0} == {}
    assert len(codes) == len(ARTIFACTS) >= 50
    assert sorted(os.listdir(tmp_path)) == ["mine.yaml"]


def test_print_command_reproduces_the_render_with_bash(tmp_path):
    """The printed command, run by bash, renders what regen renders in-process, also for a
    header spelled differently from the renderer's own (glued and double-quoted words)."""
    import shlex
    import shutil

    from manifesto.render.header import regenerate_command

    if shutil.which("bash") is None:
        pytest.skip("no bash")
    golden = (REPO / "tests/golden/single-gpu-deployment/expected.yaml").read_text()
    spelled = golden.replace("--user golden-user --namespace golden-ns",
                             "--user \"golden\"-'user' --namespace gol\"den-ns\"", 1)
    path = tmp_path / "spelled.yaml"
    path.write_text(spelled)
    env = {**_env(), "MANIFESTO": f"{shlex.quote(sys.executable)} -m manifesto", "MANIFESTO_SOURCE_COMMIT": "off"}
    printed = subprocess.run([sys.executable, "-m", "manifesto", "regen", "--print-command", str(path)],
                             cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == regenerate_command(golden)  # the canonical spelling
    for command in (printed.stdout, regenerate_command(spelled)):
        ran = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, env=env,
                             timeout=120)
        assert (ran.returncode, ran.stdout) == (0, golden), ran.stderr
    regen = subprocess.run([sys.executable, "-m", "manifesto", "regen", str(path)], cwd=tmp_path,
                           capture_output=True, text=True, env=env, timeout=120)
    assert regen.returncode == 1 and "\n-#     --user \"golden\"-'user' --namespace gol\"den-ns\"\n" in regen.stdout


def test_every_artifact_regenerates_from_a_wheel(tmp_path):
    """A wheel of this checkout, installed into a virtual environment of its own (no source
    tree, no git, so no checkout note), regenerates every committed artifact and golden."""
    import shutil

    uv = shutil.which("uv")
    if uv is None:
        if os.environ.get("CI") == "true":
            pytest.fail("uv is not on PATH (.ci/run installs it)")
        pytest.skip("uv is not on PATH")
    env = {k: v for k, v in _env().items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT"))}
    dist, venv = tmp_path / "dist", tmp_path / "venv"
    built = subprocess.run([uv, "build", "--wheel", "--out-dir", str(dist), str(REPO)], cwd=tmp_path,
                           capture_output=True, text=True, env=env, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel, = dist.glob("llm_manifesto-*.whl")
    made = subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    python = venv / "bin" / "python"
    installed = subprocess.run([uv, "pip", "install", "--quiet", "--python", str(python), str(wheel)],
                               capture_output=True, text=True, env=env, timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    work = tmp_path / "work"
    work.mkdir()
    where = subprocess.run([str(python), "-c", "import manifesto; print(manifesto.__file__)"], cwd=work,
                           capture_output=True, text=True, env=env, timeout=60)
    assert Path(where.stdout.strip()).resolve().is_relative_to(venv), where.stdout + where.stderr
    loop = subprocess.run([str(python), "-c", _LOOP, *map(str, ARTIFACTS)], cwd=work, capture_output=True,
                          text=True, env=env, timeout=600)
    assert loop.returncode == 0, loop.stderr[-2000:]
    codes = json.loads(loop.stdout)
    assert {path: result for path, result in codes.items() if result[0] != 0} == {}
    assert len(codes) == len(ARTIFACTS) >= 50
    assert os.listdir(work) == []
