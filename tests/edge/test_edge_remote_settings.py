"""Credentials never shown or committed (cache URLs, ``init --package``); the render store's
folder in the way; the HTTP client's rules one by one (same-origin redirects, body caps,
budgets, blobs over the cap)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import time

import pytest

from kit import REPO_ROOT, cli_in_process
from manifesto.build_graph.remote import RemoteCache, RemoteSettings, settings_from_env, url_problem
from manifesto.edge.http import Client, HttpError
from servers.hostile import Hostile, Storing, send

SECRET = "pa55-w0rd"


@pytest.mark.parametrize("url", [
    f"https://bob:{SECRET}@cache.example.com/x",
    f"HTTP://bob:{SECRET}@cache.example.com/x",
    f"HtTpS://bob:{SECRET}@cache.example.com",
    f"ftp://bob:{SECRET}@cache.example.com/x",
    f"s3://bob:{SECRET}@bucket",
    f"https://bob:{SECRET}@x@cache.example.com/x",  # a password holding '@'
    f"https://bob:{SECRET}/x@cache.example.com/x",  # ... or '/'
    f"bob:{SECRET}@cache.example.com",  # no scheme at all
    f"https://{SECRET}@cache.example.com/",  # a token as the user
])
def test_a_cache_url_with_credentials_is_refused_without_showing_them(url):
    problem = url_problem(url)
    assert problem is not None and SECRET not in problem and "bob" not in problem
    assert problem.startswith("a URL with credentials (")
    with pytest.raises(Exception) as info:
        settings_from_env({"MANIFESTO_REMOTE_CACHE": url})
    assert SECRET not in str(info.value) and str(info.value).startswith("MANIFESTO_REMOTE_CACHE: a URL with credentials")


@pytest.mark.parametrize("url,problem", [
    ("https://cache.example.com/x", None),
    ("HTTPS://cache.example.com:8443/x", None),
    ("http://[::1]:8080/ac", None),
    ("http://cache:99999/", "a valid port"),
    ("file:///etc/passwd", "expected an http:// or https:// URL"),
    ("http://\x1b[2Jcache/", "expected an http:// or https:// URL"),
])
def test_cache_urls(url, problem):
    found = url_problem(url)
    assert (found is None) if problem is None else (problem in found and "\x1b" not in found)


def test_an_upper_case_scheme_names_the_same_cache():
    assert RemoteSettings("HTTPS://cache.example.com/x/").url == "https://cache.example.com/x"


def test_the_build_refuses_credentials_from_the_environment_without_echoing_them(tmp_path, monkeypatch):
    work = tmp_path / "w"
    work.mkdir()
    shutil.copy(REPO_ROOT / "BUILD.yaml", work)
    monkeypatch.chdir(work)
    monkeypatch.setenv("MANIFESTO_REMOTE_CACHE", f"HTTP://bob:{SECRET}@cache.example.com/x")
    result = cli_in_process("build")
    assert result.returncode == 1 and SECRET not in result.stderr + result.stdout
    assert result.stderr.strip() == ("error: MANIFESTO_REMOTE_CACHE: a URL with credentials (cache.example.com/x...) "
                                     "is refused: put a bearer token in MANIFESTO_REMOTE_CACHE_TOKEN")


@pytest.mark.parametrize("variable,value,message", [
    ("MANIFESTO_REMOTE_CACHE_BUDGET", "0", "expected seconds between 1 and 86400"),
    ("MANIFESTO_REMOTE_CACHE_MAX_BLOB", "12", "expected bytes between 1024"),
    ("MANIFESTO_REMOTE_CACHE_MAX_BLOB", "1e9", "expected bytes between 1024"),
    ("MANIFESTO_REMOTE_CACHE_TIMEOUT", "nan", "expected seconds between 0.1 and 600"),
])
def test_bad_limits_name_their_variable(variable, value, message):
    with pytest.raises(Exception) as info:
        settings_from_env({"MANIFESTO_REMOTE_CACHE": "http://127.0.0.1:1", variable: value})
    assert str(info.value).startswith(f"{variable}: {message}")


# -- init --package ----------------------------------------------------------------------------

@pytest.mark.parametrize("package", [
    f"git+https://bob:{SECRET}@git.example.com/team/llm-manifesto@v0.1.0",
    f"git+HTTPS://{SECRET}@git.example.com/team/llm-manifesto@v0.1.0",
    f"llm-manifesto @ https://bob:{SECRET}@wheels.example.com/llm_manifesto-0.1.0-py3-none-any.whl",
    f"git+ssh://git:{SECRET}@git.example.com/team/llm-manifesto",
    f"git+https://bob:{SECRET}/x@git.example.com/team/llm-manifesto",
])
def test_init_refuses_a_package_url_with_credentials_and_writes_nothing(tmp_path, monkeypatch, package):
    monkeypatch.chdir(tmp_path)
    result = cli_in_process("init", "ws", "--user", "a", "--context", "x", "--package", package)
    assert result.returncode == 1 and SECRET not in result.stderr + result.stdout
    assert result.stderr.startswith("error: --package: a URL with credentials")
    assert not (tmp_path / "ws").exists() or not any(p.is_file() for p in (tmp_path / "ws").rglob("*"))
    monkeypatch.setenv("MANIFESTO_PACKAGE", package)
    result = cli_in_process("init", "ws2", "--user", "a", "--context", "x")
    assert result.returncode == 1 and SECRET not in result.stderr + result.stdout


def test_init_keeps_a_plain_ssh_user(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    package = "git+ssh://git@github.com/team/llm-manifesto@v0.1.0"
    result = cli_in_process("init", "ws", "--user", "a", "--context", "x", "--package", package)
    assert result.returncode == 0, result.stderr
    assert package in (tmp_path / "ws/.github/workflows/manifesto.yml").read_text()


# -- the render store's folder ----------------------------------------------------------------

def _in_the_way(tmp_path, kind):
    if kind == "file":
        path = tmp_path / "cache"
        path.write_text("not a folder")
    elif kind == "fifo":
        path = tmp_path / "cache"
        os.mkfifo(path)
    elif kind == "device":
        path = "/dev/null"
    elif kind == "below":  # the store's own folder is a file
        path = tmp_path / "cache"
        path.mkdir()
        (path / "llm-manifesto").write_text("")
    elif kind == "socket":
        path = tmp_path / "sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        return str(path), server
    return str(path), None


@pytest.mark.integration  # the commands ask kubectl for the current namespace
@pytest.mark.parametrize("kind", ["file", "fifo", "device", "below", "socket"])
@pytest.mark.parametrize("command", [("render", "manifest"), ("config", "validate"), ("explain",)])
def test_a_cache_folder_in_the_way_is_one_warning(tmp_path, monkeypatch, kind, command):
    path, keep = _in_the_way(tmp_path, kind)
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", path)
        started = time.monotonic()
        result = cli_in_process(*command, "qwen/h200-aggregated", "--cluster", "example-h200")
        assert time.monotonic() - started < 60
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("manifesto: warning: the render cache is off for this "
                                                       "command: "), result.stderr
        assert "not a folder" in lines[0] and result.stdout
        if kind in ("file", "fifo", "socket"):
            mode = os.lstat(path).st_mode
            assert stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)  # left as it was
    finally:
        if keep is not None:
            keep.close()


# -- the HTTP client, rule by rule --------------------------------------------------------------

@pytest.fixture
def storing():
    server = Storing()
    yield server
    server.stop()


def test_a_redirect_to_another_port_is_refused_and_a_same_origin_one_followed(storing):
    storing.entries["/real/ac/k"] = b"record"

    def answer(server, conn, head):
        where = storing.url if b"/away " in head else server.url.upper()  # HTTP://127.0.0.1:PORT: the same origin
        send(conn, f"HTTP/1.1 307 Moved\r\nLocation: {where}/real/ac/k\r\nContent-Length: 0\r\n"
                   "Connection: close\r\n\r\n".encode() if b"/real/" not in head else
             b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nhere")

    server = Hostile(answer)
    try:
        reply = Client(server.url, token="t0k", timeout=2).request("GET", "ac/k")
        assert (reply.status, reply.body) == (200, b"here")
        assert all(b"Authorization: Bearer t0k" in s for s in server.seen) and len(server.seen) == 2
        with pytest.raises(HttpError, match="redirected to another origin"):
            Client(server.url, token="t0k", timeout=2).request("GET", "away")
        assert storing.seen == []  # the other port was never asked, so never shown the token
        with pytest.raises(HttpError, match="a redirect"):  # a PUT is never redirected
            Client(server.url, token="t0k", timeout=2).request("PUT", "ac/k", b"x")
    finally:
        server.stop()


def test_a_relative_redirect_stays_on_the_origin():
    def answer(server, conn, head):
        if head.startswith(b"GET /ac/k "):
            send(conn, b"HTTP/1.1 302 Found\r\nLocation: /moved/k\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        else:
            send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    server = Hostile(answer)
    try:
        reply = Client(server.url, token="t0k", timeout=2).request("GET", "ac/k")
        assert reply.body == b"ok" and [s.split(b"\r\n")[0] for s in server.seen] == [b"GET /ac/k HTTP/1.1",
                                                                                         b"GET /moved/k HTTP/1.1"]
        assert all(b"Authorization: Bearer t0k" in s for s in server.seen)
    finally:
        server.stop()


def test_bodies_are_bounded_with_and_without_a_length():
    def answer(server, conn, head):
        if b"/len " in head:
            send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n" + b"x" * 2000)
        else:
            send(conn, b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * 5000)

    server = Hostile(answer)
    try:
        client = Client(server.url, timeout=2)
        assert len(client.request("GET", "len", limit=2000).body) == 2000
        with pytest.raises(HttpError, match="a reply of 2000 bytes, over the 1999-byte limit"):
            Client(server.url, timeout=2).request("GET", "len", limit=1999)
        with pytest.raises(HttpError, match="a reply of over 4096 bytes"):
            Client(server.url, timeout=2).request("GET", "nolen", limit=4096)
    finally:
        server.stop()


def test_the_budget_ends_all_requests():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts, never answers
    try:
        client = Client(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.4, budget=1)
        started = time.monotonic()
        for _ in range(2):
            with pytest.raises(HttpError, match="timed out"):
                client.request("GET", "ac/x")
        for _ in range(2):  # the last 0.2 s, then none left
            with pytest.raises(HttpError, match=r"timed out \(its replies took over 1s in all\)"):
                client.request("GET", "ac/x")
        assert time.monotonic() - started < 3
    finally:
        listener.close()


def test_a_blob_over_the_cap_is_neither_sent_nor_read(storing):
    warnings = []
    cache = RemoteCache(RemoteSettings(storing.url, max_blob=1024), warnings.append)
    digest = cache.put_blob(b"x" * 1025)
    assert storing.entries == {}
    storing.entries[f"/cas/{digest}"] = b"x" * 1025
    assert cache.get_blob(digest) is None
    assert warnings == [f"remote cache {storing.url}: GET failed: a reply of 1025 bytes, over the 1024-byte limit; "
                        "building without it"]


def test_a_tls_failure_is_one_line():
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def serve():  # plain HTTP at once, whatever the client sends: no TLS handshake can succeed
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            conn.recv(65536)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with pytest.raises(HttpError) as info:
            Client(f"https://127.0.0.1:{listener.getsockname()[1]}", token="t0k", timeout=2).request("GET", "ac/k")
        assert str(info.value).startswith("TLS: ") and str(info.value).isprintable() and "t0k" not in str(info.value)
    finally:
        listener.close()
        thread.join(3)
