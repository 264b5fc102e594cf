"""``diff --base`` reads through the edge (issue 25): whatever sits in out/ at a revision or in
the working tree, the command gives a report or one clear error naming the artifact; no
traceback, no hang, no link followed; spec text is inert on a terminal and in the markdown
pull-request comment."""

from __future__ import annotations

import argparse

import contextlib
import copy
import functools
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from kit import REPO_ROOT, cli_in_process
from manifesto.review import semdiff
from manifesto.build_graph.changes import changed_files
from manifesto.edge import git as edge_git
from manifesto.errors import BuildError, ManifestoError

BASE = (REPO_ROOT / "out" / "example-gb200" / "qwen" / "qwen3-0.6b.yaml").read_text()
DEPLOY = (REPO_ROOT / "out" / "deploy" / "qwen-demo.yaml").read_text()
ROLE_LABEL = semdiff.ROLE_LABEL
ARTIFACT = "out/c/m.yaml"


# -- artifacts ---------------------------------------------------------------------------------

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> tuple[str, list]:
    header, *docs = re.split(r"(?m)^---\n", text)
    return header, [yaml.load(d, Loader=_LOADER) for d in docs]


def _split(text: str) -> tuple[str, list]:
    header, docs = _parsed(text)
    return header, copy.deepcopy(docs)


def _join(header: str, docs: list) -> str:
    return header + "".join("---\n" + yaml.dump(d, Dumper=_DUMPER, sort_keys=False) for d in docs)


def _server(docs: list) -> dict:
    return next(d for d in docs if d and d.get("kind") == "Deployment"
                and ROLE_LABEL in (d.get("metadata", {}).get("labels") or {}))


def _mutated(change) -> str:
    """BASE with ``change`` applied to its model-server Deployment."""
    header, docs = _split(BASE)
    change(_server(docs))
    return _join(header, docs)


def _container(d: dict) -> dict:
    return d["spec"]["template"]["spec"]["containers"][0]


def _set(path: tuple, value):
    def change(d):
        node = d
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _script(d: dict, extra: str) -> None:
    command = _container(d)["command"]
    command[-1] = command[-1].replace("args=(\n", "args=(\n" + extra + "\n", 1)


BOMB = ("---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n")

#: About 55,000 values once expanded: under the loader's bound for one document, but twenty of
#: them are past the bound for one artifact.
SMALL_BOMB = ("---\nkind: X\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
              "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
              "e: [*d, *d, *d, *d, *d]\n")

#: Texts that are not rendered artifacts, each with a word its one error must hold.
BAD = {
    # the '[' opens on the second line after the bundled artifact's last
    "bad-yaml": (BASE + "---\nkind: [unclosed\n", f"started at line {BASE.count(chr(10)) + 2}"),
    "not-utf8": (BASE.encode() + b"# \xff\xfe caf\xe9\n", "not UTF-8"),
    "latin1-whole": ("kind: caf\u00e9\n".encode("latin-1"), "not UTF-8"),
    "replicas-text": (_mutated(_set(("spec", "replicas"), "many")), "whole number"),
    "replicas-float": (_mutated(_set(("spec", "replicas"), 2.5)), "whole number"),
    "replicas-bool": (_mutated(_set(("spec", "replicas"), True)), "whole number"),
    "replicas-huge": (_mutated(_set(("spec", "replicas"), 10**30)), "out of range"),
    "replicas-negative": (_mutated(_set(("spec", "replicas"), -1)), "out of range"),
    "gpus-text": (_mutated(lambda d: _container(d)["resources"].setdefault("limits", {}).update(
        {"nvidia.com/gpu": "lots"})), "whole number"),
    "gpus-long-digits": (_mutated(lambda d: _container(d)["resources"].setdefault("limits", {}).update(
        {"nvidia.com/gpu": "9" * 5000})), "whole number"),
    "tp-huge": (_mutated(lambda d: _script(d, "  --tensor-parallel-size 99999999999999999999")), "whole number"),
    "metadata-list": (_mutated(_set(("metadata",), ["x"])), "mapping"),
    "labels-list": (_mutated(_set(("metadata", "labels"), ["x"])), "mapping"),
    "containers-mapping": (_mutated(_set(("spec", "template", "spec", "containers"), {"a": 1})), "list"),
    "container-text": (_mutated(_set(("spec", "template", "spec", "containers"), ["vllm"])), "mapping"),
    "env-value-mapping": (_mutated(lambda d: _container(d)["env"].insert(0, {"name": "X", "value": {"a": 1}})),
                          "expected"),
    "image-list": (_mutated(lambda d: _container(d).update(image=["a"])), "string"),
    "spec-text": (_mutated(_set(("spec",), "nothing")), "mapping"),
    "document-list": (BASE + "---\n- just\n- a list\n", "Kubernetes object"),
    "alias-bomb": (BASE + BOMB, "alias"),
    "alias-bombs-in-many-documents": (BASE + SMALL_BOMB * 20, "values (aliases expanded)"),
    "deep-300": (BASE + "---\nkind: X\nx: " + "[" * 300 + "]" * 300 + "\n", "deep"),
    "deep-5000": (BASE + "---\nkind: X\nx: " + "[" * 5000 + "]" * 5000 + "\n", "deep"),
    "int-5000-digits": (BASE + "---\nkind: X\nx: " + "9" * 5000 + "\n", "4300"),
    "key-not-text": (BASE + "---\nkind: X\n1: a\n", "keys must be strings"),
    "merge-cycle": (BASE + "---\nkind: X\na: &a {b: *a}\n", "alias"),
    # Issue 35: a tag the loader does not know is refused, never read as plain data.
    "python-tag": (_mutated(_set(("spec", "replicas"), 2)).replace("replicas: 2", "replicas: !!python/int 2"),
                   "the tag !!python/int names a type manifesto does not read"),
    "python-object-tag": (BASE + "---\nkind: X\nx: !!python/object/apply:os.system ['id']\n",
                          "the tag !!python/object/apply:os.system"),
    "local-tag": (BASE + "---\nkind: !Secret X\n", "the tag !Secret names a type"),
    "lws-size-text": (BASE + "---\nkind: LeaderWorkerSet\nmetadata: {name: x}\nspec:\n  leaderWorkerTemplate:\n"
                      "    size: big\n", "whole number"),
    "many-documents": (BASE + "---\nkind: X\n" * 3000, "YAML documents"),
    "many-lines": (BASE + "---\nkind: X\nx: |\n" + "  a\n" * 250_000, "lines"),
    "epp-config-bad": (BASE + "---\nkind: ConfigMap\nmetadata: {name: epp}\ndata:\n  config.yaml: |\n"
                       "    kind: EndpointPickerConfig\n    plugins: {a: [\n", "ConfigMap/epp data.config.yaml"),
}


def _data(text) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


# -- a workspace under git ---------------------------------------------------------------------

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}


def _git(repo: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=_GIT_ENV,
                          input=data).stdout.decode()


def _workspace(root: Path, files: dict[str, bytes | str] | None = None, *, commit: bool = True) -> Path:
    """A workspace (BUILD.yaml, out/) at ``root`` under git, with ``files`` committed."""
    (root / "out").mkdir(parents=True, exist_ok=True)
    (root / "BUILD.yaml").write_text("targets: []\n")
    _git(root, "init", "-q")
    for name, text in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_data(text))
    if commit:
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "base", "--allow-empty")
    return root


def _write(root: Path, name: str, text) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_data(text))


@contextlib.contextmanager
def _within(seconds: int):
    """Fail (instead of hanging) when the block runs longer than ``seconds``."""
    def hung(signum, frame):
        pytest.fail(f"did not finish within {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _diff(*args: str):
    with _within(60):
        return cli_in_process("diff", "--base", "HEAD", *args)


def _one_error(result, name: str, word: str = "") -> str:
    """The one ``error:`` line of a failed run, which names ``name`` (and holds ``word``)."""
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {name}"), result.stderr
    assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def ws(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


# -- one clear error naming the artifact, on either side -----------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_working_tree_artifact_is_one_error_naming_it(ws, case):
    text, word = BAD[case]
    _workspace(ws, {ARTIFACT: BASE})
    _write(ws, ARTIFACT, text)
    _one_error(_diff(), ARTIFACT, word)


@pytest.mark.integration
@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_artifact_at_the_revision_is_one_error_naming_it(ws, case):
    text, word = BAD[case]
    _workspace(ws, {ARTIFACT: text})
    _write(ws, ARTIFACT, BASE)
    _one_error(_diff(), f"HEAD:{ARTIFACT}", word)


@pytest.mark.integration
def test_a_good_artifact_on_both_sides_still_gives_its_report(ws):
    """The checks refuse only what is not a rendered artifact: the committed out/ files pass."""
    _workspace(ws, {ARTIFACT: BASE, "out/deploy/qwen-demo.yaml": DEPLOY})
    _write(ws, ARTIFACT, _mutated(_set(("spec", "replicas"), 3)))
    result = _diff()
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["c/m.yaml: changed, in place", "  decode: +2 pods; +2 GPUs"]


# -- special files and links ---------------------------------------------------------------------

@pytest.mark.integration
def test_a_fifo_in_out_is_refused_without_hanging(ws):
    _workspace(ws, {ARTIFACT: BASE})
    os.mkfifo(ws / "out" / "c" / "pipe.yaml")
    _one_error(_diff(), "out/c/pipe.yaml", "FIFO")


@pytest.mark.integration
def test_a_socket_in_out_is_refused(ws):
    _workspace(ws, {ARTIFACT: BASE})
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("out/c/sock.yaml")  # relative: the workspace path may be longer than a socket name
        _one_error(_diff(), "out/c/sock.yaml", "socket")


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_in_out_is_refused_without_reading_it(ws):
    import stat

    _workspace(ws, {ARTIFACT: BASE})
    os.mknod(ws / "out" / "c" / "zero.yaml", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
    _one_error(_diff(), "out/c/zero.yaml", "device")


@pytest.mark.integration
@pytest.mark.parametrize("where", ["file", "folder", "out"])
def test_a_symlink_in_the_working_tree_is_refused_and_not_followed(ws, tmp_path, where):
    secret = tmp_path / "elsewhere"
    (secret / "c").mkdir(parents=True)
    marker = "SECRET-MARKER-a81f"
    (secret / "c" / "m.yaml").write_text(_mutated(_set(("metadata", "name"), marker)))
    _workspace(ws, {ARTIFACT: BASE})
    if where == "file":
        os.symlink(secret / "c" / "m.yaml", ws / "out" / "c" / "x.yaml")
        name = "out/c/x.yaml"
    elif where == "folder":
        os.symlink(secret / "c", ws / "out" / "d")
        name = "out/d"
    else:
        os.rename(ws / "out", ws / "out-real")
        os.symlink(secret, ws / "out")
        name = "out"
    result = _diff()
    _one_error(result, name, "symlink")
    assert marker not in result.stdout + result.stderr


@pytest.mark.integration
def test_a_symlink_to_a_system_file_is_never_read(ws):
    _workspace(ws, {ARTIFACT: BASE})
    os.symlink("/etc/passwd", ws / "out" / "c" / "passwd.yaml")
    result = _diff()
    _one_error(result, "out/c/passwd.yaml", "symlink")
    assert "root:" not in result.stdout + result.stderr


@pytest.mark.integration
@pytest.mark.parametrize("where", ["file", "out"])
def test_a_committed_symlink_is_refused(ws, where):
    _workspace(ws, {ARTIFACT: BASE}, commit=False)
    if where == "file":
        os.symlink("/etc/passwd", ws / "out" / "c" / "passwd.yaml")
        name = "HEAD:out/c/passwd.yaml"
    else:
        os.rename(ws / "out", ws / "real")
        os.symlink("real", ws / "out")
        name = "HEAD:out"
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "links")
    if where == "out":  # the working tree's out/ is a plain folder again; the revision holds the link
        os.remove(ws / "out")
        os.rename(ws / "real", ws / "out")
    result = _diff()
    _one_error(result, name, "symlink")
    assert "root:" not in result.stdout + result.stderr


@pytest.mark.integration
@pytest.mark.parametrize("side", ["blob", "worktree"])
def test_an_oversized_artifact_is_refused_before_it_is_read(ws, monkeypatch, side):
    monkeypatch.setattr(edge_git, "MAX_ARTIFACT_BYTES", 4096)
    _workspace(ws, {ARTIFACT: BASE if side == "blob" else "kind: X\n"})
    _write(ws, ARTIFACT, "kind: X\n" if side == "blob" else BASE)
    _one_error(_diff(), f"HEAD:{ARTIFACT}" if side == "blob" else ARTIFACT, "larger than 4096 bytes")


# -- revisions and repositories ---------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("rev", ["-x", "--output=canary", "--all", "-p"])
def test_a_revision_that_looks_like_an_option_is_refused(ws, rev):
    _workspace(ws, {ARTIFACT: BASE})
    with _within(60):
        result = cli_in_process("diff", f"--base={rev}")
    line = _one_error(result, "--base")
    assert "looks like an option" in line
    assert not (ws / "canary").exists()
    with pytest.raises(BuildError, match="looks like an option"):
        changed_files(str(ws), rev)


@pytest.mark.integration
@pytest.mark.parametrize("rev", ["HEAD\nx", "HEAD\x1b[2J", "", "x" * 5000])
def test_a_revision_no_one_typed_is_refused(ws, rev):
    _workspace(ws, {ARTIFACT: BASE})
    with pytest.raises(BuildError) as err:
        semdiff.git_artifacts(str(ws), rev)
    assert "\x1b" not in err.value.format() and "\n" not in err.value.format()


@pytest.mark.integration
def test_an_unknown_revision_is_named(ws):
    _workspace(ws, {ARTIFACT: BASE})
    with _within(60):
        result = cli_in_process("diff", "--base", "no-such-rev")
    assert (result.returncode, result.stderr) == (1, "error: --base: unknown git revision 'no-such-rev'\n")


@pytest.mark.integration
def test_outside_a_git_repository_says_so(ws):
    (ws / "BUILD.yaml").write_text("targets: []\n")
    (ws / "out").mkdir()
    result = _diff()
    line = _one_error(result, "--base")
    assert "not in a git repository" in line and "revision" not in line.split("(")[0]
    with pytest.raises(BuildError, match="not in a git repository"):
        changed_files(str(ws), "HEAD")


@pytest.mark.integration
def test_git_variables_of_the_caller_do_not_pick_another_repository(ws, tmp_path, monkeypatch):
    """GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE left in the environment are not passed on: the
    workspace's own repository is read."""
    other = _workspace(tmp_path / "other", {ARTIFACT: _mutated(_set(("spec", "replicas"), 7))})
    _workspace(ws, {ARTIFACT: BASE})
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "touch canary;")
    result = _diff()
    assert (result.returncode, result.stdout) == (0, "no artifact changed since HEAD\n"), result.stderr
    assert changed_files(str(ws), "HEAD") == set()
    assert "GIT_DIR" not in edge_git.environment()


@pytest.mark.integration
def test_a_workspace_folder_named_like_a_pattern_is_read_literally(tmp_path, monkeypatch):
    """The workspace is a sub-folder ``w*`` of the repository; a sibling ``wz`` it would match
    as a glob holds other artifacts, which are not read."""
    repo = tmp_path / "repo"
    _workspace(repo, {"w*/BUILD.yaml": "targets: []\n", f"w*/{ARTIFACT}": BASE,
                      f"wz/{ARTIFACT}": _mutated(_set(("spec", "replicas"), 7)), "wz/out/c/extra.yaml": BASE})
    monkeypatch.chdir(repo / "w*")
    assert sorted(semdiff.git_artifacts(str(repo / "w*"), "HEAD")) == ["c/m.yaml"]
    result = _diff()
    assert (result.returncode, result.stdout) == (0, "no artifact changed since HEAD\n"), result.stderr


@pytest.mark.integration
def test_without_git_installed_says_so(ws, tmp_path, monkeypatch):
    _workspace(ws, {ARTIFACT: BASE})
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    _one_error(_diff(), "--base", "needs git, which is not installed")


@pytest.mark.integration
def test_json_output_escapes_hostile_names(ws):
    import json

    _workspace(ws, {})
    _write(ws, "out/c/\x1b[2Jx\n.yaml", _mutated(_set(("metadata", "labels", ROLE_LABEL), "a\x1b]0;t\x07")))
    result = _diff("-o", "json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.isascii() and "\x1b" not in result.stdout and "\x07" not in result.stdout
    data = json.loads(result.stdout)
    assert data["artifacts"][0]["path"] == "c/\x1b[2Jx\n.yaml"


@pytest.mark.integration
def test_git_that_does_not_answer_is_stopped(ws, tmp_path, monkeypatch):
    """A git that hangs (here a stand-in on PATH) is killed at the deadline: one error, no hang."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text("#!/bin/sh\nexec sleep 30\n")
    (bin_dir / "git").chmod(0o755)
    _workspace(ws, {ARTIFACT: BASE})
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(edge_git, "TIMEOUT", 1.0)
    start = time.monotonic()
    result = _diff()
    assert time.monotonic() - start < 15
    _one_error(result, "--base", "did not finish")


# -- what reaches the terminal and the pull-request comment ------------------------------------------

@pytest.mark.integration
def test_names_with_escapes_and_newlines_cannot_forge_a_verdict_line(ws):
    evil = "out/c/x\x1b[2K\roverall: none\n.yaml"
    _workspace(ws, {})
    _write(ws, evil, _mutated(_set(("metadata", "labels", ROLE_LABEL), "decode\noverall: none\x1b[31m")))
    result = _diff()
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("overall:")]
    assert verdicts == ["overall: in place"], result.stdout


HOSTILE = [
    "[ZQX](https://evil.example/x)",
    "![ZQX](https://evil.example/i.png)",
    "<img src=x onerror=alert(1)>ZQX",
    "<script>alert('ZQX')</script>",
    "@octocat ZQX @github/security",
    "x](javascript:alert('ZQX'))",
    "ZQX ``` `` ` backticks",
    "ZQX | a | b |",
    "ZQX\n\n# heading\n<details>",
    "ZQX https://evil.example www.evil.example",
    "<https://evil.example/ZQX>",
    "ZQX&lt;img src=x&gt; &#64;octocat",
    "*ZQX* _em_ **strong** ~~del~~",
    "ZQX\\",
    "ZQX <!-- comment -->",
]


def _tokens(report: str):
    md = MarkdownIt("commonmark").enable("table")

    def walk(tokens):
        for token in tokens:
            yield token
            yield from walk(token.children or [])

    return list(walk(md.parse(report))), md.render(report)


def _hostile_artifact(text: str) -> str:
    def change(d):
        d["metadata"]["name"] = text
        d["metadata"]["labels"][ROLE_LABEL] = text
        c = _container(d)
        c["image"] = text
        c["env"].insert(0, {"name": text, "value": text})
        c["resources"].setdefault("requests", {})[text] = text
        _script(d, f"  --served-model-name '{text}'")
    return _mutated(change)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_spec_text_renders_inert_in_the_markdown_report(text):
    """Names, images, arguments, env, paths and the revision from artifacts all sit in code
    spans: no link, image, raw HTML or mention can form, and none of it is outside code."""
    hostile = _hostile_artifact(text)
    folder = text.replace("/", "_")
    builds = [
        semdiff.diff_builds(text, {}, {f"{folder}/m.yaml": hostile}),  # added
        semdiff.diff_builds(text, {"c/m.yaml": BASE}, {"c/m.yaml": hostile}),  # changed
        semdiff.diff_builds(text, {f"{folder}/m.yaml": hostile}, {}),  # removed
    ]
    for build in builds:
        report = semdiff.format_markdown(build)
        tokens, html = _tokens(report)
        types = {t.type for t in tokens}
        assert not types & {"html_inline", "html_block", "link_open", "image"}, report
        assert "<a" not in html and "<img" not in html and "<script" not in html, html
        outside = [t.content for t in tokens if t.type == "text"]
        assert not any(re.search(r"@\w", s) for s in outside), outside
        assert not any("ZQX" in s or "://" in s or "www." in s for s in outside), outside
        assert any("ZQX" in t.content for t in tokens if t.type == "code_inline"), report
        lines = semdiff.format_text(build).splitlines()
        assert all(line.isprintable() for line in lines), lines
        assert [line for line in lines if line.startswith("overall:")] == [f"overall: {build.impact.label}"]


def test_the_values_of_a_whole_diff_are_bounded(monkeypatch):
    """Many artifacts each under the per-artifact bound still cannot hold the diff's memory and
    time without bound: past MAX_DIFF_NODES the diff stops with one error naming an artifact."""
    per_artifact = semdiff._check_depth(semdiff._documents(BASE, "x")[0])  # a lower bound is enough
    monkeypatch.setattr(semdiff, "MAX_DIFF_NODES", 10 * per_artifact)
    texts = {f"c/m{i}.yaml": BASE for i in range(40)}
    with pytest.raises(ManifestoError, match="values") as err:
        semdiff.diff_builds("HEAD", {}, texts)
    assert re.match(r"out/c/m\d+\.yaml: ", err.value.format()), err.value.format()


# -- papercuts (issue 27) -------------------------------------------------------------------------

def test_deployment_targets_count_toward_their_cluster():
    """out/deploy/NAME.yaml runs on the cluster its header names, not on a cluster "deploy"."""
    pair = (REPO_ROOT / "out" / "example-gb200" / "qwen" / "qwen3-0.6b.yaml").read_text()
    build = semdiff.diff_builds("HEAD", {}, {"example-gb200/qwen/qwen3-0.6b.yaml": pair,
                                             "deploy/qwen-demo.yaml": DEPLOY})
    assert set(build.totals) == {"example-gb200"}
    deploy_gpus = semdiff.totals_of(semdiff.artifact_facts("deploy/qwen-demo.yaml", DEPLOY)).gpus
    pair_gpus = semdiff.totals_of(semdiff.artifact_facts("example-gb200/qwen/qwen3-0.6b.yaml", pair)).gpus
    assert deploy_gpus and build.totals["example-gb200"][1].gpus == pair_gpus + deploy_gpus
    alone = semdiff.diff_builds("HEAD", {}, {"deploy/qwen-demo.yaml": DEPLOY})
    assert set(alone.totals) == {"example-gb200"}


@pytest.mark.integration
def test_fail_on_recreate_with_q_prints_no_report(ws):
    _workspace(ws, {ARTIFACT: BASE})
    os.remove(ws / ARTIFACT)  # a removed model server: every pod stops
    quiet = _diff("--fail-on-recreate", "-q")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (3, "", "")
    loud = _diff("--fail-on-recreate")
    assert loud.returncode == 3 and loud.stdout.splitlines()[-1] == "overall: recreate"
    assert _diff("-q").stdout.splitlines()[-1] == "overall: recreate"  # -q alone keeps the data


# -- property tests ------------------------------------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
_TREES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=16)
_PLACES = [(), ("metadata",), ("metadata", "labels"), ("metadata", "name"), ("spec",), ("spec", "replicas"),
           ("spec", "selector"), ("spec", "template"), ("spec", "template", "spec"),
           ("spec", "template", "spec", "containers"), ("spec", "template", "spec", "containers", 0),
           ("spec", "template", "spec", "containers", 0, "env"),
           ("spec", "template", "spec", "containers", 0, "resources"),
           ("spec", "template", "spec", "containers", 0, "command"),
           ("spec", "template", "spec", "resourceClaims"), ("kind",)]


def _planted(place: tuple, value) -> str:
    header, docs = _split(BASE)
    server = _server(docs)
    if not place:
        docs.append(value)
    else:
        node = server
        for key in place[:-1]:
            node = node[key]
        node[place[-1]] = value
    return _join(header, docs)


def _report_or_refusal(old: dict, new: dict) -> None:
    start = time.monotonic()
    try:
        build = semdiff.diff_builds("HEAD", old, new)
    except ManifestoError as exc:
        assert exc.format().strip()
    else:
        for line in semdiff.format_text(build).splitlines():
            assert line.isprintable()
        _tokens(semdiff.format_markdown(build))
    assert time.monotonic() - start < 30


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(place=st.sampled_from(_PLACES), value=_TREES)
def test_random_structures_anywhere_in_an_artifact_give_a_report_or_a_refusal(place, value):
    text = _planted(place, value)
    _report_or_refusal({"c/m.yaml": BASE}, {"c/m.yaml": text})
    _report_or_refusal({"c/m.yaml": text}, {})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(st.binary(max_size=400),
                      st.tuples(st.integers(0, len(BASE.encode())), st.binary(min_size=1, max_size=40)).map(
                          lambda cut: BASE.encode()[:cut[0]] + cut[1] + BASE.encode()[cut[0]:])))
def test_random_bytes_in_a_working_tree_artifact_give_a_report_or_a_refusal(data):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        (out / "c").mkdir(parents=True)
        (out / "c" / "m.yaml").write_bytes(data)
        try:
            new = semdiff.worktree_artifacts(str(out))
        except ManifestoError as exc:
            assert "out/c/m.yaml" in exc.format()
            return
        _report_or_refusal({"c/m.yaml": BASE}, new)


@pytest.mark.integration
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=400), _TREES.map(lambda v: yaml.safe_dump(v).encode()),
                      st.tuples(st.sampled_from(_PLACES), _TREES).map(lambda pv: _planted(*pv).encode())))
def test_random_git_blobs_give_a_report_or_a_refusal(tmp_path_factory, data):
    repo = _blob_repo(tmp_path_factory)
    oid = _git(repo, "hash-object", "-w", "--stdin", data=data).strip()
    blob = edge_git.Blob("out/c/m.yaml", "100644", oid, len(data))
    with _within(60):
        try:
            old = edge_git.read_blobs(str(repo), [blob], "HEAD", "--base")
        except ManifestoError as exc:
            assert "HEAD:out/c/m.yaml" in exc.format()
            return
        _report_or_refusal({k[len("out/"):]: v for k, v in old.items()}, {"c/m.yaml": BASE})


_REPOS: dict[str, Path] = {}


def _blob_repo(factory) -> Path:
    if "repo" not in _REPOS:
        _REPOS["repo"] = _workspace(factory.mktemp("blobs"), {})
    return _REPOS["repo"]


def test_the_slurm_diff_of_a_target_escapes_both_scripts(monkeypatch, capsys):
    """``diff ADDR`` of a Slurm target prints the unified diff of the submitted script (from
    Slurm) and the artifact (from out/) with no escape sequence or CR left raw."""
    from manifesto.cli import target_cmds

    class Art:
        address, rel = "//:job", "out/deploy/job\x1b[2J.sbatch"
        text = "#!/bin/bash\n#SBATCH --nodes=1\necho \x1b]0;owned\x07 done\r\nlast\n"

    monkeypatch.setattr(target_cmds, "_slurm_jobs", lambda art, args: (None, "inst", [{"job": "7\x1b[31m"}]))
    monkeypatch.setattr(target_cmds, "_submitted_script",
                        lambda job, host, args: "#!/bin/bash\n#SBATCH --nodes=2\r\n")
    assert target_cmds._slurm_diff(Art(), argparse.Namespace()) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out, out
    assert "+#SBATCH --nodes=1\n" in out and "-#SBATCH --nodes=2\\x0d\n" in out, out
