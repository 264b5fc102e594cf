"""The remote cache client against a real nginx with WebDAV PUT on 127.0.0.1, and against
servers that fail: down, slow, erroring. A failure is always a warned miss, never an error."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

import kit
from manifesto.build_graph.remote import RemoteCache, RemoteSettings
from manifesto.util.hashing import sha256_hex
from servers import nginx

pytestmark = pytest.mark.integration


@pytest.fixture
def dav(tmp_path):
    if nginx.nginx_binary() is None:
        kit.unavailable("nginx is not installed (.ci/run installs it)")
    server = nginx.start(tmp_path)
    yield server
    server.stop()


def _client(url: str, **kw):
    warnings: list[str] = []
    return RemoteCache(RemoteSettings(url, **kw), warnings.append), warnings


def test_blobs_and_actions_round_trip_in_bazels_layout(dav):
    cache, warnings = _client(dav.url)
    digest = cache.put_blob(b"kind: ConfigMap\n")
    cache.put_action("k" * 64, b"record")
    assert digest == sha256_hex(b"kind: ConfigMap\n")
    assert (dav.root / "cas" / digest).read_bytes() == b"kind: ConfigMap\n"
    assert (dav.root / "ac" / ("k" * 64)).read_bytes() == b"record"
    assert cache.get_blob(digest) == b"kind: ConfigMap\n"
    assert cache.get_action("k" * 64) == b"record"
    assert cache.get_action("m" * 64) is None  # 404: a plain miss, no warning
    assert warnings == [] and cache.enabled


def test_a_corrupt_blob_is_a_warned_miss(dav):
    cache, warnings = _client(dav.url)
    digest = cache.put_blob(b"the artifact")
    (dav.root / "cas" / digest).write_bytes(b"the artifacT")
    assert cache.get_blob(digest) is None
    assert warnings == [f"remote cache: blob {digest[:16]}... does not match its digest; rendering instead"]
    assert cache.enabled  # the server works; only that blob is bad
    cache.put_blob(b"the artifact")  # written again, not skipped
    assert cache.get_blob(digest) == b"the artifact"


def test_read_only_never_writes(dav):
    cache, warnings = _client(dav.url, read_only=True)
    cache.put_blob(b"x")
    cache.put_action("a" * 64, b"y")
    assert cache.get_action("a" * 64) is None
    assert not any(r.startswith("PUT") for r in dav.requests()), dav.requests()
    assert list(dav.root.iterdir()) == [] and warnings == []


def test_a_bearer_token_is_sent_and_never_shown(tmp_path):
    if nginx.nginx_binary() is None:
        kit.unavailable("nginx is not installed (.ci/run installs it)")
    server = nginx.start(tmp_path, token="s3cret-token")
    try:
        good, warnings = _client(server.url, token="s3cret-token")
        digest = good.put_blob(b"z")
        assert good.get_blob(digest) == b"z" and warnings == []
        bad, warnings = _client(server.url)
        assert bad.get_blob(digest) is None
        assert warnings == [f"remote cache {server.url}: GET cas/... answered HTTP 401 (Unauthorized); building without it"]
        assert "s3cret" not in repr(good.settings)
    finally:
        server.stop()


def test_a_server_that_is_down_is_one_warning(tmp_path):
    port = nginx.free_port()  # nothing listens there
    cache, warnings = _client(f"http://127.0.0.1:{port}", timeout=1)
    assert cache.get_action("a" * 64) is None
    assert cache.get_blob("b" * 64) is None
    cache.put_blob(b"c")
    assert len(warnings) == 1 and warnings[0].startswith(f"remote cache http://127.0.0.1:{port}: GET failed: ")
    assert warnings[0].endswith("; building without it") and not cache.enabled


def test_a_slow_server_is_bounded_by_the_timeout():
    with socket.socket() as listener:  # accepts, then never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        cache, warnings = _client(f"http://127.0.0.1:{port}", timeout=0.5)
        assert cache.get_action("a" * 64) is None
        assert cache.get_action("b" * 64) is None  # not asked again
    assert warnings == [f"remote cache http://127.0.0.1:{port}: GET failed: timed out (no complete reply within 0.5s); building without it"]


class _Failing(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's naming
        self.send_response(500)
        self.end_headers()

    do_PUT = do_GET

    def log_message(self, *args):
        pass


def test_a_server_answering_500_is_a_warned_miss():
    server = HTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        cache, warnings = _client(url)
        assert cache.get_action("a" * 64) is None
        cache.put_blob(b"x")
        assert warnings == [f"remote cache {url}: GET ac/... answered HTTP 500 (Internal Server Error); building without it"]
    finally:
        server.shutdown()
        server.server_close()
