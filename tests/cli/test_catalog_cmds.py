"""config export / import / edit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from kit import run_cli, scrub

pytestmark = pytest.mark.integration  # every test here starts a process


def _env(tmp_path, **extra):
    return {"MANIFESTO_CONFIG_HOME": str(tmp_path / "home"), "MANIFESTO_NO_CACHE": "1", **extra}


def test_export_flattens_extends_and_import_installs(tmp_path):
    out = tmp_path / "flat.yaml"
    proc = run_cli("config", "export", "models", "deepseek-v4/1P-EP8-1D-EP8", "-o", str(out), env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = yaml.safe_load(out.read_text())
    assert "extends" not in data and {r["name"] for r in data["roles"]} == {"decode", "prefill"}
    again = run_cli("config", "export", "models", "deepseek-v4/1P-EP8-1D-EP8", "-o", str(out), env=_env(tmp_path))
    assert again.returncode == 1
    assert scrub(again.stderr, tmp_path) == \
        "error: output file <tmp>/flat.yaml already exists; pass --force to overwrite it\n"

    proc = run_cli("config", "import", "models", str(out), "--name", "experiments/ds", env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    listed = run_cli("config", "list", "models", "--output", "name", env=_env(tmp_path))
    assert "experiments/ds" in listed.stdout.split()
    # The flattened copy renders exactly like the original.
    args = ("--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
    a = run_cli("render", "manifest", "experiments/ds", *args, env=_env(tmp_path))
    b = run_cli("render", "manifest", "deepseek-v4/1P-EP8-1D-EP8", *args, env=_env(tmp_path))
    body = lambda text: text[text.index("\n---\n"):]
    assert a.returncode == b.returncode == 0 and body(a.stdout) == body(b.stdout)


def test_import_rejects_invalid_and_extending_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("release: x\nmodel: {id: a/b}\nroles:\n  - name: d\n    parallelism: {tpp: 1}\n")
    proc = run_cli("config", "import", "models", str(bad), "--name", "x", env=_env(tmp_path), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == "error: bad.yaml:5:19: roles[0].parallelism.tpp: unknown key 'tpp' (did you mean 'tp'?)\n"
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nrelease: y\n")
    proc = run_cli("config", "import", "models", str(child), "--name", "y", env=_env(tmp_path), cwd=tmp_path)
    assert proc.returncode == 1
    assert scrub(proc.stderr, tmp_path) == ("error: <tmp>/child.yaml:1:1: import takes a self-contained spec; "
                                            "flatten it first with `manifesto config export`\n")
    assert not (tmp_path / "home").exists()


def _editor(tmp_path, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n" + body)
    return f"{sys.executable} {script}"


def test_edit_copies_bundled_entry_with_its_parents(tmp_path):
    editor = _editor(tmp_path, "p.write_text(p.read_text().replace('replicas: 3', 'replicas: 2'))\n")
    proc = run_cli("config", "edit", "models", "deepseek-v4/3P-EP8-1D-EP16", env=_env(tmp_path, EDITOR=editor))
    assert proc.returncode == 0, proc.stderr
    home = tmp_path / "home" / "models" / "deepseek-v4"
    assert (home / "3P-EP8-1D-EP16.yaml").is_file() and (home / "wide-ep-base.yaml").is_file()
    assert "replicas: 2" in (home / "3P-EP8-1D-EP16.yaml").read_text()
    repo = Path(__file__).resolve().parents[2]
    assert "replicas: 3" in (repo / "models/deepseek-v4/3P-EP8-1D-EP16.yaml").read_text()


def test_edit_keeps_an_invalid_file_and_says_so(tmp_path):
    editor = _editor(tmp_path, "p.write_text('release: x\\nmodel: {id: a/b}\\nroles: []\\n')\n")
    proc = run_cli("config", "edit", "models", "brand/new", env=_env(tmp_path, EDITOR=editor), cwd=tmp_path)
    assert proc.returncode == 1
    assert scrub(proc.stderr, tmp_path) == (
        "new model <tmp>/home/models/brand/new.yaml, from a skeleton\n"
        "error: <tmp>/home/models/brand/new.yaml was kept but does not validate; run the same command to fix it:\n"
        "error: home/models/brand/new.yaml:3:1: roles: must not be empty\n")
    assert (tmp_path / "home" / "models" / "brand" / "new.yaml").is_file()


@pytest.mark.parametrize("kind", ["models", "clusters", "routing"])
def test_edit_of_a_new_name_opens_a_commented_skeleton_that_validates(tmp_path, kind):
    seen = tmp_path / "seen.yaml"
    editor = _editor(tmp_path, f"pathlib.Path({str(seen)!r}).write_text(p.read_text())\n")  # saved unchanged
    proc = run_cli("config", "edit", kind, "brand/New_One", env=_env(tmp_path, EDITOR=editor), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "home" / kind / "brand" / "New_One.yaml"
    what = {"models": "model", "clusters": "cluster", "routing": "routing profile"}[kind]
    assert proc.stderr == f"new {what} {path}, from a skeleton\n{path} is valid\n"
    text = seen.read_text()
    assert text.startswith("# A new ") and text == path.read_text()
    if kind != "routing":
        assert ": new-one" in text  # release / name from the entry's name
