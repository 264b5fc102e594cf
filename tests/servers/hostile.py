"""Tiny hostile HTTP servers on 127.0.0.1 (port 0), one behaviour each, for the remote cache.

``Hostile(answer)`` accepts connections in a thread; for each request it reads the head
(and the body a Content-Length announces), records the raw bytes in ``seen`` and calls
``answer(server, conn, head)``, which writes whatever it likes to the socket; then the
connection is closed. ``stop()`` ends it (a dripping answer checks ``server.stopped``).

``Storing()`` is an honest cache (GET and PUT on a dict, ``entries``) whose entries a test
can damage between builds; it records request heads in ``seen`` too.
"""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Hostile", "Storing", "drip", "send"]


class Hostile:
    def __init__(self, answer) -> None:
        self.answer = answer
        self.seen: list[bytes] = []
        self.stopped = threading.Event()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 1 << 20:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                head += chunk
            head, _, body = head.partition(b"\r\n\r\n")
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    want = int(line.split(b":", 1)[1])
                    while len(body) < want:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        body += chunk
            self.seen.append(head + b"\r\n\r\n" + body)
            self.answer(self, conn, head)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.stopped.set()
        self.listener.close()
        self.thread.join(2)


def send(conn: socket.socket, data: bytes) -> None:
    try:
        conn.sendall(data)
    except OSError:
        pass


def drip(server: Hostile, conn: socket.socket, data: bytes, every: float = 0.05, forever: bytes = b"a") -> None:
    """Send ``data`` then ``forever`` one byte every ``every`` seconds, until stopped or cut."""
    send(conn, data)
    while not server.stopped.is_set():
        try:
            conn.sendall(forever)
        except OSError:
            return
        time.sleep(every)


class Storing:
    """An honest remote cache in memory: PUT stores, GET returns or 404s."""

    def __init__(self) -> None:
        self.entries: dict[str, bytes] = {}
        self.seen: list[str] = []
        store = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - http.server's naming
                store.seen.append(f"GET {self.path} {self.headers.get('Authorization', '')}")
                data = store.entries.get(self.path)
                self.send_response(200 if data is not None else 404)
                self.send_header("Content-Length", str(len(data or b"")))
                self.end_headers()
                self.wfile.write(data or b"")

            def do_PUT(self):  # noqa: N802
                store.seen.append(f"PUT {self.path} {self.headers.get('Authorization', '')}")
                store.entries[self.path] = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
