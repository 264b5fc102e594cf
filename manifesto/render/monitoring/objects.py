"""PodMonitors, the equivalent Prometheus scrape jobs, RBAC and ConfigMaps."""

from __future__ import annotations

import json
import re

from manifesto.util.hashing import sha256_hex
from manifesto.render.envoy import STATS_PATH as ENVOY_STATS_PATH
from manifesto.resolve import names
from manifesto.resolve.names import (
    COMPONENT_LABEL, INSTANCE_LABEL, MANAGED_BY, MANAGED_BY_LABEL, ROLE_LABEL,
)
from manifesto.util.yamlemit import dump_yaml

__all__ = ["monitoring_objects", "pod_monitors", "scrape_config", "helm_values", "STACK", "ENVOY_STATS_PATH",
           "ISTIO_STATS_PORT", "PROMETHEUS_CHART", "GRAFANA_CHART"]

#: Name prefix of the namespace-wide objects (RBAC, configuration, dashboards).
STACK = "manifesto-monitoring"
#: Istio's generated gateway Deployment exposes Envoy statistics on this named port
#: (istio/istio manifests/charts/istio-control/istio-discovery/files/kube-gateway.yaml).
ISTIO_STATS_PORT = "http-envoy-prom"
GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
_GROUP = "monitoring.coreos.com"



def _meta_label(label: str) -> str:
    return "__meta_kubernetes_pod_label_" + re.sub(r"[^A-Za-z0-9_]", "_", label)


def _name(*parts: str) -> str:
    name = "-".join(parts)
    if len(name) <= 63:
        return name
    return f"{name[:54].rstrip('-')}-{sha256_hex(name.encode())[:8]}"


def _target_labels(component: str) -> list[dict]:
    """Labels every series carries, so dashboards filter by instance and role."""
    return [
        {"sourceLabels": [_meta_label(INSTANCE_LABEL)], "targetLabel": "manifesto_instance", "action": "replace"},
        {"sourceLabels": [_meta_label(ROLE_LABEL)], "targetLabel": "manifesto_role", "action": "replace"},
        {"targetLabel": "manifesto_component", "replacement": component, "action": "replace"},
    ]


def _monitor(plan, name: str, selector: dict, endpoints: list[dict], component: str) -> dict:
    labels = {**plan.labels, COMPONENT_LABEL: "monitoring"}
    return {
        "apiVersion": f"{_GROUP}/v1",
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": plan.namespace, "labels": labels},
        "spec": {
            "namespaceSelector": {"matchNames": [plan.namespace]},
            "selector": {"matchLabels": dict(sorted(selector.items()))},
            "podMetricsEndpoints": [
                {**ep, "relabelings": [*ep.get("relabelings", []), *_target_labels(component)]} for ep in endpoints
            ],
        },
    }


def _vllm_monitors(plan) -> list[dict]:
    out = []
    for role in plan.roles:
        lay = role.layout
        keep = []
        if role.workload_kind == "LeaderWorkerSet" and tuple(lay.serving_nodes) != tuple(range(lay.nodes)):
            # Headless pods of a multi-node rank run no API server: scrape the serving ones only.
            keep = [{"sourceLabels": [_meta_label(names.LWS_WORKER_INDEX_LABEL)], "action": "keep",
                     "regex": "|".join(str(n) for n in lay.serving_nodes)}]
        endpoints = [{"port": f"vllm-{i}", "path": "/metrics", "relabelings": list(keep)}
                     for i in range(len(lay.backend_ports))]
        out.append(_monitor(plan, _name(plan.instance, "vllm", role.name), role.selector, endpoints, "vllm"))
    return out


def _exporter_monitors(plan) -> list[dict]:
    out = []
    selector = {INSTANCE_LABEL: plan.instance, COMPONENT_LABEL: "model-server"}
    if "dcgm-exporter" in plan.sidecars:
        out.append(_monitor(plan, _name(plan.instance, "dcgm"), selector,
                            [{"port": "dcgm", "path": "/metrics"}], "dcgm-exporter"))
    if "node-exporter" in plan.sidecars and plan.platform != "openshift":
        out.append(_monitor(plan, _name(plan.instance, "node"), selector,
                            [{"port": "node-metrics", "path": "/metrics"}], "node-exporter"))
    return out


def _routing_monitors(plan) -> list[dict]:
    if plan.routing is None:
        return []
    epp = {INSTANCE_LABEL: plan.instance, COMPONENT_LABEL: "endpoint-picker"}
    out = [_monitor(plan, _name(plan.instance, "epp"), epp, [{"port": "metrics", "path": "/metrics"}],
                    "endpoint-picker")]
    if plan.routing.frontend == "standalone":
        out.append(_monitor(plan, _name(plan.instance, "envoy"), epp,
                            [{"port": "envoy-ready", "path": ENVOY_STATS_PATH}], "envoy"))
    else:
        out.append(_monitor(plan, _name(plan.instance, "gateway"), {GATEWAY_NAME_LABEL: names.gateway(plan.instance)},
                            [{"port": ISTIO_STATS_PORT, "path": ENVOY_STATS_PATH}], "gateway"))
    return out


def pod_monitors(plans) -> list[dict]:
    """The PodMonitors of every instance, in a stable order."""
    out = []
    for plan in sorted(plans, key=lambda p: p.instance):
        out += _vllm_monitors(plan) + _routing_monitors(plan) + _exporter_monitors(plan)
    names_seen = [m["metadata"]["name"] for m in out]
    dup = sorted({n for n in names_seen if names_seen.count(n) > 1})
    if dup:
        from manifesto.errors import ResolveError

        raise ResolveError(f"two instances give the PodMonitor name '{dup[0]}'; render them into separate namespaces "
                           "or give them different releases")
    return out


_SNAKE = {"sourceLabels": "source_labels", "targetLabel": "target_label"}


def _job(monitor: dict, index: int, ep: dict) -> dict:
    """The scrape job the Prometheus operator would generate for one PodMonitor endpoint."""
    spec = monitor["spec"]
    relabel = [{"source_labels": [_meta_label(k)], "regex": re.escape(v), "action": "keep"}
               for k, v in spec["selector"]["matchLabels"].items()]
    relabel.append({"source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": re.escape(ep["port"]),
                    "action": "keep"})
    relabel += [
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace", "action": "replace"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod", "action": "replace"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container", "action": "replace"},
    ]
    relabel += [{_SNAKE.get(k, k): v for k, v in r.items()} for r in ep.get("relabelings", [])]
    return {
        "job_name": f"podMonitor/{monitor['metadata']['namespace']}/{monitor['metadata']['name']}/{index}",
        "metrics_path": ep["path"],
        "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [monitor["metadata"]["namespace"]]}}],
        "relabel_configs": relabel,
    }


def scrape_config(monitors: list[dict], rule_file: str = "/etc/prometheus/rules/manifesto.rules.yml") -> dict:
    """A Prometheus configuration scraping what ``monitors`` select, for a Prometheus without
    the operator (the ConfigMap's ``prometheus.yml``)."""
    jobs = [_job(m, i, ep) for m in monitors for i, ep in enumerate(m["spec"]["podMetricsEndpoints"])]
    return {"global": {"scrape_interval": "15s", "evaluation_interval": "15s"},
            "rule_files": [rule_file], "scrape_configs": jobs}


def _stack_meta(namespace: str, name: str, extra: dict | None = None) -> dict:
    labels = {MANAGED_BY_LABEL: MANAGED_BY, COMPONENT_LABEL: "monitoring", **(extra or {})}
    return {"name": name, "namespace": namespace, "labels": dict(sorted(labels.items()))}


def _rbac(namespace: str, account: str, rules: list[dict]) -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _stack_meta(namespace, account)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _stack_meta(namespace, account),
         "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _stack_meta(namespace, account),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
         "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]},
    ]


_READ = ["get", "list", "watch"]
#: The community charts the Helm values are written for (keys read from their values.yaml).
PROMETHEUS_CHART = "prometheus-community/prometheus 29.27.0"
GRAFANA_CHART = "grafana/grafana 10.5.14"


def helm_values(monitors: list[dict]) -> dict[str, dict]:
    """Values for installing Prometheus and Grafana in the namespace with the community charts,
    using this stack's ServiceAccounts and Roles (so the charts create no cluster-wide RBAC)."""
    from manifesto.render.monitoring.queries import rules

    config = scrape_config(monitors, rule_file="/etc/config/manifesto.rules.yml")
    prometheus = {
        "rbac": {"create": False},
        "serviceAccounts": {"server": {"create": False, "name": f"{STACK}-prometheus"}},
        "alertmanager": {"enabled": False},
        "kube-state-metrics": {"enabled": False},
        "prometheus-node-exporter": {"enabled": False},
        "prometheus-pushgateway": {"enabled": False},
        # The chart's default jobs discover the whole cluster; null removes them (Helm semantics).
        "scrapeConfigs": None,
        # The Service the Grafana datasource names: <STACK>-prometheus on port 9090.
        "server": {"fullnameOverride": f"{STACK}-prometheus", "service": {"servicePort": 9090},
                   "global": config["global"], "persistentVolume": {"enabled": False}},
        "serverFiles": {
            "prometheus.yml": {"rule_files": config["rule_files"], "scrape_configs": config["scrape_configs"]},
            "manifesto.rules.yml": rules(),
        },
    }
    grafana = {
        "rbac": {"create": False},
        "serviceAccount": {"create": False, "name": f"{STACK}-grafana"},
        "persistence": {"enabled": False},
        "testFramework": {"enabled": False},
        "sidecar": {
            "dashboards": {"enabled": True, "label": "grafana_dashboard", "labelValue": "1"},
            "datasources": {"enabled": True, "label": "grafana_datasource", "labelValue": "1"},
        },
    }
    return {"prometheus-values.yaml": prometheus, "grafana-values.yaml": grafana}


def monitoring_objects(plans, namespace: str) -> list[dict]:
    """Every monitoring object of ``namespace`` for the instances ``plans``, in apply order."""
    from manifesto.render.monitoring.queries import dashboards, rules

    monitors = pod_monitors(plans)
    prom, graf = f"{STACK}-prometheus", f"{STACK}-grafana"
    prom_rbac = _rbac(namespace, prom, [
        {"apiGroups": [""], "resources": ["pods", "services", "endpoints"], "verbs": _READ},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _READ},
    ])
    graf_rbac = _rbac(namespace, graf, [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": _READ}])
    datasource = {"apiVersion": 1, "datasources": [{
        "name": "Prometheus", "type": "prometheus", "uid": "manifesto-prometheus", "access": "proxy",
        "url": f"http://{prom}.{namespace}.svc:9090", "isDefault": True}]}
    configs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _stack_meta(namespace, prom),
         "data": {"prometheus.yml": dump_yaml(scrape_config(monitors)), "manifesto.rules.yml": dump_yaml(rules())}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": _stack_meta(namespace, f"{graf}-datasources", {"grafana_datasource": "1"}),
         "data": {"manifesto.yaml": dump_yaml(datasource)}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": _stack_meta(namespace, f"{graf}-dashboards", {"grafana_dashboard": "1"}),
         "data": {f"{key}.json": json.dumps(board, indent=2, sort_keys=True) + "\n"
                  for key, board in dashboards().items()}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": _stack_meta(namespace, f"{STACK}-helm-values"),
         "data": {name: f"# Values for {chart}: helm install ... -f {name}\n" + dump_yaml(values)
                  for (name, values), chart in zip(helm_values(monitors).items(), (PROMETHEUS_CHART, GRAFANA_CHART))}},
    ]
    accounts = prom_rbac + graf_rbac
    return ([o for o in accounts if o["kind"] == "ServiceAccount"] + [o for o in accounts if o["kind"] == "Role"]
            + [o for o in accounts if o["kind"] == "RoleBinding"] + configs + monitors)
