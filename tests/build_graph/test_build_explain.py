"""``build --explain``: each re-rendered artifact says what changed (an input file, the
code or the options), on its line in text and as ``why`` in JSON."""

from __future__ import annotations

import pytest
from buildkit import Runner, make_tree, write_files

pytestmark = pytest.mark.integration  # every test here starts a process


@pytest.fixture
def built(tmp_path):
    root = make_tree(tmp_path / "tree", {"code.py": "VERSION = 1\n"})
    run = Runner(root, tmp_path / "renders.log", {"FAKE_CODE_FILE": str(root / "code.py")})
    run("build")
    return run


def rendered_lines(proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("rendered")]


def test_explain_names_the_input_file_that_changed(built):
    write_files(built.root, {"models/wide/wide-base.yaml": "accelerator: gb200\nimage: v9\n"})
    proc = built("build", "--explain")
    assert rendered_lines(proc) == [
        f"rendered    out/{c}/wide/{m}.{s}  (models/wide/wide-base.yaml changed)"
        for c, s in (("gpu", "yaml"), ("slurm", "sbatch")) for m in ("1p1d", "2p1d")]


def test_explain_names_a_changed_option_and_json_carries_it(built):
    buildfile = built.root / "BUILD.yaml"
    buildfile.write_text(buildfile.read_text().replace("namespace: test-ns", "namespace: other-ns"))
    report = built.build_json()
    whys = {(r["model"], r["cluster"]): r.get("why") for r in report["pairs"] if r["status"] == "rendered"}
    assert len(whys) == 8
    assert set(whys.values()) == {"options changed: namespace"}


def test_explain_names_the_code_and_a_missing_artifact(built):
    write_files(built.root, {"code.py": "VERSION = 2\n"})
    proc = built("build", "--explain")
    assert len(rendered_lines(proc)) == 8
    assert {line.rsplit("  ", 1)[1] for line in rendered_lines(proc)} == {"(the code changed)"}
    (built.root / "out/gpu/qwen/laguna.yaml").unlink()
    proc = built("build", "--explain")
    assert rendered_lines(proc) == [
        "rendered    out/gpu/qwen/laguna.yaml  (out/gpu/qwen/laguna.yaml was missing or not what the build wrote)"]


def test_without_explain_the_lines_stay_short(built):
    write_files(built.root, {"models/qwen/laguna": "release: laguna2\naccelerator: b200\n"})
    assert rendered_lines(built("build")) == ["rendered    out/gpu/qwen/laguna.yaml"]
