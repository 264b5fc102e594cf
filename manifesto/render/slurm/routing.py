"""llm-d on Slurm: the endpoint picker's file discovery, its endpoints, Envoy, P/D proxies.

The picker learns its endpoints from a file instead of an InferencePool: the batch host
resolves the allocated hostnames to IPv4 (the only address form the file-discovery plugin
accepts) and writes one entry per API node and port. The routing profile's EPP config is
used as is, plus the ``file-discovery`` plugin and the ``dataLayer.discovery`` reference to
it, spelled so that the picker release in the image catalog decodes it.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from manifesto.render.pd_sidecar import image_release, pd_sidecar_args
from manifesto.render.slurm.checks import SlurmUnsupported
from manifesto.resolve import names

__all__ = [
    "DISCOVERY_PLUGIN", "ROUTER_DIR_TOKEN", "epp_config", "endpoint_table", "resolver_program", "proxy_args",
]

DISCOVERY_PLUGIN = "manifesto-file-discovery"
ROUTER_DIR_TOKEN = "@MANIFESTO_ROUTER_DIR@"  # replaced by the batch host's router directory


# The one config apiVersion whose types know only the nested spelling (llm-d.ai/v1). Every
# v1alpha1 spelling of every router release with file discovery (v0.9, v0.10, v0.11, main)
# decodes the bare ``discovery.pluginRef`` (evidence in docs/decisions.md).
_NESTED_ONLY = ("llm-d.ai/v1",)


def _discovery_ref(image: str, api_version: object) -> dict:
    """``dataLayer.discovery`` for the picker in ``image`` (its config decoding is strict).

    Router v0.9 and v0.10 know only ``discovery.pluginRef``, and so does the v1alpha1
    config type on router main; newer types add ``discovery.endpoints.pluginRef`` and the
    ``llm-d.ai/v1`` config type has only that. So the spelling follows the config's
    apiVersion, and the release only decides whether file discovery exists at all.
    """
    release = image_release(image)
    if release is not None and release < (0, 9):
        raise SlurmUnsupported(
            f"the endpoint picker image {image} predates file discovery (llm-d router v0.9.0), which Slurm "
            "routing needs; use llm-d router v0.9.0 or newer (cluster llm_d.release or llm_d.images.epp)",
            "cluster", ("llm_d",))
    if api_version in _NESTED_ONLY:
        return {"endpoints": {"pluginRef": DISCOVERY_PLUGIN}}
    return {"pluginRef": DISCOVERY_PLUGIN}


def _plugin_entry() -> dict:
    return {"type": "file-discovery", "name": DISCOVERY_PLUGIN,
            "parameters": {"path": f"{ROUTER_DIR_TOKEN}/endpoints.json", "watchFile": False}}


def _block(value: dict, indent: str) -> list[str]:
    from manifesto.util.yamlemit import dump_yaml

    return [indent + line if line else line for line in dump_yaml(value).rstrip("\n").split("\n")]


_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:")


def _edit_text(text: str, discovery: dict) -> str | None:
    """Add the plugin and ``dataLayer`` to the profile's own text, keeping its comments; None
    when its layout is not the plain block form this handles (then the data is rewritten)."""
    lines = text.rstrip("\n").split("\n")
    keys = [m.group(1) for m in map(_TOP_KEY.match, lines) if m]
    if "dataLayer" in keys or keys.count("plugins") != 1 or any(line in ("---", "...") for line in lines):
        return None
    at = next(i for i, line in enumerate(lines) if _TOP_KEY.match(line) and line.startswith("plugins"))
    if lines[at].split(":", 1)[1].split("#", 1)[0].strip():
        return None  # flow style: plugins: [...]
    first = next((i for i in range(at + 1, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#")),
                 None)
    m = re.match(r"^( *)- ", lines[first]) if first is not None else None
    if m is None:
        return None
    item = _block(_plugin_entry(), m.group(1) + "  ")
    item[0] = m.group(1) + "- " + item[0][len(m.group(1)) + 2:]
    data_layer = ["# Endpoints come from the allocation (file discovery), not from Kubernetes.",
                  *_block({"dataLayer": {"discovery": discovery}}, "")]
    return "\n".join(lines[:first] + item + lines[first:] + data_layer) + "\n"


@lru_cache(maxsize=32)
def _edit_data(config_json: str, source: str, discovery_json: str) -> str:
    from manifesto.util.yamlemit import dump_yaml

    data = json.loads(config_json)
    if not isinstance(data, dict):
        raise SlurmUnsupported(f"the EPP config from {source} is not a mapping, so Slurm file "
                               "discovery cannot be added to it", "spec", ("routing",))
    layer = dict(data.get("dataLayer") or {})
    if "discovery" in layer:
        raise SlurmUnsupported(
            f"the EPP config from {source} already sets dataLayer.discovery; on Slurm Manifesto "
            "supplies endpoint discovery itself (from the allocation), so remove it", "spec", ("routing",))
    out = dict(data)
    out["plugins"] = [*(data.get("plugins") or []), _plugin_entry()]
    layer["discovery"] = json.loads(discovery_json)
    out["dataLayer"] = layer
    return dump_yaml(out)


def epp_config(plan) -> tuple[str, str]:
    """(file name, YAML text) of the picker's config, with ``ROUTER_DIR_TOKEN`` in the path."""
    r = plan.routing
    name = r.config_file
    text = dict(r.config_files)[name]
    if re.search(rf"(?m)^\s*-?\s*name:\s*[\"']?{DISCOVERY_PLUGIN}\b", text):
        raise SlurmUnsupported(f"the EPP config from {r.profile_source} already has a plugin named "
                               f"{DISCOVERY_PLUGIN}, the name Manifesto gives Slurm file discovery", "spec", ("routing",))
    data = json.loads(r.config_data)
    discovery = _discovery_ref(plan.images["llm_d.epp"], data.get("apiVersion") if isinstance(data, dict) else None)
    edited = _edit_text(text, discovery)
    if edited is None:
        edited = _edit_data(r.config_data, r.profile_source, json.dumps(discovery, sort_keys=True))
    return name, edited


def endpoint_table(plan, components: list) -> list[list]:
    """[component, node index in the component, port, name, labels] per API endpoint.

    Only routed roles, only nodes that serve HTTP, every public port (a proxied role lists
    its proxy's ports, which front the backends).
    """
    rows = []
    for g, role in enumerate(components):
        if role.routing_label is None:
            continue
        lay = role.layout
        for replica in range(lay.replicas):
            for node in lay.serving_nodes:
                for port in lay.public_ports:
                    labels = dict(sorted({**role.labels, names.LWS_WORKER_INDEX_LABEL: str(node)}.items()))
                    rows.append([g, replica * lay.nodes + node, port, f"{role.name}-{replica}-{node}-{port}", labels])
    return rows


def resolver_program(plan, components: list) -> str:
    """Python run on the batch host: resolve each component's hosts, write ips-<g> and the
    endpoints file. Reads ``hosts-<g>`` from the router directory given as argv[1]."""
    rows = endpoint_table(plan, components)
    table = ",\n".join("    " + json.dumps(row, sort_keys=False) for row in rows)
    return "\n".join([
        "import json, socket, sys",
        "",
        "root = sys.argv[1]",
        f"COMPONENTS = {len(components)}",
        f"NAMESPACE = {json.dumps(plan.namespace)}",
        "# [component, node index in the component, port, name, labels] of each API endpoint",
        "ENDPOINTS = [",
        table,
        "]",
        "ips = []",
        "for g in range(COMPONENTS):",
        "    with open(f'{root}/hosts-{g}') as f:",
        "        hosts = f.read().split()",
        "    addrs = []",
        "    for host in hosts:",
        "        try:",
        "            addrs.append(socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0])",
        "        except OSError as exc:",
        "            sys.exit(f'manifesto: cannot resolve {host} to an IPv4 address: {exc}')",
        "    with open(f'{root}/ips-{g}', 'w') as f:",
        "        f.write(''.join(a + '\\n' for a in addrs))",
        "    ips.append(addrs)",
        "endpoints = [",
        "    {'name': name, 'namespace': NAMESPACE, 'address': ips[g][node], 'port': str(port), 'labels': labels}",
        "    for g, node, port, name, labels in ENDPOINTS",
        "]",
        "with open(f'{root}/endpoints.json', 'w') as f:",
        "    json.dump({'endpoints': endpoints}, f, indent=2)",
        "    f.write('\\n')",
        "",
    ])


def proxy_args(plan, role) -> list[str]:
    """The P/D sidecar's flags, exactly as on Kubernetes."""
    return pd_sidecar_args(plan, role)
