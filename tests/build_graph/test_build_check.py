"""``build --check``: names every stale, hand-edited, missing or orphaned artifact, writes nothing."""

from __future__ import annotations

import shutil

import pytest
from buildkit import Runner, artifacts, make_tree, write_files

pytestmark = pytest.mark.integration  # every test here starts a process

FIX = "To fix this, run: manifesto build //::"


@pytest.fixture
def built(tmp_path):
    run = Runner(make_tree(tmp_path / "tree"), tmp_path / "renders.log")
    run("build")
    run.renders()
    return run


def check(run, *args):
    before = artifacts(run.root)
    proc = run("build", "--check", *args, check=False)
    assert artifacts(run.root) == before  # --check never writes out/
    return proc


def test_check_passes_on_a_fresh_out(built):
    proc = check(built)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "0 rendered, 8 up to date, 4 skipped, 0 failed; check: 0 problems\n"


def test_check_names_artifacts_made_stale_by_an_input(built):
    write_files(built.root, {"clusters/slurm.yaml": "accelerators: gb200 h200\nplatform: slurm\npartition: x\n"})
    proc = check(built)
    assert proc.returncode == 1
    stale = ["out/slurm/qwen/aggregated.sbatch", "out/slurm/wide/1p1d.sbatch", "out/slurm/wide/2p1d.sbatch"]
    assert proc.stderr.splitlines() == [f"{p}: stale: its inputs changed since it was built" for p in stale] + [FIX]


def test_check_names_a_hand_edited_artifact(built):
    path = built.root / "out/gpu/qwen/laguna.yaml"
    path.write_text(path.read_text() + "# tweak\n")
    proc = check(built)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["out/gpu/qwen/laguna.yaml: hand-edited: differs from what the build wrote", FIX]


def test_check_names_missing_and_orphaned_artifacts(built):
    (built.root / "out/hopper/qwen/aggregated.yaml").unlink()
    write_files(built.root, {"out/gpu/gone/old.yaml": "x: 1\n"})
    proc = check(built, "//::")
    assert proc.stderr.splitlines() == [
        "out/gpu/gone/old.yaml: not produced by any target (a stale artifact of a removed target)",
        "out/hopper/qwen/aggregated.yaml: missing",
        FIX,
    ]


def test_check_of_a_fresh_checkout_renders_in_memory(built, tmp_path):
    """CI: a clone has the committed out/ but no cache."""
    clone = tmp_path / "clone"
    shutil.copytree(built.root, clone, ignore=shutil.ignore_patterns(".cache", ".lock"))
    run = Runner(clone, tmp_path / "clone.log")
    assert check(run).returncode == 0
    write_files(clone, {"models/qwen/aggregated.yaml": "release: qwen2\n"})
    shutil.rmtree(clone / "out/.cache")
    proc = check(run)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[:3] == [
        f"out/{c}/qwen/aggregated.{s}: differs from what its inputs render (hand-edited or stale)"
        for c, s in (("gpu", "yaml"), ("hopper", "yaml"), ("slurm", "sbatch"))
    ]


def test_check_then_build_fixes_everything(built):
    write_files(built.root, {"models/wide/wide-base.yaml": "accelerator: gb200\nimage: v5\n"})
    assert check(built).returncode == 1
    built("build")
    assert check(built).returncode == 0


def test_the_stale_diagnosis_is_the_same_on_every_run(built):
    """Issue 15: a second --check said "hand-edited" for artifacts nobody touched, since the
    first one recorded the new render as if the build had written it."""
    write_files(built.root, {"models/qwen/aggregated.yaml": "release: qwen2\n"})
    stale = [f"out/{c}/qwen/aggregated.{s}: stale: its inputs changed since it was built"
             for c, s in (("gpu", "yaml"), ("hopper", "yaml"), ("slurm", "sbatch"))]
    for _ in range(3):
        proc = check(built)
        assert (proc.returncode, proc.stderr.splitlines()) == (1, stale + [FIX])
    hand = built.root / "out/hopper/qwen/aggregated.yaml"
    hand.write_text(hand.read_text() + "# tweak\n")
    for _ in range(2):
        proc = check(built)
        assert proc.stderr.splitlines() == [
            stale[0], "out/hopper/qwen/aggregated.yaml: hand-edited: differs from what the build wrote", stale[2], FIX]
    built("build")
    assert check(built).returncode == 0


def test_the_fix_the_check_prints_runs_as_printed_and_fixes_it(built):
    """The hint is a command line that works: run as printed, the next check passes."""
    import shlex

    path = built.root / "out/gpu/qwen/laguna.yaml"
    path.write_text(path.read_text() + "# tweak\n")
    (built.root / "out/hopper/qwen/aggregated.yaml").unlink()
    hint = check(built).stderr.splitlines()[-1]
    assert hint == FIX
    words = shlex.split(hint.removeprefix("To fix this, run: "))
    assert words[0] == "manifesto"
    built(*words[1:])
    assert check(built).returncode == 0
