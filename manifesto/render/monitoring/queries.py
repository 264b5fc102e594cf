"""Grafana dashboards and Prometheus rules over the metric names of the pinned releases.

Every metric goes through :func:`metric`, which looks it up in the generated table
(``manifesto.render.metric_names``), so a name the pinned vLLM, router or dcgm-exporter does
not export cannot reach a dashboard. Series carry ``manifesto_instance`` and
``manifesto_role`` (set by the monitors' relabelings); ``$instance`` selects instances.
"""

from __future__ import annotations

import manifesto.render.metric_names as metric_names

__all__ = ["metric", "dashboards", "rules", "used_metrics", "SELECTOR"]

SELECTOR = 'manifesto_instance=~"$instance"'
_RULE_SELECTOR = 'manifesto_instance!=""'
_TABLES = {"vllm:": metric_names.VLLM, "llm_d_": metric_names.EPP, "DCGM_": metric_names.DCGM}


def metric(name: str, suffix: str = "") -> str:
    """``name`` as exposed (``suffix``: ``_bucket``, ``_total``...), checked against the table."""
    table = next(t for prefix, t in _TABLES.items() if name.startswith(prefix))
    entry = table[name]
    kind = entry[0] if isinstance(entry, tuple) else entry
    if suffix == "_bucket" and kind != "histogram":
        raise ValueError(f"{name} is a {kind}, not a histogram")
    return name + suffix


def _vllm_counter(name: str) -> str:
    return metric(name, "" if name.endswith("_total") else "_total")


def _q(quantile: float, name: str, sel: str, by: str = "manifesto_instance") -> str:
    return (f"histogram_quantile({quantile}, sum by (le, {by}) "
            f"(rate({metric(name, '_bucket')}{{{sel}}}[$__rate_interval])))")


def _rate(expr_name: str, sel: str, by: str) -> str:
    return f"sum by ({by}) (rate({expr_name}{{{sel}}}[$__rate_interval]))"


def _panel(title: str, exprs: list[tuple[str, str]], unit: str = "short") -> dict:
    return {"title": title, "type": "timeseries", "unit": unit, "exprs": exprs}


def _serving() -> list[dict]:
    s = SELECTOR
    def quantiles(name):
        return [(_q(0.5, name, s), "p50 {{manifesto_instance}}"), (_q(0.99, name, s), "p99 {{manifesto_instance}}")]

    return [
        _panel("Finished requests / s", [(_rate(_vllm_counter("vllm:request_success"), s,
                                                 "manifesto_instance, finished_reason"),
                                          "{{manifesto_instance}} {{finished_reason}}")], "reqps"),
        _panel("Tokens / s", [
            (_rate(_vllm_counter("vllm:prompt_tokens"), s, "manifesto_instance"), "prompt {{manifesto_instance}}"),
            (_rate(_vllm_counter("vllm:generation_tokens"), s, "manifesto_instance"),
             "generation {{manifesto_instance}}")]),
        _panel("Time to first token", quantiles("vllm:time_to_first_token_seconds"), "s"),
        _panel("Inter-token latency", quantiles("vllm:inter_token_latency_seconds"), "s"),
        _panel("End-to-end request latency", quantiles("vllm:e2e_request_latency_seconds"), "s"),
        _panel("Queue time", quantiles("vllm:request_queue_time_seconds"), "s"),
        _panel("Running and waiting requests", [
            (f"sum by (manifesto_instance, manifesto_role) ({metric('vllm:num_requests_running')}{{{s}}})",
             "running {{manifesto_instance}} {{manifesto_role}}"),
            (f"sum by (manifesto_instance, manifesto_role) ({metric('vllm:num_requests_waiting')}{{{s}}})",
             "waiting {{manifesto_instance}} {{manifesto_role}}")]),
        _panel("KV-cache usage", [(f"max by (manifesto_instance, manifesto_role, pod) "
                                   f"({metric('vllm:kv_cache_usage_perc')}{{{s}}})",
                                   "{{pod}} {{manifesto_role}}")], "percentunit"),
        _panel("Preemptions / s", [(_rate(_vllm_counter("vllm:num_preemptions"), s, "manifesto_instance, pod"),
                                    "{{pod}}")]),
        _panel("Prefix-cache hit rate", [(
            f"{_rate(_vllm_counter('vllm:prefix_cache_hits'), s, 'manifesto_instance')} / "
            f"clamp_min({_rate(_vllm_counter('vllm:prefix_cache_queries'), s, 'manifesto_instance')}, 1)",
            "{{manifesto_instance}}")], "percentunit"),
    ]


def _routing() -> list[dict]:
    s = SELECTOR
    return [
        _panel("Picker requests / s", [(_rate(metric("llm_d_epp_request_total"), s, "manifesto_instance, model_name"),
                                        "{{manifesto_instance}} {{model_name}}")], "reqps"),
        _panel("Picker request errors / s", [(_rate(metric("llm_d_epp_request_error_total"), s,
                                                    "manifesto_instance, error_code"),
                                              "{{manifesto_instance}} {{error_code}}")], "reqps"),
        _panel("Scheduling decisions / s", [(_rate(metric("llm_d_epp_scheduler_attempts_total"), s,
                                                   "manifesto_instance, status"),
                                             "{{manifesto_instance}} {{status}}")], "reqps"),
        _panel("Scheduling latency", [(_q(0.5, "llm_d_epp_scheduler_e2e_duration_seconds", s), "p50 {{manifesto_instance}}"),
                                      (_q(0.99, "llm_d_epp_scheduler_e2e_duration_seconds", s),
                                       "p99 {{manifesto_instance}}")], "s"),
        _panel("Plugin latency p99", [(_q(0.99, "llm_d_epp_plugin_duration_seconds", s,
                                          "le, manifesto_instance, plugin_name"),
                                       "{{manifesto_instance}} {{plugin_name}}")], "s"),
        _panel("Request latency seen by the picker", [
            (_q(0.99, "llm_d_epp_request_duration_seconds", s), "e2e p99 {{manifesto_instance}}"),
            (_q(0.99, "llm_d_epp_request_ttft_seconds", s), "TTFT p99 {{manifesto_instance}}")], "s"),
        _panel("P/D decisions / s", [(_rate(metric("llm_d_epp_disagg_decision_total"), s,
                                            "manifesto_instance, decision_type"),
                                      "{{manifesto_instance}} {{decision_type}}")], "reqps"),
        _panel("Pool load", [
            (f"max by (manifesto_instance) ({metric('llm_d_epp_average_kv_cache_utilization')}{{{s}}})",
             "KV cache {{manifesto_instance}}"),
            (f"max by (manifesto_instance) ({metric('llm_d_epp_average_queue_size')}{{{s}}})",
             "queue {{manifesto_instance}}")]),
        _panel("Ready endpoints", [(f"max by (manifesto_instance) ({metric('llm_d_epp_ready_endpoints')}{{{s}}})",
                                    "{{manifesto_instance}}")]),
    ]


def _gpu() -> list[dict]:
    s = SELECTOR
    by = "manifesto_instance, pod, gpu"

    def gauge(name):
        return f"max by ({by}) ({metric(name)}{{{s}}})"

    nvlink_errors = " + ".join(
        f"sum by ({by}) (increase({metric(n)}{{{s}}}[$__rate_interval]))" for n in (
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
            "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"))
    return [
        _panel("GPU utilisation", [(gauge("DCGM_FI_DEV_GPU_UTIL"), "{{pod}} GPU {{gpu}}")], "percent"),
        _panel("Tensor pipe active", [(gauge("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), "{{pod}} GPU {{gpu}}")],
               "percentunit"),
        _panel("Framebuffer used", [(gauge("DCGM_FI_DEV_FB_USED"), "{{pod}} GPU {{gpu}}")], "decmbytes"),
        _panel("Temperature", [(gauge("DCGM_FI_DEV_GPU_TEMP"), "{{pod}} GPU {{gpu}}")], "celsius"),
        _panel("Power", [(gauge("DCGM_FI_DEV_POWER_USAGE"), "{{pod}} GPU {{gpu}}")], "watt"),
        _panel("NVLink bandwidth", [(f"sum by ({by}) (rate({metric('DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL')}{{{s}}}"
                                     "[$__rate_interval]))", "{{pod}} GPU {{gpu}}")]),
        _panel("NVLink errors (CRC, replay, recovery)", [(nvlink_errors, "{{pod}} GPU {{gpu}}")]),
        _panel("Last XID error", [(gauge("DCGM_FI_DEV_XID_ERRORS"), "{{pod}} GPU {{gpu}}")]),
        _panel("Remapped rows (uncorrectable) and remap failures", [
            (gauge("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"), "remapped {{pod}} GPU {{gpu}}"),
            (gauge("DCGM_FI_DEV_ROW_REMAP_FAILURE"), "failure {{pod}} GPU {{gpu}}")]),
    ]


_BOARDS = {
    "manifesto-serving": ("Manifesto / vLLM serving", _serving),
    "manifesto-routing": ("Manifesto / llm-d routing", _routing),
    "manifesto-gpu": ("Manifesto / GPU and NVLink health", _gpu),
}


def _templating(first_metric: str) -> dict:
    return {"list": [
        {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source",
         "current": {"text": "Prometheus", "value": "manifesto-prometheus"}},
        {"name": "instance", "type": "query", "label": "Instance", "multi": True, "includeAll": True,
         "allValue": ".+", "refresh": 2, "datasource": {"type": "prometheus", "uid": "${datasource}"},
         "query": {"query": f"label_values({first_metric}, manifesto_instance)", "refId": "instance"},
         "definition": f"label_values({first_metric}, manifesto_instance)"},
    ]}


def _board(uid: str, title: str, panels: list[dict]) -> dict:
    out = []
    for i, p in enumerate(panels):
        out.append({
            "id": i + 1, "type": p["type"], "title": p["title"],
            "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "fieldConfig": {"defaults": {"unit": p["unit"]}, "overrides": []},
            "targets": [{"refId": chr(ord("A") + j), "expr": e, "legendFormat": legend,
                         "datasource": {"type": "prometheus", "uid": "${datasource}"}}
                        for j, (e, legend) in enumerate(p["exprs"])],
        })
    first = {"manifesto-serving": "vllm:num_requests_running", "manifesto-routing": "llm_d_epp_ready_endpoints",
             "manifesto-gpu": "DCGM_FI_DEV_GPU_UTIL"}[uid]
    return {"uid": uid, "title": title, "tags": ["manifesto"], "editable": True, "schemaVersion": 39,
            "version": 1, "refresh": "30s", "time": {"from": "now-6h", "to": "now"}, "timezone": "browser",
            "templating": _templating(first), "annotations": {"list": []}, "panels": out}


def dashboards() -> dict[str, dict]:
    """Grafana dashboards by uid."""
    return {uid: _board(uid, title, build()) for uid, (title, build) in _BOARDS.items()}


def rules() -> dict:
    """Prometheus rule groups: recording rules for the latency quantiles, and alerts."""
    s = _RULE_SELECTOR

    def q(quantile, name):
        return (f"histogram_quantile({quantile}, sum by (le, manifesto_instance) "
                f"(rate({metric(name, '_bucket')}{{{s}}}[5m])))")

    records = [
        {"record": "manifesto_instance:vllm_time_to_first_token_seconds:p99",
         "expr": q(0.99, "vllm:time_to_first_token_seconds")},
        {"record": "manifesto_instance:vllm_inter_token_latency_seconds:p99",
         "expr": q(0.99, "vllm:inter_token_latency_seconds")},
        {"record": "manifesto_instance:vllm_e2e_request_latency_seconds:p99",
         "expr": q(0.99, "vllm:e2e_request_latency_seconds")},
        {"record": "manifesto_instance:llm_d_epp_scheduler_e2e_duration_seconds:p99",
         "expr": q(0.99, "llm_d_epp_scheduler_e2e_duration_seconds")},
    ]

    def alert(name, expr, for_, severity, summary):
        return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": severity},
                "annotations": {"summary": summary}}

    alerts = [
        alert("ManifestoTargetDown", f'up{{{s}}} == 0', "10m", "warning",
              "{{ $labels.manifesto_instance }}: {{ $labels.pod }} ({{ $labels.manifesto_component }}) "
              "has not been scraped for 10 minutes"),
        alert("ManifestoKVCacheFull", f"max by (manifesto_instance, pod) ({metric('vllm:kv_cache_usage_perc')}"
              f"{{{s}}}) > 0.95", "15m", "warning",
              "{{ $labels.pod }}: KV cache above 95% for 15 minutes; expect preemptions"),
        alert("ManifestoRequestsQueued", f"sum by (manifesto_instance) ({metric('vllm:num_requests_waiting')}"
              f"{{{s}}}) > 0 and sum by (manifesto_instance) ({metric('vllm:num_requests_running')}{{{s}}}) == 0",
              "10m", "critical", "{{ $labels.manifesto_instance }}: requests wait but none run"),
        alert("ManifestoPreempting", f"sum by (manifesto_instance) (rate({_vllm_counter('vllm:num_preemptions')}"
              f"{{{s}}}[5m])) > 1", "15m", "warning",
              "{{ $labels.manifesto_instance }}: more than one preemption per second"),
        alert("ManifestoNoReadyEndpoints", f"max by (manifesto_instance) ({metric('llm_d_epp_ready_endpoints')}"
              f"{{{s}}}) == 0", "5m", "critical",
              "{{ $labels.manifesto_instance }}: the endpoint picker has no ready model server"),
        alert("ManifestoGPUXidError", f"max by (manifesto_instance, pod, gpu) ({metric('DCGM_FI_DEV_XID_ERRORS')}"
              f"{{{s}}}) > 0", "0m", "critical", "{{ $labels.pod }} GPU {{ $labels.gpu }}: XID {{ $value }}"),
        alert("ManifestoNVLinkErrors", " + ".join(
            f"sum by (manifesto_instance, pod, gpu) (increase({metric(n)}{{{s}}}[10m]))" for n in (
                "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
                "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"))
              + " > 0", "5m", "warning", "{{ $labels.pod }} GPU {{ $labels.gpu }}: NVLink errors in 10 minutes"),
        alert("ManifestoGPURowRemapFailure", f"max by (manifesto_instance, pod, gpu) "
              f"({metric('DCGM_FI_DEV_ROW_REMAP_FAILURE')}{{{s}}}) > 0", "0m", "critical",
              "{{ $labels.pod }} GPU {{ $labels.gpu }}: row remapping failed; drain the node"),
    ]
    return {"groups": [{"name": "manifesto-recording", "rules": records},
                       {"name": "manifesto-alerts", "rules": alerts}]}


#: What :func:`metric` may append to a table name.
_SUFFIXES = ("_bucket", "_total", "_sum", "_count")


def used_metrics() -> set[str]:
    """Every table metric the dashboards and rules use: each name in their text that is a
    table name, or one with a suffix :func:`metric` appends (``_bucket``, ``_total``...)."""
    import json
    import re

    known = {name for table in _TABLES.values() for name in table}
    text = json.dumps([dashboards(), rules()])
    used = set()
    for word in set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", text)):
        if word in known:
            used.add(word)
        else:
            used.update(word.removesuffix(s) for s in _SUFFIXES if word.endswith(s) and word.removesuffix(s) in known)
    return used
