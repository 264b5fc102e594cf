"""A real nginx with WebDAV PUT on 127.0.0.1, the HTTP remote-cache backend Bazel documents.

``start(tmp)`` writes a config below ``tmp``, starts nginx in the foreground on a free port
and returns a ``Server``; ``stop()`` ends it. nginx comes from Debian's packages (installed
by ``.ci/run``); without it the tests that need it skip, and fail under ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["Server", "nginx_binary", "start", "free_port"]

TOKEN_HEADER_CHECK = """
        if ($http_authorization != "Bearer {token}") {{ return 401; }}"""

CONFIG = """daemon off;
user root root;
worker_processes 1;
pid {run}/nginx.pid;
error_log {run}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log {run}/access.log;
    client_body_temp_path {run}/body;
    proxy_temp_path {run}/proxy;
    fastcgi_temp_path {run}/fastcgi;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        client_max_body_size 64m;
        location / {{{auth}
            dav_methods PUT;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
        }}
    }}
}}
"""


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, process: subprocess.Popen, url: str, root: Path, run: Path) -> None:
        self.process, self.url, self.root, self.run = process, url, root, run

    def requests(self) -> list[str]:
        """The request lines nginx logged ("PUT /ac/... HTTP/1.1"), oldest first."""
        log = self.run / "access.log"
        lines = log.read_text().splitlines() if log.exists() else []
        return [line.split('"')[1] for line in lines if line.count('"') >= 2]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def start(tmp: Path, token: str | None = None) -> Server:
    binary = nginx_binary()
    if binary is None:
        raise FileNotFoundError("nginx")
    root, run = tmp / "dav", tmp / "nginx"
    root.mkdir(parents=True)
    run.mkdir(parents=True)
    port = free_port()
    auth = TOKEN_HEADER_CHECK.format(token=token) if token else ""
    conf = run / "nginx.conf"
    conf.write_text(CONFIG.format(run=run, port=port, root=root, auth=auth))
    process = subprocess.Popen([binary, "-c", str(conf), "-p", str(run)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited: {process.stderr.read().decode(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return Server(process, f"http://127.0.0.1:{port}", root, run)
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("nginx did not start listening within 10 s")
