"""The build with a shared remote cache (a real nginx with WebDAV PUT on 127.0.0.1) and
sharded builds: a clean checkout with a warm cache renders nothing, a damaged blob is caught,
a broken server never fails a build, read-only never writes, and N shards make one build."""

from __future__ import annotations

import json
import shutil
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

import kit
from kit import REPO_ROOT, cli_in_process
from servers import nginx

pytestmark = pytest.mark.integration


def _checkout(tmp_path: Path, name: str) -> Path:
    """A clean copy of the bundled workspace: sources and the committed out/, no cache."""
    work = tmp_path / name
    work.mkdir()
    shutil.copy(REPO_ROOT / "BUILD.yaml", work)
    for sub in ("models", "clusters", "routing", "out"):
        shutil.copytree(REPO_ROOT / sub, work / sub, ignore=shutil.ignore_patterns(".cache"))
    return work


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".cache" not in p.parts and p.name != ".lock"}


def _build(work: Path, monkeypatch, *args: str):
    monkeypatch.chdir(work)
    result = cli_in_process("build", "--output", "json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def _counts(report: dict) -> dict:
    """Rendered artifacts, pairs settled from the remote cache (skips included), artifacts."""
    rows = report["pairs"]
    return {"rendered": sum(r["status"] == "rendered" for r in rows),
            "remote": sum(r.get("cached") == "remote" for r in rows),
            "artifacts": sum(r.get("artifact") is not None for r in rows)}


@pytest.fixture
def dav(tmp_path):
    if nginx.nginx_binary() is None:
        kit.unavailable("nginx is not installed (.ci/run installs it)")
    server = nginx.start(tmp_path / "server")
    yield server
    server.stop()


def test_a_clean_checkout_with_a_warm_cache_renders_nothing(tmp_path, monkeypatch, dav):
    first, _ = _build(_checkout(tmp_path, "a"), monkeypatch, "--remote-cache", dav.url)
    counts = _counts(first)
    assert counts["rendered"] == counts["artifacts"] > 10 and counts["remote"] == 0
    clean = _checkout(tmp_path, "b")
    report, stderr = _build(clean, monkeypatch, "--remote-cache", dav.url)
    # Every artifact comes from the cache; a skipped pair is found skipped here (a server never decides it).
    assert _counts(report) == {"rendered": 0, "remote": counts["artifacts"], "artifacts": counts["artifacts"]}
    assert "warning" not in stderr
    assert _tree(clean / "out") == _tree(REPO_ROOT / "out")
    # The shared entries are what Bazel's HTTP cache holds: actions and blobs by digest.
    assert {p.name for p in dav.root.iterdir()} == {"ac", "cas"}


def test_a_damaged_blob_is_caught_and_that_pair_rendered(tmp_path, monkeypatch, dav):
    _build(_checkout(tmp_path, "a"), monkeypatch, "--remote-cache", dav.url)
    blob = sorted((dav.root / "cas").iterdir())[0]
    blob.write_bytes(blob.read_bytes().replace(b"kind:", b"kind;", 1) or b"x")
    clean = _checkout(tmp_path, "b")
    report, stderr = _build(clean, monkeypatch, "--remote-cache", dav.url)
    counts = _counts(report)
    assert counts["rendered"] >= 1 and counts["remote"] == counts["artifacts"] - counts["rendered"]
    assert f"warning: remote cache: blob {blob.name[:16]}... does not match its digest; rendering instead" in stderr
    assert _tree(clean / "out") == _tree(REPO_ROOT / "out")
    assert _build(_checkout(tmp_path, "c"), monkeypatch, "--remote-cache", dav.url)[1].count("warning") == 0


def test_read_only_never_writes(tmp_path, monkeypatch, dav):
    report, _ = _build(_checkout(tmp_path, "a"), monkeypatch, "--remote-cache", dav.url, "--remote-cache-read-only")
    assert _counts(report)["rendered"] == _counts(report)["artifacts"]
    assert not any(r.startswith("PUT") for r in dav.requests()) and list(dav.root.iterdir()) == []
    monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_READ_ONLY", "1")
    _build(_checkout(tmp_path, "b"), monkeypatch, "--remote-cache", dav.url)
    assert list(dav.root.iterdir()) == []


def test_build_yaml_names_the_cache_and_the_token_stays_in_the_environment(tmp_path, monkeypatch):
    if nginx.nginx_binary() is None:
        kit.unavailable("nginx is not installed (.ci/run installs it)")
    server = nginx.start(tmp_path / "server", token="t0ken-s3cret")
    try:
        work = _checkout(tmp_path, "a")
        (work / "BUILD.yaml").write_text((work / "BUILD.yaml").read_text() + f"remote_cache: {server.url}\n")
        monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TOKEN", "t0ken-s3cret")
        monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TOKEN_HOST", server.url.split("://")[1].split("/")[0])
        _build(work, monkeypatch)
        assert (server.root / "ac").is_dir()
        clean = _checkout(tmp_path, "b")
        shutil.copy(work / "BUILD.yaml", clean)
        report, _ = _build(clean, monkeypatch)
        assert _counts(report)["rendered"] == 0
        for root in (work, clean):
            assert not [p for p in root.rglob("*") if p.is_file() and b"t0ken-s3cret" in p.read_bytes()]
        monkeypatch.delenv("MANIFESTO_REMOTE_CACHE_TOKEN")
        report, stderr = _build(_checkout(tmp_path, "c") , monkeypatch, "--remote-cache", server.url)
        assert f"warning: remote cache {server.url}: GET ac/... answered HTTP 401 (Unauthorized); building without it" in stderr
    finally:
        server.stop()


def test_credentials_in_build_yaml_are_refused_with_their_position(tmp_path, monkeypatch):
    work = _checkout(tmp_path, "a")
    text = (work / "BUILD.yaml").read_text()
    (work / "BUILD.yaml").write_text(text + "remote_cache:\n  url: https://bob:pw@cache.example.com/x\n")
    monkeypatch.chdir(work)
    result = cli_in_process("build")
    line = len(text.splitlines()) + 2
    assert (result.returncode, result.stderr.strip()) == (1, (
        f"error: BUILD.yaml:{line}:3: remote_cache.url: a URL with credentials (cache.example.com/x...) is refused: "
        "put a bearer token in MANIFESTO_REMOTE_CACHE_TOKEN"))


class _Failing(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(500)
        self.end_headers()

    do_PUT = do_GET

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("how", ["down", "slow", "500"])
def test_a_broken_cache_never_fails_a_build(tmp_path, monkeypatch, how):
    monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TIMEOUT", "0.5")
    listener = server = None
    if how == "down":
        url = f"http://127.0.0.1:{nginx.free_port()}"
    elif how == "slow":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    else:
        server = HTTPServer(("127.0.0.1", 0), _Failing)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_port}"
    try:
        work = _checkout(tmp_path, "a")
        report, stderr = _build(work, monkeypatch, "--remote-cache", url)
        assert _counts(report)["rendered"] == _counts(report)["artifacts"]
        warnings = [line for line in stderr.splitlines() if line.startswith("warning:")]
        assert len(warnings) == 1 and warnings[0].startswith(f"warning: remote cache {url}: ")
        assert _tree(work / "out") == _tree(REPO_ROOT / "out")
    finally:
        if listener is not None:
            listener.close()
        if server is not None:
            server.shutdown()
            server.server_close()


@pytest.mark.parametrize("value,problem", [
    ("ftp://cache", "MANIFESTO_REMOTE_CACHE: expected an http:// or https:// URL (host, optional port and path), "
                    "got 'ftp://cache'"),
])
def test_a_bad_cache_setting_names_its_variable(tmp_path, monkeypatch, value, problem):
    monkeypatch.setenv("MANIFESTO_REMOTE_CACHE", value)
    monkeypatch.chdir(_checkout(tmp_path, "a"))
    result = cli_in_process("build")
    assert (result.returncode, result.stderr.strip()) == (1, f"error: {problem}")


def test_shards_together_are_one_build(tmp_path, monkeypatch):
    parts = []
    for i in (1, 2, 3):
        work = _checkout(tmp_path, f"s{i}")
        shutil.rmtree(work / "out")
        report, _ = _build(work, monkeypatch, "--shard", f"{i}/3")
        parts.append((report, _tree(work / "out")))
    whole = {}
    for _, tree in parts:
        assert not set(tree) & set(whole)  # no pair is rendered by two shards
        whole.update(tree)
    assert whole == _tree(REPO_ROOT / "out")
    sizes = [len(r["pairs"]) for r, _ in parts]  # every selected pair, skipped ones too
    whole_build, _ = _build(_checkout(tmp_path, "whole"), monkeypatch)
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == len(whole_build["pairs"])
    monkeypatch.chdir(tmp_path / "s1")
    matrix = cli_in_process("matrix", "--format", "github", "--shards", "3")
    shards = json.loads(matrix.stdout)["include"]
    assert [s["shard"] for s in shards] == ["1/3", "2/3", "3/3"]
    assert [s["pairs"] for s in shards] == [sum(r["status"] == "rendered" for r in rep["pairs"]) for rep, _ in parts]
    bad = cli_in_process("build", "--shard", "4/3")
    assert bad.returncode == 2 and bad.stderr.strip().endswith(
        "error: argument --shard: expected I/N with 1 <= I <= N (e.g. 1/4), got '4/3'")


class _Recorder(BaseHTTPRequestHandler):
    """A cache server that misses every GET, takes every PUT and records each request's
    Authorization header (the server a pull request could name in BUILD.yaml)."""

    seen: list = []

    def _answer(self, code: int) -> None:
        type(self).seen.append(self.headers.get("Authorization"))
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):  # noqa: N802 - http.server's naming
        self._answer(404)

    def do_PUT(self):  # noqa: N802
        self._answer(201)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("token_host", [None, "cache.example.com", "127.0.0.1:1"])
def test_a_token_never_goes_to_a_cache_the_repository_names_unless_the_environment_names_its_host(
        tmp_path, monkeypatch, token_host):
    server = HTTPServer(("127.0.0.1", 0), type("Rec", (_Recorder,), {"seen": []}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/cache"
        work = _checkout(tmp_path, "pr")
        shutil.rmtree(work / "out")
        (work / "BUILD.yaml").write_text((work / "BUILD.yaml").read_text() + f"remote_cache: {url}\n")
        monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TOKEN", "t0ken-s3cret")
        if token_host:
            monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TOKEN_HOST", token_host)
        report, stderr = _build(work, monkeypatch, "//models/qwen:")
        seen = server.RequestHandlerClass.seen
        assert seen and seen == [None] * len(seen)  # asked and written to, never with the token
        assert stderr.count("MANIFESTO_REMOTE_CACHE_TOKEN is not sent to it") == 1
        assert "t0ken-s3cret" not in stderr + json.dumps(report)
        # Named outside the repository, that host gets it.
        monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TOKEN_HOST", f"127.0.0.1:{server.server_port}")
        seen.clear()
        shutil.rmtree(work / "out")  # out/.cache with it: every pair asks the cache again
        report, stderr = _build(work, monkeypatch, "//models/qwen:")
        assert seen and seen == ["Bearer t0ken-s3cret"] * len(seen)
        assert "is not sent" not in stderr
    finally:
        server.shutdown()
        server.server_close()
