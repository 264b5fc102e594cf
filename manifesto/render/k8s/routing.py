"""llm-d routing objects: InferencePool, endpoint picker (EPP) with its config and RBAC,
the standalone Envoy frontend or Gateway API objects with Istio DestinationRules."""

from __future__ import annotations

from typing import Any

from manifesto.resolve import names
from manifesto.resolve.names import COMPONENT_LABEL, INSTANCE_LABEL
from manifesto.render.k8s.common import meta, pod_defaults, sized
from manifesto.render.envoy import CLIENT_PORT, EPP_GRPC_PORT, READY_PORT, envoy_config
from manifesto.util.yamlemit import dump_yaml

__all__ = ["routing_objects", "pool_selector", "EPP_HEALTH_PORT", "EPP_METRICS_PORT"]

EPP_HEALTH_PORT = 9003
EPP_METRICS_PORT = 9090
POOL_GROUP = "inference.networking.k8s.io"
EPP_CONFIG_DIR = "/etc/epp"
ENVOY_CONFIG_DIR = "/etc/envoy"


def pool_selector(plan) -> dict[str, str]:
    return {INSTANCE_LABEL: plan.instance, "llm-d.ai/inferenceServing": "true"}


def _target_ports(plan) -> list[int]:
    from manifesto.errors import ResolveError

    ports = sorted({p for r in plan.roles if r.routing_label is not None for p in r.layout.public_ports})
    if len(ports) > 8:
        raise ResolveError(f"an InferencePool takes at most 8 target ports, and the routed roles serve {len(ports)} "
                           "(one per DP rank on a pod); use fewer DP ranks per pod")
    return ports


def _labels(plan, component: str) -> dict[str, str]:
    return {**plan.labels, COMPONENT_LABEL: component}


def _pool(plan) -> dict:
    from manifesto.render.k8s.idle import pool_annotations

    return {
        "apiVersion": f"{POOL_GROUP}/v1",
        "kind": "InferencePool",
        "metadata": meta(names.pool(plan.instance), plan.namespace, _labels(plan, "inference-pool"),
                         pool_annotations(plan)),
        "spec": {
            "selector": {"matchLabels": pool_selector(plan)},
            "targetPorts": [{"number": p} for p in _target_ports(plan)],
            "endpointPickerRef": {"name": names.epp(plan.instance), "kind": "Service",
                                  "port": {"number": EPP_GRPC_PORT}, "failureMode": "FailClose"},
        },
    }


def _epp_rbac(plan) -> list[dict]:
    account = names.epp_account(plan.instance)
    labels = _labels(plan, "endpoint-picker")
    read = ["get", "list", "watch"]
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": read},
        {"apiGroups": [POOL_GROUP], "resources": ["inferencepools"], "verbs": read},
        {"apiGroups": ["inference.networking.x-k8s.io"],
         "resources": ["inferenceobjectives", "inferencemodelrewrites", "inferencepoolimports", "inferencemodels"],
         "verbs": read},
        {"apiGroups": ["llm-d.ai"], "resources": ["inferenceobjectives", "inferencemodelrewrites"], "verbs": read},
    ]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(account, plan.namespace, labels)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": meta(account, plan.namespace, labels), "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": meta(account, plan.namespace, labels),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
         "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": plan.namespace}]},
    ]


def _configmaps(plan) -> list[dict]:
    r = plan.routing
    labels = _labels(plan, "endpoint-picker")
    out = [{
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": meta(names.epp_config(plan.instance), plan.namespace, labels),
        "data": {name: text for name, text in r.config_files},
    }]
    if r.frontend == "standalone":
        out.append({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": meta(names.envoy_config(plan.instance), plan.namespace, labels),
            "data": {"envoy.yaml": dump_yaml(envoy_config(CLIENT_PORT, EPP_GRPC_PORT,
                                                          plan.routing_sizing.envoy_buffer_limit,
                                                          plan.routing_sizing.envoy_circuit_limit))},
        })
    else:
        out.append({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": meta(names.gateway_options(plan.instance), plan.namespace, _labels(plan, "gateway")),
            "data": {"deployment": dump_yaml(_gateway_proxy_patch(plan)),
                     "service": dump_yaml({"spec": {"type": plan.gateway_service_type}})},
        })
    return out


def _gateway_proxy_patch(plan) -> dict:
    """Istio merges this into the Deployment it generates for the Gateway: its proxy gets
    guaranteed resources, so a busy node neither throttles nor evicts the one entry point."""
    proxy = {"name": "istio-proxy", "resources": sized(plan.routing_sizing.gateway_proxy, guaranteed=True)}
    return {"spec": {"template": {"spec": {"containers": [proxy]}}}}


def _experimental(r) -> list[str]:
    """The opt-in the picker needs when its config names an Alpha plugin (none otherwise)."""
    from manifesto.resolve.routing import EXPERIMENTAL_FLAG

    return [EXPERIMENTAL_FLAG] if r.experimental_plugins else []


def _epp_container(plan) -> dict:
    r = plan.routing
    return {
        "name": "epp",
        "image": plan.images["llm_d.epp"],
        "args": [
            f"--pool-name={names.pool(plan.instance)}",
            f"--pool-namespace={plan.namespace}",
            f"--pool-group={POOL_GROUP}",
            f"--config-file={EPP_CONFIG_DIR}/{r.config_file}",
            f"--grpc-port={EPP_GRPC_PORT}",
            f"--grpc-health-port={EPP_HEALTH_PORT}",
            f"--metrics-port={EPP_METRICS_PORT}",
            # Envoy (or the gateway) reaches the picker in-cluster; plaintext h2 keeps that path
            # free of self-signed certificates, and metrics need no TokenReview permissions.
            "--secure-serving=false",
            "--metrics-endpoint-auth=false",
            *_experimental(r),
        ],
        "ports": [
            {"name": "grpc", "containerPort": EPP_GRPC_PORT, "protocol": "TCP"},
            {"name": "grpc-health", "containerPort": EPP_HEALTH_PORT, "protocol": "TCP"},
            {"name": "metrics", "containerPort": EPP_METRICS_PORT, "protocol": "TCP"},
        ],
        "readinessProbe": {"grpc": {"port": EPP_HEALTH_PORT, "service": "inference-extension"},
                           "periodSeconds": 5, "failureThreshold": 3},
        "livenessProbe": {"grpc": {"port": EPP_HEALTH_PORT, "service": "inference-extension"},
                          "periodSeconds": 10, "failureThreshold": 6},
        "resources": sized(plan.routing_sizing.endpoint_picker),
        "volumeMounts": [{"name": "epp-config", "mountPath": EPP_CONFIG_DIR, "readOnly": True}],
    }


def _envoy_container(plan) -> dict:
    return {
        "name": "envoy",
        "image": plan.images["llm_d.envoy"],
        "args": ["--service-node", "envoy-sidecar", "--log-level", "warn",
                 "--concurrency", str(plan.routing_sizing.envoy_concurrency),
                 "--drain-strategy", "immediate", "--drain-time-s", "60", "-c", f"{ENVOY_CONFIG_DIR}/envoy.yaml"],
        "ports": [
            {"name": "http", "containerPort": CLIENT_PORT, "protocol": "TCP"},
            {"name": "envoy-ready", "containerPort": READY_PORT, "protocol": "TCP"},
        ],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": READY_PORT}, "periodSeconds": 5},
        "resources": sized(plan.routing_sizing.envoy),
        "volumeMounts": [{"name": "envoy-config", "mountPath": ENVOY_CONFIG_DIR, "readOnly": True}],
    }


def _epp_deployment(plan) -> dict:
    labels = _labels(plan, "endpoint-picker")
    selector = {INSTANCE_LABEL: plan.instance, COMPONENT_LABEL: "endpoint-picker"}
    standalone = plan.routing.frontend == "standalone"
    containers = [_epp_container(plan)] + ([_envoy_container(plan)] if standalone else [])
    volumes = [{"name": "epp-config", "configMap": {"name": names.epp_config(plan.instance)}}]
    if standalone:
        volumes.append({"name": "envoy-config", "configMap": {"name": names.envoy_config(plan.instance)}})
    spec: dict[str, Any] = {"serviceAccountName": names.epp_account(plan.instance), "containers": containers,
                            "volumes": volumes}
    if standalone:
        spec["terminationGracePeriodSeconds"] = 130  # let Envoy drain long generations
    pod_defaults(plan, spec, gpu=False)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(names.epp(plan.instance), plan.namespace, labels),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def _epp_service(plan) -> dict:
    ports = [{"name": "grpc", "port": EPP_GRPC_PORT, "targetPort": EPP_GRPC_PORT, "protocol": "TCP",
              "appProtocol": "kubernetes.io/h2c"}]
    if plan.routing.frontend == "standalone":
        ports.append({"name": "http", "port": 80, "targetPort": CLIENT_PORT, "protocol": "TCP"})
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(names.epp(plan.instance), plan.namespace, _labels(plan, "endpoint-picker")),
        "spec": {"type": "ClusterIP",
                 "selector": {INSTANCE_LABEL: plan.instance,
                              COMPONENT_LABEL: "endpoint-picker"},
                 "ports": ports},
    }


def _destination_rule(plan, name: str, service: str) -> dict:
    """A connection pool for the Gateway's traffic to ``service``. No TLS settings: the picker
    serves plaintext gRPC (--secure-serving=false) and the model servers plaintext HTTP, so
    Istio's own choice (plaintext, or its mutual TLS inside a mesh) stays in force."""
    pool = plan.routing_sizing.gateway_connection_pool
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "DestinationRule",
        "metadata": meta(name, plan.namespace, _labels(plan, "gateway")),
        "spec": {
            "host": names.service_host(service, plan.namespace),
            "trafficPolicy": {"connectionPool": {
                "tcp": {"maxConnections": pool.max_connections},
                "http": {"http1MaxPendingRequests": pool.http1_max_pending_requests,
                         "http2MaxRequests": pool.http2_max_requests,
                         "maxRequestsPerConnection": pool.max_requests_per_connection,
                         "idleTimeout": pool.idle_timeout},
            }},
        },
    }


def _gateway(plan) -> list[dict]:
    """Connection pools first, so the Gateway never routes with Istio's defaults, then the
    Gateway and its HTTPRoute."""
    labels = _labels(plan, "gateway")
    gw = names.gateway(plan.instance)
    gateway = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": meta(gw, plan.namespace, {**labels, "istio.io/enable-inference-extproc": "true"}),
        "spec": {
            "gatewayClassName": plan.gateway_class,
            "infrastructure": {"parametersRef": {"group": "", "kind": "ConfigMap",
                                                 "name": names.gateway_options(plan.instance)}},
            "listeners": [{"name": "default", "port": 80, "protocol": "HTTP",
                           "allowedRoutes": {"namespaces": {"from": "Same"}}}],
        },
    }
    first_port = _target_ports(plan)[0]
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": meta(names.route(plan.instance), plan.namespace, labels),
        "spec": {
            "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gw}],
            "rules": [{
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "backendRefs": [{"group": POOL_GROUP, "kind": "InferencePool", "name": names.pool(plan.instance),
                                 "port": first_port, "weight": 1}],
                "timeouts": {"request": "0s", "backendRequest": "0s"},
            }],
        },
    }
    return [_destination_rule(plan, names.epp_destination_rule(plan.instance), names.epp(plan.instance)),
            _destination_rule(plan, names.pool_destination_rule(plan.instance), names.pool_service(plan.instance)),
            gateway, route]


def routing_objects(plan) -> dict[str, list[dict]]:
    """Routing objects grouped for the caller's fixed ordering (empty when routing is disabled)."""
    if plan.routing is None:
        return {"rbac": [], "ConfigMap": [], "Service": [], "pool": [], "Deployment": [], "frontend": []}
    rbac = _epp_rbac(plan)
    return {
        "rbac": rbac,
        "ConfigMap": _configmaps(plan),
        "Service": [_epp_service(plan)],
        "pool": [_pool(plan)],
        "Deployment": [_epp_deployment(plan)],
        "frontend": _gateway(plan) if plan.routing.frontend == "gateway" else [],
    }
