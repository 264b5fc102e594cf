"""Damaged caches, killed builds, concurrent builds and reproducible bytes."""

from __future__ import annotations

import signal
import time

import pytest
from buildkit import PAIRS, Runner, artifacts, expected_artifacts, make_tree, write_files
from store_kit import edit_body

pytestmark = pytest.mark.integration  # every test here starts a process

MANY = {f"models/many/spec{i:02d}.yaml": f"release: r{i}\n" for i in range(12)}


@pytest.fixture
def run(tmp_path):
    return Runner(make_tree(tmp_path / "tree"), tmp_path / "renders.log")


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_a_damaged_manifest_is_a_miss_with_a_warning(run, damage):
    run("build")
    state = run.root / "out/.cache/state"
    blob = state.read_bytes()
    state.write_bytes({"truncate": blob[: len(blob) // 2], "garbage": b"\x00garbage" * 50, "empty": b""}[damage])
    proc = run("build")
    warning, *work = proc.stderr.splitlines()
    assert warning == f"warning: {state}: corrupt build cache, ignoring it (this build re-checks every pair)"
    assert work and all(line.startswith(("rendered    out/", "skipped     4 pairs")) for line in work)
    assert proc.stdout == "8 rendered, 0 up to date, 4 skipped, 0 failed\n"
    assert run("build", "--check").returncode == 0
    assert run("build").stderr == ""


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_task_entry_is_rebuilt_with_a_warning(run, damage):
    run("build")
    run.renders()
    artifact = run.root / "out/gpu/qwen/aggregated.yaml"
    good = artifact.read_bytes()
    artifact.unlink()
    entries = [p for p in (run.root / "out/.cache/tasks").rglob("*") if p.is_file()]
    for entry in entries:  # damage every entry: the one the restore needs is among them
        if damage == "truncate":
            entry.write_bytes(entry.read_bytes()[:-7])
        else:  # beneath the compression, which would otherwise catch it first
            edit_body(entry, lambda body: body.replace(b"release", b"relaese"))
    proc = run("build")
    if damage == "truncate":  # under the MAC: not ours, a quiet miss
        work = proc.stderr
    else:
        warning, _, work = proc.stderr.partition("\n")
        reason = "content does not match its digest"
        assert warning in {f"warning: {entry}: corrupt cache entry ({reason}); rebuilding it" for entry in entries}
    assert work == "rendered    out/gpu/qwen/aggregated.yaml\n"  # the build names what it wrote
    assert run.renders() == [("qwen/aggregated.yaml", "gpu")]
    assert artifact.read_bytes() == good


@pytest.mark.parametrize("jobs", ["1", "2"], ids=["jobs1", "jobs2"])
def test_a_build_killed_mid_way_leaves_no_partial_artifact(tmp_path, jobs):
    run = Runner(make_tree(tmp_path / "tree", MANY), tmp_path / "renders.log")
    proc = run.popen("build", "--jobs", jobs, FAKE_RENDER_SLEEP="150")
    deadline = time.monotonic() + 60
    while len(artifacts(run.root)) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    survivors = artifacts(run.root)
    assert 3 <= len(survivors) < len(expected_artifacts()) + 24
    time.sleep(0.5)  # orphaned workers (jobs 2) finish their batch and exit
    run("build")
    final = artifacts(run.root)
    partial = {p for p in survivors if p not in final or final[p] != survivors[p]}
    assert partial <= {p for p in survivors if p.rsplit("/", 1)[-1].startswith(".")}  # only temporary files
    assert not any(p.rsplit("/", 1)[-1].startswith(".") for p in final)
    assert run("build", "--check").returncode == 0


def test_two_concurrent_builds_leave_a_consistent_out(tmp_path):
    run = Runner(make_tree(tmp_path / "tree", MANY), tmp_path / "renders.log")
    procs = [run.popen("build", "--jobs", "1", FAKE_RENDER_SLEEP="20") for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert len(run.renders()) == len(PAIRS) + 3 * len(MANY)  # each pair rendered once in all
    assert run("build", "--check").returncode == 0
    reference = Runner(make_tree(tmp_path / "reference", MANY), tmp_path / "reference.log")
    reference("build")
    assert artifacts(run.root) == artifacts(reference.root)


def test_two_checkouts_with_different_hash_seeds_give_byte_identical_out(tmp_path):
    trees = []
    for name, seed, jobs in (("one", "1", "1"), ("elsewhere/two", "4242", "2")):
        run = Runner(make_tree(tmp_path / name), tmp_path / f"{name.replace('/', '-')}.log")
        run("build", "--jobs", jobs, PYTHONHASHSEED=seed)
        trees.append(artifacts(run.root))
    assert trees[0] == trees[1]
    assert set(trees[0]) == expected_artifacts()
    assert not any(str(tmp_path).encode() in text for text in trees[0].values())


def test_a_failing_pair_does_not_stop_the_others(run):
    write_files(run.root, {"models/qwen/broken.yaml": "release: b\nfail: roles[0].tp must be positive\n"})
    report = run.build_json(check=False)
    failed = [r for r in report["pairs"] if r["status"] == "failed"]
    assert [(r["model"], r["cluster"], r["message"]) for r in failed] == [
        ("//models/qwen:broken", c, "broken.yaml:2:1: fail: roles[0].tp must be positive") for c in ("gpu", "hopper", "slurm")
    ]
    assert report["summary"] == {"rendered": 8, "up_to_date": 0, "skipped": 4, "failed": 3}
    proc = run("build", check=False)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == "error: //models/qwen:broken @ gpu: broken.yaml:2:1: fail: roles[0].tp must be positive"


def test_an_error_that_lists_its_inputs_is_cached_like_an_artifact(run):
    write_files(run.root, {"models/qwen/broken.yaml": "release: b\nfail: no\n"})
    assert run("build", check=False).returncode == 1
    run.renders()
    proc = run("build", check=False)
    assert (proc.returncode, run.renders()) == (1, [])  # still failing, not rendered again
    assert proc.stdout == "0 rendered, 8 up to date, 4 skipped, 3 failed\n"
    write_files(run.root, {"models/qwen/broken.yaml": "release: fixed\n"})
    assert run("build").stdout == "3 rendered, 8 up to date, 4 skipped, 0 failed\n"


def test_an_error_without_inputs_is_retried_every_build(run):
    write_files(run.root, {"models/qwen/orphan.yaml": "extends: nowhere.yaml\n"})
    run("build", check=False)
    run.renders()
    for _ in range(2):
        proc = run("build", check=False)
        assert proc.returncode == 1
        assert run.renders() == [("qwen/orphan.yaml", c) for c in ("gpu", "hopper", "slurm")]
    assert proc.stderr.splitlines()[0] == "error: //models/qwen:orphan @ gpu: nowhere.yaml: extends parent not found"


def test_an_incompatible_pair_without_inputs_follows_the_files_its_spec_names(tmp_path):
    run = Runner(make_tree(tmp_path / "tree"), tmp_path / "renders.log", {"FAKE_NO_INPUTS": "1"})
    run("build")
    assert run("deps", "//models/wide:1p1d", "--cluster", "hopper").stdout.splitlines() == [
        "clusters/hopper.yaml", "models/wide/1p1d.yaml", "models/wide/wide-base.yaml",
    ]
    run.renders()
    write_files(run.root, {"models/wide/2p1d.yaml": "extends: wide-base.yaml\nrelease: two-b\n"})
    run("build")
    assert run.renders() == [("wide/2p1d.yaml", c) for c in ("gpu", "hopper", "slurm")]
    write_files(run.root, {"models/wide/wide-base.yaml": "accelerator: gb200\nimage: v7\n"})
    run("build")
    assert [p for p in run.renders() if p[1] == "hopper"] == [("wide/1p1d.yaml", "hopper"), ("wide/2p1d.yaml", "hopper")]


def test_an_artifact_that_cannot_be_written_fails_only_its_pair(run):
    write_files(run.root, {"out/gpu": "a file where a directory should be\n"})
    report = run.build_json(check=False)
    failed = [r for r in report["pairs"] if r["status"] == "failed"]
    assert [r["cluster"] for r in failed] == ["gpu"] * 4
    assert all(r["message"] == "cannot store the result: out/gpu is a file, expected a directory; remove it"
               for r in failed), failed
    assert report["summary"] == {"rendered": 4, "up_to_date": 0, "skipped": 4, "failed": 4}


def test_temporary_files_a_killed_build_left_are_removed_by_the_next_build(run):
    """SIGKILL between writing a temporary file and renaming it leaves `.NAME.*.tmp~` behind,
    in out/.cache (the manifest's) and in the task shards; the next build removes them,
    even one with nothing to render."""
    run("build", "//::")
    cache = run.root / "out/.cache"
    shard = next(p for p in (cache / "tasks").iterdir() if p.is_dir())
    leftovers = [cache / ".state.k1ll3d.tmp~", shard / f".{shard.name}abc.x1y2.tmp~"]
    for path in leftovers:
        path.write_bytes(b"half")
    keep = cache / "notes.txt"
    keep.write_text("not ours to delete\n")
    proc = run("build", "//::")
    assert proc.stdout == "0 rendered, 8 up to date, 4 skipped, 0 failed\n"
    assert [p for p in leftovers if p.exists()] == [] and keep.exists()
