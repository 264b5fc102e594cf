"""Incremental builds through the real CLI: exactly the affected pairs re-render."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from buildkit import BUILD_YAML as TREE_BUILD
from buildkit import PAIRS, Runner, artifacts, expected_artifacts, make_tree, pairs_where, write_files

pytestmark = pytest.mark.integration  # every test here starts a process

ALL = sorted(PAIRS)


@pytest.fixture
def run(tmp_path):
    root = make_tree(tmp_path / "tree")
    return Runner(root, tmp_path / "renders.log", {"FAKE_CODE_FILE": str(root / "code.py")})


@pytest.fixture
def built(run):
    """The tree after one cold build."""
    write_files(run.root, {"code.py": "VERSION = 1\n"})
    run("build", "//::")
    run.renders()
    return run


def imported_modules(verbose_stderr: str) -> set[str]:
    """The modules a ``python -v`` run imported. (``-X importtime`` leaves out those imported
    through ``importlib.import_module``, as the build imports its renderer.)"""
    return set(re.findall(r"^import '([\w.]+)' #", verbose_stderr, re.M))


def address(model: str) -> str:
    """The address of a model path below models/ (``wide/1p1d.yaml`` -> ``//models/wide:1p1d``)."""
    directory, name = model.rsplit("/", 1)
    return f"//models/{directory}:{name.removesuffix('.yaml')}"


def test_cold_build_renders_every_pair_and_writes_the_layout(run):
    write_files(run.root, {"code.py": "VERSION = 1\n"})
    proc = run("build", "//::")
    assert proc.stdout == "8 rendered, 0 up to date, 4 skipped, 0 failed\n"
    assert run.renders() == ALL
    assert set(artifacts(run.root)) == expected_artifacts()


def test_noop_build_renders_nothing(built):
    proc = built("build", "//::")
    assert proc.stdout == "0 rendered, 8 up to date, 4 skipped, 0 failed\n"
    assert built.renders() == []


def test_noop_build_imports_no_yaml_parser_schema_library_or_renderer(tmp_path):
    # The code file in a folder of its own, made a minute ago: a folder changed since the code
    # was listed (out/ appearing beside the file), or too recently to trust, is listed again,
    # which imports the renderer (test_a_new_file_beside_the_code_is_listed_once_not_on_every_no_op).
    import os
    import time

    root = make_tree(tmp_path / "tree", {"code/code.py": "VERSION = 1\n"})
    old = time.time() - 60
    os.utime(root / "code", (old, old))
    run = Runner(root, tmp_path / "renders.log", {"FAKE_CODE_FILE": str(root / "code" / "code.py")})
    run("build", "//::")
    proc = run("build", "//::", python_flags=("-v",))
    imported = imported_modules(proc.stderr)
    assert proc.stdout.startswith("0 rendered")
    assert "manifesto.build_graph.engine" in imported  # the scan works
    for name in ("pydantic", "pydantic_core", "ruamel.yaml", "msgspec", "fake_renderer", "manifesto.load.yamlio",
                 "manifesto.tasks.pair"):
        assert name not in imported


def test_a_noop_through_the_main_cli_imports_no_other_command(built):
    """``manifesto build`` parses with the build commands alone: a no-op imports no other
    command's module, no catalog, pathlib or hashlib (``python -v`` lists every import)."""
    import sys

    proc = subprocess.run([sys.executable, "-v", "-m", "manifesto", "build", "//::"], cwd=built.root,
                          env=built.env, capture_output=True, text=True, check=True)
    imported = imported_modules(proc.stderr)
    assert proc.stdout == "0 rendered, 8 up to date, 4 skipped, 0 failed\n"
    assert {"manifesto.cli.parser", "manifesto.build_graph.engine"} <= imported  # the scan works
    cli = sorted(m for m in imported if m.startswith("manifesto.cli."))
    # the build commands' own module (in the build graph's package before issue 26) and the
    # shared flags it adds (-o); verbosity lives in the command's run, so no cli.common
    assert cli == ["manifesto.cli.build_cmds", "manifesto.cli.flags", "manifesto.cli.parser"]
    assert not imported & {"manifesto.load.catalog", "pathlib", "hashlib", "msgspec", "ruamel.yaml", "pydantic"}


def test_a_new_file_beside_the_code_is_listed_once_not_on_every_no_op(tmp_path):
    """A file appearing in a code directory (a __pycache__, an editor's backup) changes no
    digest. The build that notices it re-lists the code files (importing the renderer) and
    keeps the new listing, so the no-ops after it import no renderer again."""
    import os
    import time

    root = make_tree(tmp_path / "tree", {"code.py": "VERSION = 1\n"})
    run = Runner(root, tmp_path / "renders.log", {"FAKE_CODE_FILE": str(root / "code.py")})
    old = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (old, old))  # trusted signatures: no re-hash that would save the manifest anyway
    run("build", "//::")
    run("build", "//::")  # records the artifacts' trusted signatures
    write_files(root, {"code.py~": "VERSION = 0\n"})
    os.utime(root, (old + 30, old + 30))  # a new entry in code.py's directory, with a trusted mtime
    noticed, after = (run("build", "//::", python_flags=("-v",)) for _ in range(2))
    assert [p.stdout for p in (noticed, after)] == ["0 rendered, 8 up to date, 4 skipped, 0 failed\n"] * 2
    assert "fake_renderer" in imported_modules(noticed.stderr)
    assert "fake_renderer" not in imported_modules(after.stderr)
    assert run.renders() == ALL  # the cold build's, and none since


def test_editing_a_base_file_re_renders_exactly_the_specs_that_extend_it(built):
    write_files(built.root, {"models/wide/wide-base.yaml": "accelerator: gb200\nimage: v2\n"})
    report = built.build_json("//::")
    assert built.renders() == pairs_where(lambda m, c: m.startswith("wide/"))
    assert report["summary"] == {"rendered": 4, "up_to_date": 4, "skipped": 4, "failed": 0}
    assert "image: v2" in (built.root / "out/gpu/wide/1p1d.yaml").read_text()


def test_editing_a_cluster_re_renders_exactly_its_pairs(built):
    write_files(built.root, {"clusters/gpu.yaml": "accelerators: gb200 b200\nzone: a\n"})
    built("build", "//::")
    assert built.renders() == pairs_where(lambda m, c: c == "gpu")


def test_editing_an_unrelated_file_re_renders_nothing(built):
    write_files(built.root, {"models/README.md": "Other words.\n", "notes.txt": "x\n", "models/qwen/x-base.yaml": "a: 1\n"})
    built("build", "//::")
    assert built.renders() == []


def test_changing_the_code_fingerprint_re_renders_everything(built):
    stamps = {p: p.stat().st_mtime_ns for p in (built.root / "out").rglob("*.yaml")}
    write_files(built.root, {"code.py": "VERSION = 2\n"})
    proc = built("build", "//::")
    assert built.renders() == ALL
    assert proc.stdout == "8 rendered, 0 up to date, 4 skipped, 0 failed\n"
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # same bytes: not rewritten


def test_a_changed_render_option_re_renders_the_pairs_it_reaches(built):
    text = (built.root / "BUILD.yaml").read_text().replace("test-ns", "other-ns")
    write_files(built.root, {"BUILD.yaml": text})
    built("build", "//::")
    assert built.renders() == ALL
    assert "other-ns" in (built.root / "out/gpu/qwen/aggregated.yaml").read_text()


def test_a_new_spec_renders_only_its_pairs_and_a_removed_one_is_pruned(built):
    write_files(built.root, {"models/qwen/new.yaml": "release: new\n"})
    built("build", "//::")
    assert built.renders() == [("qwen/new.yaml", c) for c in ("gpu", "hopper", "slurm")]
    (built.root / "models/qwen/new.yaml").unlink()
    proc = built("build", "//::")
    assert built.renders() == []
    assert proc.stdout.endswith(", 3 pruned\n")
    assert set(artifacts(built.root)) == expected_artifacts()


def test_a_reverted_edit_is_restored_from_the_task_cache(built):
    original = (built.root / "models/wide/wide-base.yaml").read_text()
    write_files(built.root, {"models/wide/wide-base.yaml": "accelerator: gb200\nimage: v9\n"})
    built("build", "//::")
    built.renders()
    write_files(built.root, {"models/wide/wide-base.yaml": original})
    report = built.build_json("//::")
    assert built.renders() == []
    assert {r["status"] for r in report["pairs"] if r.get("cached")} == {"rendered", "skipped"}
    assert "image: v1" in (built.root / "out/gpu/wide/1p1d.yaml").read_text()


def test_a_deleted_artifact_is_restored_without_rendering(built):
    (built.root / "out/slurm/qwen/aggregated.sbatch").unlink()
    proc = built("build", "//::")
    assert proc.stdout == "1 rendered, 7 up to date, 4 skipped, 0 failed\n"
    assert built.renders() == []
    assert (built.root / "out/slurm/qwen/aggregated.sbatch").is_file()


def test_artifacts_are_written_only_when_their_bytes_change(built):
    path = built.root / "out/gpu/wide/1p1d.yaml"
    before = path.stat().st_mtime_ns, path.stat().st_ino
    write_files(built.root, {"clusters/gpu.yaml": "accelerators: gb200 b200\n# comment\n"})
    write_files(built.root, {"clusters/gpu.yaml": "accelerators: gb200 b200\n"})  # same bytes, new mtime
    built("build", "//::")
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == before


def test_an_edit_that_keeps_size_and_mtime_is_seen(built):
    """The stat signature holds the ctime (as git's index does): restoring the old mtime
    after a same-size edit in place still re-renders the pairs that read the file."""
    import os
    import time

    path = built.root / "models/qwen/aggregated.yaml"
    old = time.time() - 60
    os.utime(path, (old, old))  # an old, trusted signature
    built("build", "//::")
    built.renders()
    st = path.stat()
    with open(path, "r+b") as f:  # same inode, same size, other bytes
        f.write(b"release: QWEN\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    built("build", "//::")
    assert sorted(built.renders()) == sorted(p for p in ALL if p[0] == "qwen/aggregated.yaml" and PAIRS[p])


def test_changed_since_selects_the_same_pairs_as_an_incremental_build(built):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "."], cwd=built.root, check=True)
    subprocess.run([*git, "add", "-A", "."], cwd=built.root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=built.root, check=True)
    write_files(built.root, {"models/wide/wide-base.yaml": "accelerator: gb200\nimage: v3\n"})
    matrix = json.loads(built("matrix", "//::", "--changed-since", "HEAD").stdout)
    rendered = built.renders()
    report = built.build_json("//::", "--changed-since", "HEAD")
    expected = pairs_where(lambda m, c: m.startswith("wide/"))
    assert rendered == expected
    assert sorted((r["model"], r["cluster"]) for r in matrix) == [(address(m), c) for m, c in expected]
    assert sorted((r["model"], r["cluster"]) for r in report["pairs"]) == [(address(m), c) for m, c in expected]


def test_changed_since_an_unknown_revision_is_one_clear_error(built):
    subprocess.run(["git", "init", "-q", "."], cwd=built.root, check=True)
    proc = built("build", "--changed-since", "no-such-rev", check=False)
    assert (proc.returncode, proc.stderr) == (1, "error: --changed-since: unknown git revision 'no-such-rev'\n")


@pytest.mark.parametrize("jobs", ["1", "2"], ids=["jobs1", "jobs2"])
def test_parallel_and_serial_builds_write_the_same_bytes(tmp_path, jobs):
    trees = {}
    for name in ("serial", jobs):
        run = Runner(make_tree(tmp_path / name), tmp_path / f"{name}.log")
        run("build", "//::", "--jobs", "1" if name == "serial" else jobs)
        trees[name] = artifacts(run.root)
    assert trees["serial"] == trees[jobs]


def test_a_routing_profile_option_is_an_input_of_the_pairs_it_reaches(tmp_path):
    text = TREE_BUILD.replace("    path: models\n", "    path: models\n    options: routed\n")
    text = text.replace("targets:\n", "  routed:\n    extends: default\n    routing_profile: //routing:pick\ntargets:\n")
    run = Runner(make_tree(tmp_path / "tree", {"BUILD.yaml": text}), tmp_path / "renders.log")
    run("build")
    assert "--- pick.yaml\nplugins: []" in (run.root / "out/gpu/qwen/aggregated.yaml").read_text()
    assert "routing/pick.yaml" in run("deps", "//models/qwen:aggregated").stdout.splitlines()
    run.renders()
    write_files(run.root, {"routing/pick.yaml": "plugins: [kv]\n"})
    report = run.build_json("//routing:pick")
    assert run.renders() == ALL
    assert len(report["pairs"]) == len(ALL)


def test_an_unknown_routing_profile_is_a_buildfile_error(tmp_path):
    text = TREE_BUILD.replace("    namespace: test-ns\n", "    namespace: test-ns\n    routing_profile: //routing:pik\n")
    run = Runner(make_tree(tmp_path / "tree", {"BUILD.yaml": text}), tmp_path / "renders.log")
    proc = run("build", check=False)
    assert proc.stderr == ("error: BUILD.yaml:13:5: targets[2].options: routing_profile: unknown target //routing:pik "
                           "(did you mean '//routing:pick'?)\n")
