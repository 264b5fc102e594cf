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

from manifesto.hashing import sha256_hex

__all__ = ["RemoteCache", "RemoteSettings", "SharedCache", "url_problem", "settings_from_env"]

ENV_URL = "MANIFESTO_REMOTE_CACHE"
ENV_READ_ONLY = "MANIFESTO_REMOTE_CACHE_READ_ONLY"
ENV_TOKEN = "MANIFESTO_REMOTE_CACHE_TOKEN"
ENV_TIMEOUT = "MANIFESTO_REMOTE_CACHE_TIMEOUT"


def url_problem(url) -> str | None:
    """Why ``url`` cannot name a remote cache (None when it can): http(s), a host, printable
    ASCII, and no credentials (they would be committed with BUILD.yaml or shown in logs)."""
    import re

    if not isinstance(url, str):
        return f"expected an http:// or https:// URL, got {type(url).__name__}"
    authority = url.split("/", 3)[2] if url.count("/") >= 2 else ""
    if "@" in authority and url.startswith(("http://", "https://")):
        return f"a URL with credentials ({url.split('@', 1)[1][:100]}...) is refused: put a bearer token in {ENV_TOKEN}"
    if not re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]+(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?", url, re.ASCII):
        return f"expected an http:// or https:// URL (host, optional port and path), got {url[:200]!r}"
    return None


def settings_from_env(environ, url: str | None = None, read_only: bool = False) -> RemoteSettings | None:
    """The remote cache the flags (``url``, ``read_only``) or the environment name; None when
    neither does (then BUILD.yaml's ``remote_cache`` applies). Raises BuildError naming the
    flag or variable of a bad value."""
    from manifesto.errors import BuildError

    source = "--remote-cache"
    if url is None:
        url, source = environ.get(ENV_URL) or None, ENV_URL
    flag = environ.get(ENV_READ_ONLY, "")
    if flag not in ("", "0", "1", "true", "false"):
        raise BuildError(f"{ENV_READ_ONLY}: expected 1, 0, true or false, got {flag[:50]!r}")
    read_only = read_only or flag in ("1", "true")
    timeout_text = environ.get(ENV_TIMEOUT, "5")
    try:
        timeout = float(timeout_text) if timeout_text.isascii() else -1.0
    except ValueError:
        timeout = -1.0
    if not 0.1 <= timeout <= 600:
        raise BuildError(f"{ENV_TIMEOUT}: expected seconds between 0.1 and 600, got {timeout_text[:50]!r}")
    token = environ.get(ENV_TOKEN) or None
    if token is not None and not (token.isascii() and token.isprintable() and " " not in token):
        raise BuildError(f"{ENV_TOKEN}: a bearer token is printable ASCII without spaces")
    if url is None:
        return RemoteSettings("", read_only=read_only, token=token, timeout=timeout) if token or flag else None
    problem = url_problem(url)
    if problem:
        raise BuildError(f"{source}: {problem}")
    return RemoteSettings(url, read_only=read_only, token=token, timeout=timeout)


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

    # -- the two namespaces ------------------------------------------------------------

    def get_action(self, key: str) -> bytes | None:
        return self._get(f"ac/{key}")

    def put_action(self, key: str, record: bytes) -> None:
        self._put(f"ac/{key}", record)

    def get_blob(self, digest: str) -> bytes | None:
        """The blob named ``digest``; None (with a warning) when it is missing or damaged."""
        data = self._get(f"cas/{digest}")
        if data is not None and sha256_hex(data) != digest:
            self.warn(f"remote cache: blob {digest[:16]}... does not match its digest; rendering instead")
            return None
        return data

    def put_blob(self, data: bytes) -> str:
        # Always written: a HEAD would leave a damaged copy on the server in place forever.
        digest = sha256_hex(data)
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
        return result[1] if result is not None and result[0] == 200 else None

    def _put(self, path: str, data: bytes) -> None:
        if self.settings.read_only:
            return
        self._request("PUT", path, data)


class SharedCache:
    """A build's use of the remote cache: look a pair up before rendering it, publish after.

    A pair's inputs (its ``extends`` chain, the routing profile...) are known only once it has
    rendered somewhere, so two action entries serve it:

    - the *index* entry, keyed by the pair, its options and the code: the input files its
      render read (workspace-relative);
    - the *result* entry, keyed exactly as the local store keys it (``keys.pair_key``: those
      inputs with their digests, the options and the code): status, suffix, reason, budget and
      the SHA-256 of the artifact text, which lives in ``/cas``.

    The lookup digests the listed inputs here, so an edited file gives another result key: a
    miss, never a wrong artifact. A hit is written to the local store and out/ like a local one.
    """

    def __init__(self, session, settings: RemoteSettings) -> None:
        self.session = session
        self.remote = RemoteCache(settings, session.ui.warn)
        self.read_only = settings.read_only

    def _index_key(self, item) -> str:
        from manifesto.build_graph.keys import options_bytes
        from manifesto.store import task_key

        s = self.session
        return task_key(f"inputs of {item.pair[0]} @ {item.pair[1]}", (), (),
                        options_bytes(s.renderer, item.context[1]), item.context[0])

    def fetch(self, item) -> bool:
        """Settle ``item`` from the remote cache; False (render it) on any miss."""
        from manifesto.build_graph.keys import pair_key
        from manifesto.digest import digest
        from manifesto.status import Source, Status
        from manifesto.store.entries import Result

        s = self.session
        index = _json(self.remote.get_action(self._index_key(item)))
        inputs = index.get("inputs") if index else None
        if not isinstance(inputs, list) or not all(isinstance(k, str) for k in inputs):
            return False
        digests = [s.stat.digest(k) for k in inputs]
        if None in digests:
            return False
        key = pair_key(s.renderer, item.pair, item.context, inputs, digests)
        record = _json(self.remote.get_action(key))
        if not record or record.get("status") not in ("ok", "skipped", "failed"):
            return False
        text = ""
        if record["status"] == "ok":
            blob = self.remote.get_blob(str(record.get("text_sha256", "")))
            if blob is None:
                return False
            try:
                text = blob.decode("utf-8")
            except UnicodeDecodeError:
                return False
        entry = Result(key, str(record.get("task", "")), Status(record["status"]), str(record.get("suffix", "")),
                       text, digest(text.encode()), str(record.get("reason", "")), tuple(inputs), tuple(digests),
                       record.get("budget") if isinstance(record.get("budget"), dict) else None)
        s.tasks.put(entry)
        s._apply_entry(item, entry)
        item.how = Source.REMOTE
        return True

    def publish(self, item, result) -> None:
        """Share a render this build made (its entry in the local store) with other builds."""
        import json

        if self.read_only or not self.remote.enabled:
            return
        entry = self.session.tasks.get(result.key)
        if entry is None or getattr(entry, "status", None) is None:
            return
        record = {"task": entry.task, "status": str(entry.status.value), "suffix": entry.suffix,
                  "reason": entry.reason, "budget": entry.budget, "text_sha256": ""}
        if entry.status == "ok":
            record["text_sha256"] = self.remote.put_blob(entry.text.encode())
        self.remote.put_action(result.key, json.dumps(record, sort_keys=True).encode())
        self.remote.put_action(self._index_key(item), json.dumps({"inputs": list(entry.inputs)}).encode())


def _json(raw: bytes | None):
    import json

    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
