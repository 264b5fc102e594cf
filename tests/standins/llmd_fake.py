"""Small stand-ins for vllm, the endpoint picker (epp), Envoy and the P/D sidecar (pd-sidecar).

One program, picked by the name it is run as (the tests link it as each name). Each one
parses the flags the batch script gives the real program, serves the real ports and health
paths, and writes what it was started with to ``$STANDIN_RECORDS/<prog>-<pid>.json``.

They stand in for the real programs on the local Slurm kit, where every "node" is one
machine: a stand-in listens on its node's address (its ``$SLURMD_NODENAME`` resolved, so a
test can give each node its own loopback address) and reads ``127.0.0.1`` in a config as
that address, as a process on a real node would reach its own host. The gRPC links
(Envoy's ext_proc to the picker, the picker's health service) are plain HTTP/1.1 JSON here:

* Envoy POSTs ``{"method", "path", "headers"}`` of each client request to the picker's
  ``--grpc-port``; the picker answers ``{"headers": {...}}`` with the real header names
  (``x-gateway-destination-endpoint``, and ``x-prefiller-host-port`` for P/D); Envoy sends
  the request, with those headers, to the destination.
* The P/D sidecar calls the prefiller named by ``x-prefiller-host-port`` first, then its
  own node's model server on ``--model-server-port``.

Every stand-in ends by itself after ``$STANDIN_LIFETIME`` seconds (default 180).
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.request

PROG = os.path.basename(sys.argv[0])
ARGS = sys.argv[1:]
ENV = os.environ


def flag(name: str, default: str | None = None) -> str | None:
    """The value of ``--name V`` or ``--name=V`` (the last one given)."""
    found = default
    for i, arg in enumerate(ARGS):
        if arg == name and i + 1 < len(ARGS):
            found = ARGS[i + 1]
        elif arg.startswith(name + "="):
            found = arg.split("=", 1)[1]
    return found


def node_address() -> str:
    node = ENV.get("SLURMD_NODENAME") or "localhost"
    return socket.getaddrinfo(node, None, socket.AF_INET)[0][4][0]


HERE = node_address()


def local(address: str) -> str:
    """``127.0.0.1`` / ``localhost`` / ``0.0.0.0`` of this node: its own address."""
    return HERE if address in ("127.0.0.1", "localhost", "0.0.0.0", "") else address


def record(**extra) -> None:
    info = {"prog": PROG, "args": ARGS, "node": ENV.get("SLURMD_NODENAME"), "address": HERE,
            "uid": ENV.get("MANIFESTO_POD_UID"), "pid": os.getpid(), **extra}
    print("STANDIN " + json.dumps(info, sort_keys=True), flush=True)
    if ENV.get("STANDIN_RECORDS"):
        path = os.path.join(ENV["STANDIN_RECORDS"], f"{PROG}-{os.getpid()}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(info, f)
        os.replace(path + ".tmp", path)


def post_json(url: str, payload: dict, headers: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, json.loads(r.read() or b"{}")


class Handler(http.server.BaseHTTPRequestHandler):
    routes: dict = {}  # (method, path) -> function(handler, body) -> (status, dict)
    fallback = None  # function(handler, body) -> (status, dict) for any other path

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        fn = self.routes.get((method, self.path)) or self.fallback
        if fn is None:
            status, data = 404, {"error": f"{PROG}: no {method} {self.path}"}
        else:
            try:
                status, data = fn(self, body)
            except Exception as exc:  # a stand-in answers 502 rather than dying mid-test
                status, data = 502, {"error": f"{PROG}: {type(exc).__name__}: {exc}"}
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        self._serve("GET")

    def do_POST(self):
        self._serve("POST")

    def log_message(self, *a):
        pass


def serve(port: int, routes: dict, fallback=None) -> None:
    """Serve ``routes`` on this node's address and ``port``, in the background."""
    handler = type("H", (Handler,), {"routes": routes, "fallback": staticmethod(fallback) if fallback else None})
    server = http.server.ThreadingHTTPServer((HERE, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def ok(_h, _b):
    return 200, {}


# -- vllm -------------------------------------------------------------------------------

def vllm() -> list[int]:
    if "--headless" in ARGS:
        return []
    port = int(flag("--port", "8000"))
    model = ARGS[1] if len(ARGS) > 1 and ARGS[0] == "serve" else "?"

    def complete(h, body):
        return 200, {"object": "text_completion", "model": model, "served_by": {
            "prog": "vllm", "uid": ENV.get("MANIFESTO_POD_UID"), "node": ENV.get("SLURMD_NODENAME"),
            "address": HERE, "port": port}, "prefilled_by": h.headers.get("x-manifesto-prefilled-by"),
            "max_tokens": body.get("max_tokens")}

    serve(port, {("GET", "/health"): ok,
                 ("GET", "/v1/models"): lambda h, b: (200, {"object": "list", "data": [{"id": model}]}),
                 ("POST", "/v1/completions"): complete})
    return [port]


# -- pd-sidecar -------------------------------------------------------------------------

def pd_sidecar() -> list[int]:
    port = int(flag("--port", "8000"))
    backend = int(flag("--model-server-port", flag("--vllm-port", "8200")))

    def forward(h, body):
        prefiller = h.headers.get("x-prefiller-host-port")
        extra = {}
        if prefiller:  # prefill first (one token), then decode on this node
            status, answer = post_json(f"http://{prefiller}{h.path}", {**body, "max_tokens": 1})
            if status != 200:
                return status, answer
            extra["x-manifesto-prefilled-by"] = json.dumps(answer["served_by"], sort_keys=True)
        return post_json(f"http://{HERE}:{backend}{h.path}", body, extra)

    serve(port, {("GET", "/health"): ok}, fallback=forward)
    return [port]


# -- epp --------------------------------------------------------------------------------

def epp() -> list[int]:
    from ruamel.yaml import YAML

    config_path = flag("--config-file")
    with open(config_path) as f:
        config = YAML(typ="safe", pure=True).load(f)
    plugins = {p.get("name") or p["type"]: p for p in config["plugins"]}
    discovery = plugins[config["dataLayer"]["discovery"]["pluginRef"]]
    pd = any(p["type"] == "disagg-profile-handler" for p in plugins.values())
    with open(discovery["parameters"]["path"]) as f:
        endpoints = json.load(f)["endpoints"]

    def role(e):
        return e["labels"].get("llm-d.ai/role")

    def pick(_h, _body):
        decode = [e for e in endpoints if role(e) in ("decode", "both", None)]
        if not decode:
            return 503, {"error": "no decode endpoint"}
        target = decode[int(time.monotonic() * 1000) % len(decode)]
        headers = {"x-gateway-destination-endpoint": f"{target['address']}:{target['port']}"}
        if pd:
            prefill = [e for e in endpoints if role(e) == "prefill"]
            headers["x-prefiller-host-port"] = f"{prefill[0]['address']}:{prefill[0]['port']}"
        return 200, {"headers": headers}

    ports = [int(flag("--grpc-port", "9002")), int(flag("--grpc-health-port", "9003")),
             int(flag("--metrics-port", "9090"))]
    serve(ports[0], {("POST", "/"): pick})
    serve(ports[1], {("GET", "/health"): ok})
    serve(ports[2], {("GET", "/metrics"): lambda h, b: (200, {"llm_d_epp_ready_endpoints": len(endpoints)})})
    record_extra["endpoints"] = endpoints
    record_extra["pd"] = pd
    return ports


# -- envoy ------------------------------------------------------------------------------

def _socket_address(holder: dict) -> tuple[str, int]:
    sa = holder["address"]["socket_address"]
    return local(sa["address"]), int(sa["port_value"])


def envoy() -> list[int]:
    from ruamel.yaml import YAML

    with open(flag("-c")) as f:
        config = YAML(typ="safe", pure=True).load(f)
    resources = config["static_resources"]
    listeners = {item["name"]: _socket_address(item) for item in resources["listeners"]}
    [picker] = [c for c in resources["clusters"] if c["name"] == "endpoint-picker"]
    epp_host, epp_port = _socket_address(picker["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"])

    def route(h, body):
        status, decision = post_json(f"http://{epp_host}:{epp_port}/",
                                     {"method": h.command, "path": h.path, "headers": dict(h.headers)})
        if status != 200:
            return status, decision
        headers = decision["headers"]
        return post_json(f"http://{headers['x-gateway-destination-endpoint']}{h.path}", body, headers)

    ports = []
    for name, (_, port) in listeners.items():
        serve(port, {("GET", "/ready"): ok} if name == "ready" else {}, fallback=None if name == "ready" else route)
        ports.append(port)
    admin = _socket_address(config["admin"])[1]
    serve(admin, {("GET", "/ready"): ok})
    record_extra["epp"] = f"{epp_host}:{epp_port}"
    return ports + [admin]


record_extra: dict = {}
PROGRAMS = {"vllm": vllm, "pd-sidecar": pd_sidecar, "epp": epp, "envoy": envoy}

if __name__ == "__main__":
    served = PROGRAMS[PROG]()
    record(ports=served, **record_extra)
    time.sleep(float(ENV.get("STANDIN_LIFETIME", "180")))
