"""A shared build cache over Bazel's HTTP remote-cache protocol.

Layout on the server (any HTTP server that stores PUT bodies: nginx with ``dav_methods PUT``,
bazel-remote, a WebDAV share):

- ``/ac/<task key>``: the action cache, one small msgspec record per task result (what the
  task produced and the SHA-256 of each blob);
- ``/cas/<sha256>``: content-addressed blobs (the artifact text), verified against their
  name on every read.

The cache never decides a build's outcome: an unreachable, slow (``timeout`` per request,
``budget`` for all of a build's requests), erroring or hostile server is a miss with one
warning line, after which the build stops asking it. Every byte of a reply goes through the
edge: the HTTP client (``manifesto.edge.http``: one origin, no redirect elsewhere, bounded
bodies, hard deadlines) and the records' decoders (``manifesto.edge.entries``: bounded,
typed, the paths and suffix checked), so a record never picks where a build writes. In
read-only mode (untrusted CI) nothing is ever written. The bearer token comes from the
environment at the CLI edge and is only ever put in a request header to the cache's origin.
"""

from __future__ import annotations

from manifesto.util.hashing import sha256_hex

__all__ = ["RemoteCache", "RemoteSettings", "SharedCache", "shared_cache", "url_problem", "redact", "settings_from_env"]

ENV_URL = "MANIFESTO_REMOTE_CACHE"
ENV_READ_ONLY = "MANIFESTO_REMOTE_CACHE_READ_ONLY"
ENV_TOKEN = "MANIFESTO_REMOTE_CACHE_TOKEN"
#: The host (``HOST`` or ``HOST:PORT``) a URL from BUILD.yaml must have to get the token: a
#: file in the repository can change that URL, so the token's destination is named outside it.
ENV_TOKEN_HOST = "MANIFESTO_REMOTE_CACHE_TOKEN_HOST"
ENV_TIMEOUT = "MANIFESTO_REMOTE_CACHE_TIMEOUT"
ENV_BUDGET = "MANIFESTO_REMOTE_CACHE_BUDGET"
ENV_MAX_BLOB = "MANIFESTO_REMOTE_CACHE_MAX_BLOB"

#: The largest action record read (nginx's default ``client_max_body_size``, 1 MiB).
MAX_ACTION = 1 << 20
#: The largest blob (artifact text) read or written unless MANIFESTO_REMOTE_CACHE_MAX_BLOB says.
MAX_BLOB = 16 << 20


def redact(url: str) -> str:
    """``url`` without anything before its last ``@`` (a user, a password, even one holding
    ``/`` or ``@``), terminal-safe: how a URL that is refused is shown."""
    from manifesto.edge.escape import terminal

    if "@" in url:
        head = url[: url.index("://") + 3] if "://" in url.split("@", 1)[0] else ""
        url = head + "***@" + url.rsplit("@", 1)[1]
    return terminal(url, 200)


def url_problem(url) -> str | None:
    """Why ``url`` cannot name a remote cache (None when it can): http(s) in any letter case,
    a host, printable ASCII, and no ``@`` (credentials would be committed with BUILD.yaml or
    shown in logs; a problem never shows what comes before the last ``@``, whatever the scheme)."""
    import re

    if not isinstance(url, str):
        return f"expected an http:// or https:// URL, got {type(url).__name__}"
    if "@" in url:
        after = redact(url).split("***@", 1)[1]
        return f"a URL with credentials ({after[:100]}...) is refused: put a bearer token in {ENV_TOKEN}"
    if not re.fullmatch(r"(?i:https?)://[A-Za-z0-9.\-\[\]:]+(/[A-Za-z0-9._~!$&'()*+,;=:%/-]*)?", url, re.ASCII):
        return f"expected an http:// or https:// URL (host, optional port and path), got {redact(url)!r}"
    from manifesto.edge.http import origin_of

    if origin_of(url) is None:
        return f"expected an http:// or https:// URL with a host and a valid port, got {redact(url)!r}"
    return None


def _number(environ, name: str, default: str, low: float, high: float, what: str, cast=float):
    text = environ.get(name) or default
    try:
        value = cast(text) if text.isascii() else None
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        from manifesto.errors import BuildError

        raise BuildError(f"{name}: expected {what} between {low:g} and {high:g}, got {text[:50]!r}")
    return value


def settings_from_env(environ, url: str | None = None, read_only: bool = False) -> RemoteSettings | None:
    """The remote cache the flags (``url``, ``read_only``) or the environment name; None when
    neither does (then BUILD.yaml's ``remote_cache`` applies). Raises BuildError naming the
    flag or variable of a bad value."""
    import re

    from manifesto.errors import BuildError

    source = "--remote-cache"
    if url is None:
        url, source = environ.get(ENV_URL) or None, ENV_URL
    flag = environ.get(ENV_READ_ONLY, "")
    if flag not in ("", "0", "1", "true", "false"):
        raise BuildError(f"{ENV_READ_ONLY}: expected 1, 0, true or false, got {flag[:50]!r}")
    read_only = read_only or flag in ("1", "true")
    timeout = _number(environ, ENV_TIMEOUT, "5", 0.1, 600, "seconds")
    budget = _number(environ, ENV_BUDGET, "120", 1, 86400, "seconds")
    max_blob = _number(environ, ENV_MAX_BLOB, str(MAX_BLOB), 1024, 1 << 30, "bytes", int)
    token = environ.get(ENV_TOKEN) or None
    if token is not None and not (token.isascii() and token.isprintable() and " " not in token):
        raise BuildError(f"{ENV_TOKEN}: a bearer token is printable ASCII without spaces")
    token_host = (environ.get(ENV_TOKEN_HOST) or "").strip().lower() or None
    if token_host is not None and not re.fullmatch(r"[a-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9a-f:.]+\](:[0-9]{1,5})?", token_host):
        raise BuildError(f"{ENV_TOKEN_HOST}: expected HOST or HOST:PORT, got {token_host[:60]!r}")
    extra = {"read_only": read_only, "token": token, "timeout": timeout, "budget": budget, "max_blob": max_blob,
             "token_host": token_host}
    if url is None:
        return RemoteSettings("", **extra) if token or flag else None
    problem = url_problem(url)
    if problem:
        raise BuildError(f"{source}: {problem}")
    return RemoteSettings(url, **extra)


def _host_of(url: str) -> str:
    """The ``host[:port]`` of an http(s) URL, lower case (what ENV_TOKEN_HOST is compared with)."""
    rest = url.split("://", 1)[1] if "://" in url else url
    return rest.split("/", 1)[0].lower()


class RemoteSettings:
    """Where the shared cache is and how to talk to it (read once at the CLI edge): the URL,
    read-only, the bearer token, seconds per request (``timeout``) and for all of a build's
    requests (``budget``), and the largest blob read or written (``max_blob``, bytes)."""

    __slots__ = ("url", "read_only", "token", "timeout", "budget", "max_blob", "token_host", "withheld")

    def __init__(self, url: str, *, read_only: bool = False, token: str | None = None, timeout: float = 5.0,
                 budget: float = 120.0, max_blob: int = MAX_BLOB, token_host: str | None = None):
        url = url.rstrip("/")
        if "://" in url:  # the scheme in lower case (HTTPS:// names the same cache)
            scheme, rest = url.split("://", 1)
            url = f"{scheme.lower()}://{rest}"
        self.url = url
        self.read_only = read_only
        self.token = token
        self.timeout = timeout
        self.budget = budget
        self.max_blob = max_blob
        self.token_host = token_host
        self.withheld = False  # a token was set but this URL may not have it

    def at(self, url: str, read_only: bool) -> RemoteSettings:
        """These settings for BUILD.yaml's URL, read-only if either says so. The token goes with
        them only when ``MANIFESTO_REMOTE_CACHE_TOKEN_HOST`` names that URL's host (and port)."""
        allowed = self.token is not None and self.token_host is not None and _host_of(url) == self.token_host
        moved = RemoteSettings(url, read_only=read_only or self.read_only, token=self.token if allowed else None,
                               timeout=self.timeout, budget=self.budget, max_blob=self.max_blob,
                               token_host=self.token_host)
        moved.withheld = self.token is not None and not allowed
        return moved

    def __repr__(self) -> str:  # never shows the token
        return f"RemoteSettings({self.url!r}, read_only={self.read_only})"


class RemoteCache:
    """GET and PUT against one remote cache; every failure is a warned miss."""

    def __init__(self, settings: RemoteSettings, warn) -> None:
        self.settings = settings
        self.warn = warn
        self.enabled = True
        self.client = None  # an edge.http.Client, made at the first request
        self.damaged = False  # a blob that did not match its digest was reported

    # -- the two namespaces ------------------------------------------------------------

    def get_action(self, key: str) -> bytes | None:
        return self._get(f"ac/{key}")

    def put_action(self, key: str, record: bytes) -> None:
        self._put(f"ac/{key}", record)

    def get_blob(self, digest: str) -> bytes | None:
        """The blob named ``digest``; None (with a warning) when it is missing or damaged."""
        data = self._get(f"cas/{digest}", limit=self.settings.max_blob)
        if data is not None and sha256_hex(data) != digest:
            if not self.damaged:  # one line per build, however many blobs are damaged
                self.damaged = True
                self.warn(f"remote cache: blob {digest[:16]}... does not match its digest; rendering instead")
            return None
        return data

    def put_blob(self, data: bytes) -> str:
        # Always written: a HEAD would leave a damaged copy on the server in place forever.
        digest = sha256_hex(data)
        if len(data) <= self.settings.max_blob:  # one no build could read back is not sent
            self._put(f"cas/{digest}", data)
        return digest

    # -- transport (manifesto.edge.http) --------------------------------------------------

    def _request(self, method: str, path: str, body: bytes | None = None, limit: int = MAX_ACTION):
        """The reply of one request, or None after a transport failure (warned once)."""
        from manifesto.edge.http import Client, HttpError, describe

        if not self.enabled:
            return None
        try:
            if self.client is None:
                s = self.settings
                self.client = Client(s.url, token=s.token, timeout=s.timeout, budget=s.budget)
            return self.client.request(method, path, body, limit)
        except HttpError as exc:
            self._give_up(f"{method} failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - never a traceback from the cache (an import, a bug)
            self._give_up(f"{method} failed: {describe(exc, (self.settings.token,) if self.settings.token else ())}")
        return None

    def _give_up(self, why: str) -> None:
        from manifesto.edge.escape import hide, terminal

        self.enabled = False
        if self.client is not None:
            self.client.close()
        secrets = (self.settings.token,) if self.settings.token else ()
        self.warn(terminal(f"remote cache {self.settings.url}: {hide(why, secrets)}; building without it",
                           secrets=secrets))

    def _get(self, path: str, limit: int = MAX_ACTION) -> bytes | None:
        reply = self._request("GET", path, limit=limit)
        if reply is None or reply.status == 404:
            return None
        if reply.status != 200:
            self._give_up(f"GET {path.split('/', 1)[0]}/... answered HTTP {reply.status}{_reason(reply)}")
            return None
        return reply.body

    def _put(self, path: str, data: bytes) -> None:
        if self.settings.read_only:
            return
        reply = self._request("PUT", path, data)
        if reply is not None and not 200 <= reply.status < 300:
            self._give_up(f"PUT {path.split('/', 1)[0]}/... answered HTTP {reply.status}{_reason(reply)}")


def shared_cache(session, settings):
    """The remote cache of a build: ``settings`` (a RemoteSettings of the flags and the
    environment), else BUILD.yaml's ``remote_cache`` (with the flags' and environment's other
    settings); None without one."""
    if settings is None or not settings.url:
        state = session.state
        declared = (state.buildfile.config or {}).get("remote_cache") if state.buildfile else None
        if not declared:
            return None
        settings = (settings or RemoteSettings("")).at(declared["url"], declared["read_only"])
    return SharedCache(session, settings)


def _reason(reply) -> str:
    """`` (reason)`` when the server said one (already terminal-safe), else nothing."""
    return f" ({reply.reason})" if reply.reason else ""


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
        self._suffixes: dict[str, str | None] = {}  # cluster name -> its artifacts' suffix
        self._known: tuple[str, ...] | None = None  # what an index may name (_within)
        if settings.withheld:
            from manifesto.edge.escape import terminal

            session.ui.warn(f"remote cache {terminal(settings.url, 200)} (BUILD.yaml's): {ENV_TOKEN} is not sent to it; "
                            f"a URL from the repository gets the token only when {ENV_TOKEN_HOST} names its host "
                            f"({terminal(_host_of(settings.url), 100)})")

    def _index_key(self, item) -> str:
        from manifesto.build_graph.keys import options_bytes
        from manifesto.store import task_key

        s = self.session
        return task_key(f"inputs of {item.pair[0]} @ {item.pair[1]}", (), (),
                        options_bytes(s.renderer, item.context.options), item.context.code)

    def fetch(self, item) -> bool:
        """Settle ``item`` from the remote cache; False (render it) on any miss.

        The cache is advice: it may only supply the text of an artifact, the bytes whose
        SHA-256 its record names under the key this build computes from the files it digests
        itself. Both records go through the edge (``manifesto.edge.entries``): bounded,
        nested at most so deep, typed; the index lists YAML and JSON files of the workspace
        (outside ``out/`` and hidden folders) or of the bundled catalog, the pair's own spec
        and cluster among them; the result is "ok" with no reason, the suffix is the one the
        pair's cluster profile gives here, and the budget has the one shape and adds up. A
        skipped or failed pair is evaluated here: a server never decides an outcome. One
        record that is not so is a miss with a warning, never a write."""
        from manifesto.build_graph.keys import pair_key
        from manifesto.load.catalog import bundled_dir
        from manifesto.load.digest import digest
        from manifesto.edge.entries import BadEntry, decode_remote_index, decode_remote_record
        from manifesto.tasks.status import Source, Status
        from manifesto.tasks.entries import ResultEntry

        s = self.session
        suffix, known = self._expected(item)
        if suffix is None:
            return False  # the cluster profile does not load here: rendering says why
        index_key = self._index_key(item)
        raw = self.remote.get_action(index_key)
        if raw is None:
            return False
        try:
            inputs = decode_remote_index(raw, (f"{bundled_dir()}/catalog",), known, self._within()).inputs
        except BadEntry as exc:
            return self._bad(index_key, exc)
        digests = [s.stat.digest(k) for k in inputs]
        if None in digests:
            return False
        key = pair_key(s.renderer, item.pair, item.context, inputs, digests)
        raw = self.remote.get_action(key)
        if raw is None:
            return False
        try:
            record = decode_remote_record(raw, suffix)
        except BadEntry as exc:
            return self._bad(key, exc)
        blob = self.remote.get_blob(record.text_sha256)
        if blob is None:
            return False
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError:
            return self._bad(record.text_sha256, BadEntry("the blob is not UTF-8"))
        entry = ResultEntry(key, f"render {item.pair[0]} @ {item.pair[1]}", Status.OK, suffix, text,
                            digest(text.encode()), "", tuple(inputs), tuple(digests), record.budget)
        s.tasks.put(entry)
        s.apply_entry(item, entry)
        item.how = Source.REMOTE
        return True

    def _within(self) -> tuple[str, ...]:
        """The workspace files and folders an index may name: BUILD.yaml, every target's file,
        and the top folder of each (``models/``, ``clusters/``, ``routing/``: a spec's base
        files and config.json live there)."""
        if self._known is None:
            paths = [t.path for t in self.session.graph.targets.values() if not t.path.startswith("//")]
            self._known = ("BUILD.yaml", *sorted({p.split("/", 1)[0] + "/" if "/" in p else p for p in paths}))
        return self._known

    def _expected(self, item) -> tuple[str | None, tuple[str, ...]]:
        """The suffix ``item``'s artifact has (None when its cluster profile does not load) and
        the workspace files the build knows it reads (a render's spec and cluster)."""
        graph = self.session.graph
        model, cluster = item.pair
        if model in graph.monitors or model in graph.gitops:
            return ".yaml", ()
        path = graph.clusters[cluster].path
        if cluster not in self._suffixes:
            self._suffixes[cluster] = _platform_suffix(self.session.ws.root, path)
        return self._suffixes[cluster], (graph.source(model), path)

    def _bad(self, key: str, exc) -> bool:
        """A record that does not pass the edge: a miss, and the build stops asking a server
        that serves such records (one warning line)."""
        self.remote._give_up(f"entry {key[:16]}... is not a valid record ({exc})")
        return False

    def publish(self, item, result) -> None:
        """Share a render this build made (its entry in the local store) with other builds."""
        import json

        if self.read_only or not self.remote.enabled:
            return
        entry = self.session.tasks.get(result.key)
        if entry is None or getattr(entry, "status", None) != "ok":
            return  # only artifacts are shared: another build decides a skip or a failure itself
        from manifesto.edge.entries import shared_input_ok
        from manifesto.load.catalog import bundled_dir

        roots = (f"{bundled_dir()}/catalog",)
        if not all(shared_input_ok(p, roots, self._within()) for p in entry.inputs):
            return  # it read a file outside the workspace and the catalog (a user catalog's): no reader takes it
        record = {"task": entry.task, "status": "ok", "suffix": entry.suffix, "reason": "",
                  "budget": entry.budget, "text_sha256": ""}
        data = entry.text.encode()
        if len(data) > self.remote.settings.max_blob:
            return  # no build could read it back
        record["text_sha256"] = self.remote.put_blob(data)
        self.remote.put_action(result.key, json.dumps(record, sort_keys=True).encode())
        self.remote.put_action(self._index_key(item), json.dumps({"inputs": list(entry.inputs)}).encode())


def _platform_suffix(root: str, rel: str) -> str | None:
    """The artifact suffix of the cluster profile ``rel`` (workspace-relative): ``.sbatch``
    for ``platform: slurm``, ``.yaml`` otherwise; None when it does not parse (or is not a
    mapping): then the pair is rendered, which reports the problem."""
    import os

    from manifesto.errors import ManifestoError
    from manifesto.load.yamlio import load_yaml

    try:
        data, _ = load_yaml(os.path.join(root, rel), rel)
    except (ManifestoError, OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return ".sbatch" if data.get("platform") == "slurm" else ".yaml"
