"""Routing resolution: kind, target role, frontend and the endpoint-picker configuration."""

from __future__ import annotations

import json

from manifesto.errors import did_you_mean
from manifesto.resolve.failures import fail as _fail
from manifesto.resolve.plan import RoutingPlan
from manifesto.util.yamlemit import dump_yaml

__all__ = ["plan_routing", "EXPERIMENTAL_FLAG", "DEFAULT_LOAD_AWARE", "DEFAULT_PD", "LOAD_AWARE_POLICY", "PD_POLICY", "CONFIG_FILE"]

CONFIG_FILE = "plugins.yaml"
#: The picker's opt-in to Alpha plugins (router v0.10+, ``pkg/epp/server/options.go``); without
#: it ``ValidatePluginStability`` stops the picker at start-up when its config names one.
EXPERIMENTAL_FLAG = "--allow-experimental-plugins"

# Built-in policies used when neither a routing profile nor an inline config is given.
LOAD_AWARE_POLICY = {
    "apiVersion": "llm-d.ai/v1alpha1",
    "kind": "EndpointPickerConfig",
    "plugins": [
        {"type": "queue-scorer"},
        {"type": "active-request-scorer"},
        {"type": "weighted-random-picker"},  # it takes only maxNumOfEndpoints (router v0.10)
    ],
    "schedulingProfiles": [
        {"name": "default", "plugins": [
            {"pluginRef": "queue-scorer", "weight": 2},
            {"pluginRef": "active-request-scorer", "weight": 2},
            {"pluginRef": "weighted-random-picker"},
        ]},
    ],
}

PD_POLICY = {
    "apiVersion": "llm-d.ai/v1alpha1",
    "kind": "EndpointPickerConfig",
    "plugins": [
        {"type": "prefill-filter"},
        {"type": "decode-filter"},
        {"type": "prefix-cache-scorer"},
        {"type": "queue-scorer"},
        {"type": "active-request-scorer"},
        {"type": "always-disagg-pd-decider", "name": "pd-decider"},
        {"type": "disagg-profile-handler", "parameters": {"deciders": {"prefill": "pd-decider"}}},
        {"type": "weighted-random-picker", "name": "prefill-picker"},
        {"type": "weighted-random-picker", "name": "decode-picker"},
    ],
    "schedulingProfiles": [
        {"name": "prefill", "plugins": [
            {"pluginRef": "prefill-filter"},
            {"pluginRef": "prefix-cache-scorer", "weight": 2},
            {"pluginRef": "queue-scorer", "weight": 1},
            {"pluginRef": "prefill-picker"},
        ]},
        {"name": "decode", "plugins": [
            {"pluginRef": "decode-filter"},
            {"pluginRef": "active-request-scorer", "weight": 2},
            {"pluginRef": "queue-scorer", "weight": 1},
            {"pluginRef": "decode-picker"},
        ]},
    ],
}

DEFAULT_LOAD_AWARE = dump_yaml(LOAD_AWARE_POLICY)
DEFAULT_PD = dump_yaml(PD_POLICY)


def plan_routing(spec, epp_config: tuple[str, str, dict] | None, where) -> RoutingPlan | None:
    r = spec.routing
    kind = r.kind if r is not None else ("pd" if spec.topology == "pd" else "disabled")
    if spec.topology == "pd" and kind != "pd":
        raise _fail(f"topology: pd needs routing.kind: pd (found '{kind}'); prefill/decode implies llm-d",
                    where, ("routing", "kind"))
    if kind == "pd" and spec.topology != "pd":
        raise _fail("routing.kind: pd needs topology: pd", where, ("routing", "kind"))
    if kind == "disabled":
        return None
    names = [role.name for role in spec.roles]
    target = (r.target_role if r is not None else None) or ("decode" if "decode" in names else names[0])
    if target not in names:
        raise _fail(f"target_role '{target}' is not a role{did_you_mean(target, names)}; roles: {', '.join(names)}",
                    where, ("routing", "target_role"))
    if kind == "pd" and len(names) < 2:
        raise _fail("prefill/decode needs a prefill role and a decode role", where, ("roles",))
    files, selected, source, data = _configs(spec, kind, epp_config)
    return RoutingPlan(kind=kind, target_role=target, frontend=r.frontend if r is not None else "standalone",
                       config_files=files, config_file=selected, profile_source=source,
                       config_data=data)


def _configs(spec, kind: str, epp_config: tuple[str, str, dict] | None):
    """(files, selected file, source, JSON of the selected file's data)."""
    r = spec.routing
    if epp_config is not None:
        source, text, data = epp_config
        return ((CONFIG_FILE, text),), CONFIG_FILE, source, _json(data)
    if r is not None and r.plugin_configs is not None:
        files = tuple((name, dump_yaml(cfg)) for name, cfg in sorted(r.plugin_configs.items()))
        selected = r.plugins_config_file
        return files, selected, "spec routing.plugin_configs", _json(r.plugin_configs.get(selected))
    if r is not None and r.plugin_config is not None:
        return (((CONFIG_FILE, dump_yaml(r.plugin_config)),), CONFIG_FILE, "spec routing.plugin_config",
                _json(r.plugin_config))
    policy = PD_POLICY if kind == "pd" else LOAD_AWARE_POLICY
    return ((CONFIG_FILE, dump_yaml(policy)),), CONFIG_FILE, f"built-in {kind} policy", _json(policy)


def _json(data) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))
