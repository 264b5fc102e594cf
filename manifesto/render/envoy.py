"""Configuration of the standalone Envoy that fronts the endpoint picker.

Envoy sends each request through the picker over ext_proc (the picker must see the
body to read the model and prompt), then forwards it to the endpoint the picker names
in ``x-gateway-destination-endpoint`` through an ORIGINAL_DST cluster.
"""

from __future__ import annotations

__all__ = ["envoy_config", "CLIENT_PORT", "ADMIN_PORT", "READY_PORT", "EPP_GRPC_PORT", "CIRCUIT_LIMIT", "STATS_PATH"]

CLIENT_PORT = 8081
ADMIN_PORT = 19000
READY_PORT = 19001
#: Envoy's Prometheus statistics, served on READY_PORT (the only admin path reachable off loopback).
STATS_PATH = "/stats/prometheus"
EPP_GRPC_PORT = 9002
#: Circuit-breaker limits of both upstream clusters (llm-d's standalone Envoy uses 40,000).
CIRCUIT_LIMIT = 40000

_HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
_ROUTER = {"name": "envoy.filters.http.router",
           "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}
DAY = "86400s"


def _address(host: str, port: int) -> dict:
    return {"socket_address": {"address": host, "port_value": port}}


def _ready_listener() -> dict:
    return {
        "name": "ready",
        "address": _address("0.0.0.0", READY_PORT),
        "filter_chains": [{"filters": [{
            "name": "envoy.filters.network.http_connection_manager",
            "typed_config": {
                "@type": _HCM,
                "stat_prefix": "ready",
                "route_config": {"virtual_hosts": [{
                    "name": "ready", "domains": ["*"],
                    "routes": [{"match": {"prefix": "/ready"},
                                "direct_response": {"status": 200, "body": {"inline_string": "ready\n"}}},
                               # Prometheus reaches Envoy's statistics here; the admin
                               # interface itself stays on loopback.
                               {"match": {"path": STATS_PATH}, "route": {"cluster": "envoy-admin"}}],
                }]},
                "http_filters": [_ROUTER],
            },
        }]}],
    }


def _ext_proc(epp_port: int) -> dict:
    return {
        "name": "envoy.filters.http.ext_proc",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor",
            "grpc_service": {"envoy_grpc": {"cluster_name": "endpoint-picker", "authority": f"localhost:{epp_port}"},
                             "timeout": "10s"},
            # Fail closed: without the picker there is no destination to route to.
            "failure_mode_allow": False,
            "message_timeout": "1000s",
            "processing_mode": {
                "request_header_mode": "SEND",
                "response_header_mode": "SEND",
                "request_body_mode": "FULL_DUPLEX_STREAMED",
                "response_body_mode": "FULL_DUPLEX_STREAMED",
                "request_trailer_mode": "SEND",
                "response_trailer_mode": "SEND",
            },
        },
    }


def _client_listener(listen_port: int, epp_port: int, buffer_limit: int) -> dict:
    return {
        "name": "client",
        "address": _address("0.0.0.0", listen_port),
        # Envoy's 1 MiB default stalls long prompts and large multimodal bodies.
        "per_connection_buffer_limit_bytes": buffer_limit,
        "filter_chains": [{"filters": [{
            "name": "envoy.filters.network.http_connection_manager",
            "typed_config": {
                "@type": _HCM,
                "stat_prefix": "client",
                "use_remote_address": True,
                "normalize_path": True,
                "merge_slashes": True,
                "upgrade_configs": [{"upgrade_type": "websocket"}],
                "route_config": {"name": "inference", "virtual_hosts": [{
                    "name": "inference", "domains": ["*"],
                    "routes": [{"match": {"prefix": "/"},
                                "route": {"cluster": "picked-endpoint", "timeout": DAY, "idle_timeout": DAY}}],
                }]},
                "http_filters": [_ext_proc(epp_port), _ROUTER],
            },
        }]}],
    }


def _breakers(limit: int) -> dict:
    return {"thresholds": [{"max_connections": limit, "max_pending_requests": limit, "max_requests": limit,
                            "max_retries": limit}]}


def _clusters(epp_port: int, buffer_limit: int, limit: int) -> list[dict]:
    picker = {
        "name": "endpoint-picker",
        "type": "STATIC",
        "connect_timeout": "5s",
        "lb_policy": "LEAST_REQUEST",
        "typed_extension_protocol_options": {"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
            "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
            "explicit_http_config": {"http2_protocol_options": {}},
        }},
        "load_assignment": {"cluster_name": "endpoint-picker", "endpoints": [{"lb_endpoints": [
            {"endpoint": {"address": _address("127.0.0.1", epp_port)}}]}]},
        # Every in-flight request holds an ext_proc stream to the picker; Envoy's default
        # limits (1,024) would fail requests closed past that many.
        "circuit_breakers": _breakers(limit),
    }
    picked = {
        "name": "picked-endpoint",
        "type": "ORIGINAL_DST",
        "connect_timeout": "1000s",
        "per_connection_buffer_limit_bytes": buffer_limit,
        "lb_policy": "CLUSTER_PROVIDED",
        "original_dst_lb_config": {"use_http_header": True, "http_header_name": "x-gateway-destination-endpoint"},
        "circuit_breakers": _breakers(limit),
    }
    admin = {
        "name": "envoy-admin",
        "type": "STATIC",
        "connect_timeout": "1s",
        "load_assignment": {"cluster_name": "envoy-admin", "endpoints": [{"lb_endpoints": [
            {"endpoint": {"address": _address("127.0.0.1", ADMIN_PORT)}}]}]},
    }
    return [picker, picked, admin]


def envoy_config(listen_port: int, epp_port: int, buffer_limit: str, circuit_limit: int = CIRCUIT_LIMIT) -> dict:
    """The complete static Envoy configuration (admin on loopback only); ``buffer_limit`` is a
    quantity bounding what Envoy buffers per connection to clients and to model servers;
    ``circuit_limit`` caps connections, pending, active requests and retries to the picker and
    to the model servers alike."""
    from manifesto.util.quantity import byte_count

    limit = byte_count(buffer_limit)
    return {
        "admin": {"address": _address("127.0.0.1", ADMIN_PORT)},
        "static_resources": {
            "listeners": [_client_listener(listen_port, epp_port, limit), _ready_listener()],
            "clusters": _clusters(epp_port, limit, circuit_limit),
        },
    }
