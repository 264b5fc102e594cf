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


def render_monitoring(plans, options, model_yamls: list[str], cluster_yaml: str,
                      routing_yaml: str | None = None) -> str:
    """The monitoring objects as YAML, under a header whose command regenerates them: every
    spec (flattened), the cluster and a routing profile inlined as heredocs, then the options."""
    from manifesto.render.header import provenance_header
    from manifesto.render.k8s.validity import check_objects
    from manifesto.util.yamlemit import dump_all

    header = provenance_header("render monitoring", list(model_yamls), cluster_yaml, options=options,
                               routing_yaml=routing_yaml, notes=(
                                   "# Apply with kubectl apply -f; PodMonitors need the Prometheus operator's CRDs, "
                                   "while the",
                                   "# ConfigMap's prometheus.yml scrapes the same targets for a Prometheus without it."))
    return header + dump_all(check_objects(monitoring_objects(plans, options.namespace)))
