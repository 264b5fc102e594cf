"""The remote cache's HTTP client: one origin, bounded bodies, hard deadlines, one-line errors.

Built on urllib3 (imported when a client is made, so only a build with a remote cache pays
for it), which parses the replies, keeps the connection alive between requests and checks
TLS certificates. On top of it this module holds the edge's rules:

- **one origin**: ``http`` or ``https`` only; requests go to the base URL's scheme, host and
  port. A redirect to the same origin is followed (GET only, three at most); a redirect to
  any other origin is refused, so the bearer token never leaves for another host or port.
- **bounded bodies**: a reply whose ``Content-Length`` is over the caller's limit is refused
  before its body is read; a body is read in pieces and refused once it passes the limit.
  Content encodings are not decoded (no gzip bomb): the caller checks the raw bytes.
- **deadlines**: each request has ``timeout`` seconds from its start to the last byte of its
  reply, and all of a client's requests together have ``budget`` seconds. A timer cuts the
  socket when either runs out, so a server that drips one byte at a time cannot hold a build.
- **one line**: every failure (connection, TLS, a reply that is not HTTP, over-long header
  lines, a body cut short, a timeout, MemoryError) is raised as :class:`HttpError`, whose
  text is one terminal-safe line that never holds the token.
"""

from __future__ import annotations

import socket
import threading
import time

from manifesto.edge.escape import terminal

__all__ = ["HttpError", "Reply", "Client", "origin_of", "MAX_REDIRECTS"]

MAX_REDIRECTS = 3
_CHUNK = 64 << 10


class HttpError(Exception):
    """A request that got no usable reply; ``str()`` is one safe line saying why."""


class Reply:
    """A complete reply: ``status``, ``reason`` (terminal-safe) and ``body`` (bytes)."""

    __slots__ = ("status", "reason", "body")

    def __init__(self, status: int, reason: str, body: bytes) -> None:
        self.status, self.reason, self.body = status, reason, body


def origin_of(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL (scheme and host lower-cased, the default
    port filled in); None for any other URL or one that does not parse."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80)


class Client:
    """Requests to one origin below ``base`` (an http(s) URL without credentials)."""

    def __init__(self, base: str, *, token: str | None = None, timeout: float = 5.0, budget: float = 120.0) -> None:
        from urllib.parse import urlsplit

        origin = origin_of(base)
        if origin is None or "@" in urlsplit(base).netloc:
            raise HttpError("expected an http:// or https:// URL without credentials")
        self.origin = origin
        self.prefix = urlsplit(base).path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.budget = budget
        self.spent = 0.0  # seconds of the budget used so far
        self._pool = None
        self._sock = None  # the socket of the connection in use (the pool holds one)
        self._lock = threading.Lock()
        self._cut = False

    # -- public ------------------------------------------------------------------------

    def request(self, method: str, path: str, body: bytes | None = None, limit: int = 1 << 20) -> Reply:
        """``method`` on ``<base>/<path>``: the reply, its body at most ``limit`` bytes.

        Raises :class:`HttpError` on any failure; an HTTP error status is a reply, not a failure.
        """
        target = f"{self.prefix}/{path}"
        for _ in range(MAX_REDIRECTS + 1):
            reply, location = self._once(method, target, body, limit)
            if location is None:
                return reply
            if method != "GET":
                raise HttpError(f"answered HTTP {reply.status} (a redirect) to a {method}")
            target = self._same_origin(target, location)
        raise HttpError(f"more than {MAX_REDIRECTS} redirects")

    def _secrets(self) -> tuple[str, ...]:
        """What no text from the server may show: the bearer token."""
        return (self.token,) if self.token else ()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    # -- one exchange ------------------------------------------------------------------

    def _once(self, method: str, target: str, body: bytes | None, limit: int):
        left = self.budget - self.spent
        if left <= 0:
            raise HttpError(f"timed out (its replies took over {self.budget:g}s in all)")
        allowed = min(self.timeout, left)
        late = (f"timed out (no complete reply within {allowed:g}s)" if allowed == self.timeout
                else f"timed out (its replies took over {self.budget:g}s in all)")
        headers = {"User-Agent": "llm-manifesto"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            headers["Content-Type"] = "application/octet-stream"
        started = time.monotonic()
        self._cut = False
        timer = threading.Timer(allowed, self._cut_socket)
        timer.daemon = True
        timer.start()
        response = None
        try:
            pool = self._connect()
            import urllib3

            response = pool.urlopen(method, target, body=body, headers=headers, retries=False, redirect=False,
                                    assert_same_host=True, preload_content=False, decode_content=False,
                                    release_conn=False,
                                    timeout=urllib3.Timeout(connect=allowed, read=allowed))
            status = response.status
            reason = terminal(response.reason or "", 80, self._secrets())
            location = response.headers.get("Location") if 300 <= status < 400 else None
            if 300 <= status < 400 and location is None:
                location = ""
            data = self._body(response, limit)
            response.release_conn()
            response = None
        except HttpError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the edge: anything a reply causes is one line
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            why = describe(exc, self._secrets())
            if self._cut or why == "timed out":
                raise HttpError(late) from None
            raise HttpError(why) from None
        finally:
            timer.cancel()
            self.spent += time.monotonic() - started
            if response is not None:  # given up half-way: the connection is not reused
                self._drop(response)
        if self._cut:  # a body without a length ends at the cut: it is not the whole reply
            raise HttpError(late)
        return Reply(status, reason, data), location

    def _body(self, response, limit: int) -> bytes:
        length = response.headers.get("Content-Length")
        if length is not None:
            if not (length.isascii() and length.strip().isdigit()):
                raise HttpError("a reply with a malformed Content-Length")
            if int(length) > limit:
                raise HttpError(f"a reply of {int(length) if len(length) < 20 else 'over 10**19'} bytes, "
                                f"over the {limit}-byte limit")
        chunks, total = [], 0
        while True:
            chunk = response.read1(_CHUNK, decode_content=False)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise HttpError(f"a reply of over {limit} bytes, the limit")
            chunks.append(chunk)
        return b"".join(chunks)

    def _same_origin(self, target: str, location: str) -> str:
        from urllib.parse import urljoin, urlsplit

        here = f"{self.origin[0]}://{self.origin[1]}:{self.origin[2]}{target}"
        there = urljoin(here, location.strip()) if location else ""
        if not there or origin_of(there) != self.origin or "@" in urlsplit(there).netloc:
            return _refuse_redirect(there, self._secrets())
        parts = urlsplit(there)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    # -- the connection and its watchdog -------------------------------------------------

    def _connect(self):
        if self._pool is None:
            import urllib3
            from urllib3 import connection, connectionpool

            client = self
            scheme, host, port = self.origin
            base_pool = connectionpool.HTTPSConnectionPool if scheme == "https" else connectionpool.HTTPConnectionPool
            base_conn = connection.HTTPSConnection if scheme == "https" else connection.HTTPConnection

            class Connection(base_conn):
                def connect(self) -> None:
                    super().connect()
                    client._sock = self.sock  # the watchdog's handle on the connection in use

            class Pool(base_pool):
                ConnectionCls = Connection

            self._pool = Pool(host, port, maxsize=1, block=False, retries=False,
                              timeout=urllib3.Timeout(connect=self.timeout, read=self.timeout))
        return self._pool

    def _cut_socket(self) -> None:
        """The deadline passed: shut the socket down, which ends a blocked read at once."""
        self._cut = True
        sock = self._sock
        if sock is not None:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except (OSError, ValueError, TypeError):
                pass

    def _drop(self, response) -> None:
        try:
            conn = getattr(response, "connection", None)
            response.close()
            if conn is not None:
                conn.close()
        except Exception:  # noqa: BLE001 - closing what already failed
            pass
        if self._pool is not None:  # a fresh pool: the broken connection is never handed out again
            self._pool.close()
            self._pool = None
            self._sock = None


def _refuse_redirect(there: str, secrets: tuple[str, ...] = ()):
    origin = origin_of(there) if there else None
    where = f"{origin[0]}://{origin[1]}:{origin[2]}" if origin else "a URL that is not http(s)"
    raise HttpError(f"redirected to another origin ({terminal(where, 120, secrets)}); not followed")


def describe(exc: BaseException, secrets: tuple[str, ...] = ()) -> str:
    """One terminal-safe line for a transport failure (never the request's headers, nor any
    of ``secrets``: a server's text may echo the token)."""
    import http.client
    import ssl

    seen = []
    todo = [exc]
    while todo and len(seen) < 8:  # the error and what caused it (urllib3 wraps http.client's)
        e = todo.pop(0)
        if not isinstance(e, BaseException) or e in seen:
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__, *[a for a in getattr(e, "args", ()) if isinstance(a, BaseException)],
                 getattr(e, "reason", None)]
    for e in seen:
        if isinstance(e, MemoryError):
            return "out of memory reading a reply"
        if isinstance(e, (TimeoutError, socket.timeout)) or type(e).__name__.endswith("TimeoutError"):
            return "timed out"
        if isinstance(e, http.client.LineTooLong):
            return "a reply with a header line over 64 KiB"
        if isinstance(e, http.client.RemoteDisconnected):
            return "the server closed the connection without a reply"
        if isinstance(e, http.client.BadStatusLine):
            return "a reply that is not HTTP"
        if isinstance(e, http.client.IncompleteRead) or type(e).__name__ == "IncompleteRead":
            return "a reply cut short"
        if isinstance(e, http.client.HTTPException) and not isinstance(e, http.client.ImproperConnectionState):
            return f"a reply that is not valid HTTP ({terminal(e, 80, secrets)})"
        if isinstance(e, ssl.SSLError):
            return f"TLS: {terminal(getattr(e, 'reason', None) or e, 120, secrets)}"
        if isinstance(e, ConnectionRefusedError):
            return "connection refused"
        if isinstance(e, socket.gaierror):
            return f"cannot resolve the host ({terminal(e.strerror or e, 80, secrets)})"
    for e in seen:
        if isinstance(e, OSError) and e.strerror:
            return terminal(e.strerror, 120, secrets)
    text = str(exc)
    return terminal(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 160, secrets)
