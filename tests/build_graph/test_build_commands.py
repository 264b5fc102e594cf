"""``list``, ``deps``, ``dependents``, ``matrix``, ``clean``, addresses and ``--cluster``."""

from __future__ import annotations

import json

import pytest
from buildkit import Runner, artifacts, make_tree
from kit import cli_in_process

pytestmark = pytest.mark.integration  # every test here starts a process

MODELS = ["//models/qwen:aggregated", "//models/qwen:laguna", "//models/wide:1p1d", "//models/wide:2p1d"]


@pytest.fixture
def run(tmp_path):
    return Runner(make_tree(tmp_path / "tree"), tmp_path / "renders.log")


LISTS = {
    "everything": ("//::", ["//clusters:gpu", "//clusters:hopper", "//clusters:slurm", *MODELS, "//routing:pick"]),
    "everything-dots": ("//...", ["//clusters:gpu", "//clusters:hopper", "//clusters:slurm", *MODELS, "//routing:pick"]),
    "recursive": ("//models::", MODELS),
    "recursive-dots": ("//models/...", MODELS),
    "directory": ("//models/qwen:", MODELS[:2]),
    "directory-all": ("//models/qwen:all", MODELS[:2]),
    "one": ("//models/wide:1p1d", MODELS[2:3]),
    "no-suffix": ("//models/qwen:laguna", MODELS[1:2]),
    "path": ("models/qwen/laguna", MODELS[1:2]),
    "cluster": ("//clusters:hopper", ["//clusters:hopper"]),
}


@pytest.mark.parametrize("address, expected", list(LISTS.values()), ids=list(LISTS))
def test_list_resolves_addresses(run, address, expected):
    assert run("list", address).stdout.splitlines() == expected


UNKNOWN = {
    "target": ("//models/qwen:lagna", "unknown target //models/qwen:lagna (did you mean '//models/qwen:laguna'?)"),
    "directory": ("//models/qwn:", "unknown target //models/qwn: (did you mean '//models/qwen:'?)"),
    "tree": ("//modls::", "unknown target //modls:: (did you mean '//models::'?)"),
    "no-colon": ("//models/qwen", "'//models/qwen' is not an address: add ':NAME', ':' (the directory) or '::' (recursive)"),
    "base-file": ("models/wide/wide-base.yaml",
                  "models/wide/wide-base.yaml is not a build target (BUILD.yaml's sources do not include it)"),
    "dotdot": ("//models/../x:y", "'//models/../x:y' is not an address: the directory must be a plain path below the build root"),
}


@pytest.mark.parametrize("address, message", list(UNKNOWN.values()), ids=list(UNKNOWN))
def test_unknown_addresses_fail_with_a_suggestion(run, address, message):
    proc = run("build", address, check=False)
    assert (proc.returncode, proc.stderr) == (1, f"error: {message}\n")
    assert not (run.root / "out").exists()


def test_a_cluster_address_builds_every_pair_against_it(run):
    report = run.build_json("//clusters:hopper")
    assert [(r["model"], r["status"]) for r in report["pairs"]] == [
        (MODELS[0], "rendered"), (MODELS[1], "skipped"), (MODELS[2], "skipped"), (MODELS[3], "skipped"),
    ]
    assert set(artifacts(run.root)) == {"hopper/qwen/aggregated.yaml"}


def test_cluster_filter_and_explicit_incompatible_pairs(run):
    report = run.build_json("//models/qwen::", "--cluster", "hopper")
    assert [(r["model"], r["cluster"], r["status"]) for r in report["pairs"]] == [
        (MODELS[0], "hopper", "rendered"), (MODELS[1], "hopper", "skipped"),
    ]
    proc = run("build", "//models/qwen:laguna", "--cluster", "hopper", check=False)
    assert proc.returncode == 1
    assert proc.stderr == ("error: //models/qwen:laguna @ hopper: qwen/laguna: "
                           "the spec pins accelerator 'b200' but cluster 'hopper' offers h200\n")
    assert proc.stdout == "0 rendered, 0 up to date, 0 skipped, 1 failed\n"


def test_an_unknown_cluster_filter_is_an_error(run):
    proc = run("build", "--cluster", "hoper", check=False)
    assert (proc.returncode, proc.stderr) == (1, "error: --cluster: unknown cluster 'hoper' (did you mean 'hopper'?)\n")


def test_a_pair_missing_from_build_yaml_is_an_error(tmp_path):
    buildfile = (make_tree(tmp_path / "t") / "BUILD.yaml").read_text()
    buildfile += "    clusters: [gpu, '//clusters:slurm']\n"
    run = Runner(make_tree(tmp_path / "tree", {"BUILD.yaml": buildfile}), tmp_path / "log")
    assert run("list", "//models/qwen:laguna").returncode == 0
    proc = run("build", "//models/qwen:laguna", "--cluster", "hopper", check=False)
    assert proc.stderr == "error: //models/qwen:laguna is not built for cluster hopper (BUILD.yaml gives it: gpu, slurm)\n"


def test_deps_lists_every_file_the_renders_read(run):
    assert run("deps", "//models/wide:1p1d").stdout.splitlines() == [
        "clusters/gpu.yaml", "clusters/hopper.yaml", "clusters/slurm.yaml",
        "models/wide/1p1d.yaml", "models/wide/wide-base.yaml",
    ]
    assert not (run.root / "out/gpu").exists()  # deps renders in memory only


def test_dependents_lists_the_artifacts_a_file_feeds(run):
    assert run("dependents", "models/wide/wide-base.yaml").stdout.splitlines() == [
        "out/gpu/wide/1p1d.yaml", "out/gpu/wide/2p1d.yaml", "out/slurm/wide/1p1d.sbatch", "out/slurm/wide/2p1d.sbatch",
    ]
    assert run("dependents", "clusters/hopper.yaml").stdout.splitlines() == ["out/hopper/qwen/aggregated.yaml"]


def test_matrix_github_lists_renderable_pairs_and_reports_skips(run):
    proc = run("matrix", "//models/qwen::", "--format", "github")
    assert json.loads(proc.stdout) == {"include": [
        {"model": MODELS[0], "cluster": "gpu"},
        {"model": MODELS[0], "cluster": "hopper"},
        {"model": MODELS[0], "cluster": "slurm"},
        {"model": MODELS[1], "cluster": "gpu"},
    ]}
    assert proc.stderr.splitlines() == [
        f"skipped: {MODELS[1]} @ hopper: qwen/laguna: the spec pins accelerator 'b200' but cluster 'hopper' offers h200",
        f"skipped: {MODELS[1]} @ slurm: qwen/laguna: the spec pins accelerator 'b200' but cluster 'slurm' offers gb200, h200",
    ]


def test_many_skipped_pairs_are_counted_on_one_line_and_named_on_request(run):
    """More than three incompatible pairs: `matrix --format github` and `build` count them on
    one line; `build --explain` names each with its reason."""
    named = [line for line in run("build", "--explain").stderr.splitlines() if line.startswith("skipped")]
    assert len(named) == 4 and all(line.startswith("skipped     //models/") for line in named)
    assert f"skipped     {MODELS[1]} @ hopper: qwen/laguna: the spec pins accelerator 'b200' but cluster 'hopper' " \
           "offers h200" in named
    again = run("build", "--explain").stderr.splitlines()  # a no-op build: the pairs an earlier one found
    assert [line for line in again if line.startswith("skipped")] == named
    assert run("build").stderr == ""  # a no-op without --explain names nothing
    proc = run("matrix", "--format", "github")
    assert proc.stderr.splitlines() == [
        "skipped: 4 pairs whose cluster cannot run the model as written, of 3 models "
        "(`manifesto matrix --format json` gives each reason)"]


def test_matrix_json_gives_status_artifact_and_reason(run):
    rows = json.loads(run("matrix", "//models/qwen:laguna").stdout)
    assert rows == [
        {"model": MODELS[1], "cluster": "gpu", "status": "ok", "artifact": "out/gpu/qwen/laguna.yaml"},
        {"model": MODELS[1], "cluster": "hopper", "status": "skipped",
         "reason": "qwen/laguna: the spec pins accelerator 'b200' but cluster 'hopper' offers h200"},
        {"model": MODELS[1], "cluster": "slurm", "status": "skipped",
         "reason": "qwen/laguna: the spec pins accelerator 'b200' but cluster 'slurm' offers gb200, h200"},
    ]


def test_clean_removes_the_cache_and_with_all_the_artifacts(run):
    run("build")
    assert run("clean").stdout == "removed 1 path\n  out/.cache\n"
    assert set(artifacts(run.root))
    run("build")
    run("clean", "--all")
    assert artifacts(run.root) == {}
    assert not (run.root / "out/.cache").exists()


def test_no_build_yaml_is_an_error(tmp_path):
    proc = Runner(tmp_path, tmp_path / "log")("build", check=False)
    assert (proc.returncode, proc.stderr) == (1, f"error: no BUILD.yaml in {tmp_path.resolve()} or any parent directory\n")


def test_commands_work_from_a_subdirectory(run):
    sub = Runner(run.root / "models" / "qwen", run.log)
    assert sub("list", "laguna").stdout == "//models/qwen:laguna\n"
    sub("build", "//models/qwen:laguna", "--cluster", "gpu")
    assert (run.root / "out/gpu/qwen/laguna.yaml").is_file()


def test_a_progress_line_is_drawn_only_on_a_terminal(run):
    import os
    import pty
    import subprocess

    master, slave = pty.openpty()
    proc = subprocess.Popen(run.argv("build", "--jobs", "1"), cwd=run.root, env=run.env,
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    stdout, _ = proc.communicate(timeout=120)
    terminal = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        terminal += chunk
    os.close(master)
    assert stdout == b"8 rendered, 0 up to date, 4 skipped, 0 failed\n"
    assert b"\r\x1b[K[ 1/12] //models/qwen:aggregated @ gpu" in terminal
    # The progress line is erased, then the build names its work on lines that stay.
    progress, _, after = terminal.rpartition(b"\r\x1b[K")
    assert progress and after.startswith(b"rendered    out/gpu/qwen/aggregated.yaml")
    assert b"\x1b" not in after
    run("clean")
    assert "\x1b" not in run("build").stderr  # not a terminal: no progress


def test_build_names_its_work_and_q_keeps_quiet(run):
    proc = run("build")
    lines = proc.stderr.splitlines()
    assert [line for line in lines if line.startswith("rendered")] == [
        "rendered    out/gpu/qwen/aggregated.yaml", "rendered    out/gpu/qwen/laguna.yaml",
        "rendered    out/gpu/wide/1p1d.yaml", "rendered    out/gpu/wide/2p1d.yaml",
        "rendered    out/hopper/qwen/aggregated.yaml", "rendered    out/slurm/qwen/aggregated.sbatch",
        "rendered    out/slurm/wide/1p1d.sbatch", "rendered    out/slurm/wide/2p1d.sbatch"]
    # Four incompatible pairs: more than the three named one by one, so one line counts them.
    assert [line for line in lines if line.startswith("skipped")] == [
        "skipped     4 pairs whose cluster cannot run the model as written, of 3 models "
        "(`manifesto build --explain` names each and why)"]
    assert run("build").stderr == ""  # nothing done: nothing to name
    assert run("build", "//models/qwen:aggregated", "--cluster", "gpu").stderr == \
        "up to date  out/gpu/qwen/aggregated.yaml\n"
    (run.root / "models/qwen/aggregated.yaml").write_text("release: qwen-2\n")
    (run.root / "models/wide/2p1d.yaml").unlink()
    quiet = run("build", "-q")
    assert (quiet.stderr, quiet.stdout) == ("", "3 rendered, 3 up to date, 3 skipped, 0 failed, 2 pruned\n")
    (run.root / "models/qwen/aggregated.yaml").write_text("release: qwen-3\n")
    loud = run("build")
    assert loud.stderr.splitlines() == ["rendered    out/gpu/qwen/aggregated.yaml",
                                        "rendered    out/hopper/qwen/aggregated.yaml",
                                        "rendered    out/slurm/qwen/aggregated.sbatch"]
    assert run("build", "--output", "json").stderr == ""


def test_the_main_cli_mounts_the_build_commands(run):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "manifesto", "build", "//models/qwen:aggregated", "--cluster", "gpu"],
                          cwd=run.root, env=run.env, capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, "1 rendered, 0 up to date, 0 skipped, 0 failed\n"), proc.stderr
    lst = subprocess.run([sys.executable, "-m", "manifesto", "list", "//clusters:"], cwd=run.root, env=run.env,
                         capture_output=True, text=True)
    assert lst.stdout.splitlines() == ["//clusters:gpu", "//clusters:hopper", "//clusters:slurm"]


def test_matrix_v_names_every_skipped_pair(monkeypatch, bundled_workspace):
    """The bundled workspace: `//models/qwen:` has five incompatible pairs, counted on one
    line, each named with its reason under `-v` (manifesto's own command line)."""
    monkeypatch.chdir(bundled_workspace)
    quiet = cli_in_process("matrix", "//models/qwen:", "--format", "github")
    assert quiet.stderr.splitlines() == [
        "skipped: 5 pairs whose cluster cannot run the model as written, of 2 models "
        "(`manifesto matrix --format json` gives each reason)"]
    loud = cli_in_process("matrix", "//models/qwen:", "--format", "github", "-v")
    assert loud.stdout == quiet.stdout and json.loads(loud.stdout)["include"]
    lines = loud.stderr.splitlines()
    assert len(lines) == 5 and all(line.startswith("skipped: //models/qwen:") for line in lines)
    assert "skipped: //models/qwen:qwen3-0.6b @ example-h200: models/qwen/qwen3-0.6b.yaml:15:1: accelerator: 'b200' " \
           "is not offered by cluster 'example-h200'; it offers: h200" in lines
