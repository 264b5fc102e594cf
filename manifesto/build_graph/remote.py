"""A shared build cache over Bazel's HTTP remote-cache protocol.

Layout on the server (any HTTP server that stores PUT bodies: nginx with ``dav_methods PUT``,
bazel-remote, a WebDAV share):

- ``/ac/<task key>``: the action cache, one small msgspec record per task result (what the
  task produced and the SHA-256 of each blob);
- ``/cas/<sha256>``: content-addressed blobs (the artifact text), verified against their
  name on every read.

The cache never decides a build's outcome: an unreachable, slow (``timeout`` per request),
erroring or corrupt server is a miss with one warning line, after which the build stops
asking it. In read-only mode (untrusted CI) nothing is ever written. The bearer token comes
from the environment at the CLI edge and is only ever put in a request header.
"""

from __future__ import annotations

import hashlib

__all__ = ["RemoteCache", "RemoteSettings", "sha256"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RemoteSettings:
    """Where the shared cache is and how to talk to it (read once at the CLI edge)."""

    __slots__ = ("url", "read_only", "token", "timeout")

    def __init__(self, url: str, *, read_only: bool = False, token: str | None = None, timeout: float = 5.0):
        self.url = url.rstrip("/")
        self.read_only = read_only
        self.token = token
        self.timeout = timeout

    def __repr__(self) -> str:  # never shows the token
        return f"RemoteSettings({self.url!r}, read_only={self.read_only})"


class RemoteCache:
    """GET and PUT against one remote cache; every failure is a warned miss."""

    def __init__(self, settings: RemoteSettings, warn) -> None:
        self.settings = settings
        self.warn = warn
        self.enabled = True
        self.hits = self.misses = self.writes = 0

    # -- the two namespaces ------------------------------------------------------------

    def get_action(self, key: str) -> bytes | None:
        return self._get(f"ac/{key}")

    def put_action(self, key: str, record: bytes) -> None:
        self._put(f"ac/{key}", record)

    def get_blob(self, digest: str) -> bytes | None:
        """The blob named ``digest``; None (with a warning) when it is missing or damaged."""
        data = self._get(f"cas/{digest}")
        if data is not None and sha256(data) != digest:
            self.warn(f"remote cache: blob {digest[:16]}... does not match its digest; rendering instead")
            return None
        return data

    def put_blob(self, data: bytes) -> str:
        # Always written: a HEAD would leave a damaged copy on the server in place forever.
        digest = sha256(data)
        self._put(f"cas/{digest}", data)
        return digest

    # -- transport -----------------------------------------------------------------------

    def _request(self, method: str, path: str, body: bytes | None = None):
        """(status, body) of one request, or None after a transport failure (warned once)."""
        import urllib.error
        import urllib.request

        if not self.enabled:
            return None
        request = urllib.request.Request(f"{self.settings.url}/{path}", data=body, method=method)
        if self.settings.token:
            request.add_header("Authorization", f"Bearer {self.settings.token}")
        if body is not None:
            request.add_header("Content-Type", "application/octet-stream")
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return 404, b""
            self._give_up(f"{method} {path.split('/', 1)[0]}/... answered HTTP {exc.code}")
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            self._give_up(f"{method} failed: {str(reason)[:200]}")
        return None

    def _give_up(self, why: str) -> None:
        self.enabled = False
        self.warn(f"remote cache {self.settings.url}: {why}; building without it")

    def _get(self, path: str) -> bytes | None:
        result = self._request("GET", path)
        if result is None or result[0] != 200:
            self.misses += 1
            return None
        self.hits += 1
        return result[1]

    def _put(self, path: str, data: bytes) -> None:
        if self.settings.read_only:
            return
        if self._request("PUT", path, data) is not None:
            self.writes += 1
