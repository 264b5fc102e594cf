"""A small metrics endpoint serving the real metric names of the pinned vLLM, endpoint picker
and dcgm-exporter (``manifesto.render.metric_names``), for the monitoring tests' Prometheus.

Counters and histograms grow with every scrape, so rates are positive; gauges sit where every
alert of the rules fires (KV cache 97%, requests waiting with none running, no ready
endpoints, an XID error, a failed row remap), so each alert query returns data.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from manifesto.render import metric_names

__all__ = ["exposition", "serve", "GAUGES"]

LABELS = ('model_name="m",engine="0",finished_reason="stop",error_code="429",status="success",'
          'plugin_name="p",plugin_type="t",decision_type="prefill-decode",name="pool",gpu="0",UUID="GPU-0"')
#: Gauge values that trip the alerts; anything unlisted is 1.
GAUGES = {
    "vllm:kv_cache_usage_perc": 0.97,
    "vllm:num_requests_running": 0,
    "vllm:num_requests_waiting": 3,
    "llm_d_epp_ready_endpoints": 0,
    "DCGM_FI_DEV_XID_ERRORS": 79,
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": 1,
}
_BUCKETS = ("0.01", "0.1", "1", "10", "+Inf")


def _family(name: str, kind: str, step: int) -> list[str]:
    if kind == "counter":
        exposed = name if name.endswith("_total") or name.startswith("DCGM_") else name + "_total"
        return [f"# TYPE {exposed} counter", f"{exposed}{{{LABELS}}} {5 * step}"]
    if kind == "histogram":
        lines = [f"# TYPE {name} histogram"]
        lines += [f'{name}_bucket{{{LABELS},le="{le}"}} {step * (i + 1)}' for i, le in enumerate(_BUCKETS)]
        return lines + [f"{name}_sum{{{LABELS}}} {step * 2.5}", f"{name}_count{{{LABELS}}} {step * len(_BUCKETS)}"]
    return [f"# TYPE {name} gauge", f"{name}{{{LABELS}}} {GAUGES.get(name, 1)}"]


def exposition(step: int) -> str:
    """The text format body of the ``step``-th scrape."""
    lines = []
    for name, kind in (*metric_names.VLLM.items(), *metric_names.EPP.items()):
        lines += _family(name, kind, step)
    for name, (kind, _default) in metric_names.DCGM.items():
        lines += _family(name, kind, step)
    return "\n".join(lines) + "\n"


def serve() -> tuple[ThreadingHTTPServer, int]:
    """Serve ``/metrics`` on 127.0.0.1 (a free port) from a daemon thread; returns (server, port)."""
    state = {"step": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            with lock:
                state["step"] += 1
                body = exposition(state["step"]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]
