"""Namespace-scoped monitoring of rendered instances: PodMonitors for every metrics endpoint
the renders expose, the same scrape jobs as a plain Prometheus configuration (for a
Prometheus without the operator), alerting and recording rules, RBAC for a Prometheus and a
Grafana confined to the namespace, and Grafana dashboards.

Everything comes from the instances' Plans (names, labels, ports, sidecars, routing
frontend), so the monitors select exactly what the manifests run. Pure: no files, no clock.
"""

from __future__ import annotations

from manifesto.render.monitoring.objects import monitoring_objects, pod_monitors, scrape_config
from manifesto.render.monitoring.queries import dashboards, rules

__all__ = ["monitoring_objects", "pod_monitors", "scrape_config", "dashboards", "rules", "render_monitoring"]


def render_monitoring(plans, namespace: str, command: list[str], cluster_yaml: str) -> str:
    """The monitoring objects as YAML, under a header naming the command that made them.

    ``command`` holds the shell words after ``render monitoring`` (specs and options);
    ``cluster_yaml`` is inlined, like every artifact's cluster."""
    from manifesto.render.header import RUN_NOTE, command_lines
    from manifesto.render.k8s.validity import check_objects
    from manifesto.yamlemit import dump_all

    lines = [
        *command_lines("render monitoring", [("--cluster", "MANIFESTO_CLUSTER", cluster_yaml)], command),
        RUN_NOTE,
        "# Apply with kubectl apply -f; PodMonitors need the Prometheus operator's CRDs, while the",
        "# ConfigMap's prometheus.yml scrapes the same targets for a Prometheus without it.",
    ]
    return "\n".join(lines) + "\n" + dump_all(check_objects(monitoring_objects(plans, namespace)))
