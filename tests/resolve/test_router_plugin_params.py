"""The router table's parameters and stability for every plugin Manifesto emits, and the load-time
checks that use them: nested keys, the older flat spelling of disagg-profile-handler, every
problem of a config in one run, and ``--allow-experimental-plugins`` for Alpha plugins."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kit import cli_in_process

from manifesto.load.catalog import router_table
from manifesto.resolve.router_check import epp_problems, experimental_plugins

ROOT = Path(__file__).resolve().parents[2]
ROUTER = "v0.10.0"


def _emitted_configs() -> list[dict]:
    from manifesto.render.slurm.routing import _plugin_entry
    from manifesto.resolve.routing import LOAD_AWARE_POLICY, PD_POLICY

    profiles = [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "routing").glob("*.yaml"))]
    slurm = {"apiVersion": "llm-d.ai/v1alpha1", "kind": "EndpointPickerConfig", "plugins": [_plugin_entry()]}
    return [LOAD_AWARE_POLICY, PD_POLICY, *profiles, slurm]


@pytest.mark.parametrize("release", ["v0.10.0", "main"])
def test_every_emitted_plugin_has_parameters_and_stability(release):
    table = {p.type: p for p in router_table(release).plugins}
    emitted = {e["type"] for config in _emitted_configs() for e in config["plugins"]}
    assert {"disagg-profile-handler", "file-discovery"} <= emitted
    for kind in sorted(emitted):
        plugin = table[kind]
        assert plugin.stability in ("Alpha", "Beta", "Stable"), kind
        # Either a listed (strict) parameter struct, or a factory that ignores its parameters.
        assert plugin.strict or plugin.parameters == [], kind
    assert [p.name for p in table["file-discovery"].parameters] == ["path", "watchFile"]
    handler = table["disagg-profile-handler"]
    assert [(p.name, [f.name for f in p.fields or []]) for p in handler.parameters] == [
        ("deciders", ["encode", "prefill"]), ("profiles", ["decode", "encode", "prefill"]), ("stageOrder", [])]
    assert "prefillProfile" in [p.name for p in handler.alternatives[0]]


def test_every_plugin_records_its_stability():
    plugins = router_table(ROUTER).plugins
    assert all(p.stability in ("Alpha", "Beta", "Stable") for p in plugins)
    stability = {p.type: p.stability for p in plugins}
    # As registered in cmd/epp/runner/runner.go at v0.10.0.
    assert (stability["session-affinity-scorer"], stability["queue-scorer"], stability["file-discovery"],
            stability["multicluster-file-discovery"]) == ("Alpha", "Beta", "Beta", "Alpha")


@pytest.mark.parametrize("index", range(5))
def test_emitted_configs_pass_the_pinned_table(index):
    configs = _emitted_configs()
    assert len(configs) == 5
    assert epp_problems(router_table(ROUTER), configs[index]) == []
    assert experimental_plugins(router_table(ROUTER), configs[index]) == ()


def _handler(parameters) -> dict:
    return {"apiVersion": "llm-d.ai/v1alpha1", "kind": "EndpointPickerConfig", "plugins": [
        {"type": "always-disagg-pd-decider", "name": "pd-decider"},
        {"type": "disagg-profile-handler", "parameters": parameters}]}


@pytest.mark.parametrize("parameters, expected", [
    ({"deciders": {"prefil": "pd-decider"}},
     [(("plugins", 1, "parameters", "deciders", "prefil"),
       "disagg-profile-handler parameter deciders in router v0.10.0 has no key 'prefil' (did you mean 'prefill'?); "
       "it takes: encode, prefill (the router decodes parameters strictly and would exit on start)")]),
    ({"stageOrder": 1},
     [(("plugins", 1, "parameters", "stageOrder"), "disagg-profile-handler parameter stageOrder takes a string, "
                                                   "found 1")]),
    ({"deciders": {"prefill": "pd-decider"}, "prefillProfile": "prefill"},
     [(("plugins", 1, "parameters", "prefillProfile"),
       "disagg-profile-handler in router v0.10.0 reads 'prefillProfile' only in its older flat spelling "
       "(deciderPluginName, decodeProfile, encodeDeciderPluginName, encodeProfile, prefillDeciderPluginName, "
       "prefillProfile, stageOrder), which cannot be mixed with deciders; write all parameters in one spelling "
       "(the router decodes parameters strictly and would exit on start)")]),
    ({"profiles": {"decode": "d", "prefill": "p"}, "deciders": {"prefill": "pd-decider"}, "stageOrder": "decode-first"},
     []),
    ({"prefillProfile": "prefill", "decodeProfile": "decode", "deciderPluginName": "pd-decider"}, []),
    ({"prefillProfile": "prefill", "decodeProfle": "decode"},
     [(("plugins", 1, "parameters", "decodeProfle"),
       "disagg-profile-handler in router v0.10.0 has no parameter 'decodeProfle' (did you mean 'decodeProfile'?); "
       "it takes: deciderPluginName, decodeProfile, encodeDeciderPluginName, encodeProfile, "
       "prefillDeciderPluginName, prefillProfile, stageOrder (the router decodes parameters strictly and would "
       "exit on start)")]),
], ids=["nested-typo", "nested-type", "mixed-spellings", "nested-ok", "flat-ok", "flat-typo"])
def test_disagg_profile_handler_parameters(parameters, expected):
    assert epp_problems(router_table(ROUTER), _handler(parameters)) == expected


def test_file_discovery_parameters_are_checked():
    config = {"plugins": [{"type": "file-discovery", "parameters": {"path": "/e.json", "watch_file": True}}]}
    assert epp_problems(router_table(ROUTER), config) == [
        (("plugins", 0, "parameters", "watch_file"),
         "file-discovery in router v0.10.0 has no parameter 'watch_file' (did you mean 'watchFile'?); it takes: "
         "path, watchFile (the router decodes parameters strictly and would exit on start)")]


def test_every_problem_of_a_config_is_reported():
    config = {"apiVersion": "llm-d.ai/v1alpha1", "kind": "EndpointPickerConfig", "plugins": [
        {"type": "queue-scorr"},
        {"type": "max-score-picker", "parameters": {"maxNumOfEndpoint": 2}},
        {"type": "file-discovery", "parameters": {"path": 3}}],
        "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "max-score-pickr"}]}]}
    assert [p for p, _ in epp_problems(router_table(ROUTER), config)] == [
        ("plugins", 0, "type"), ("plugins", 1, "parameters", "maxNumOfEndpoint"),
        ("plugins", 2, "parameters", "path"), ("schedulingProfiles", 0, "plugins", 0, "pluginRef")]


SPEC = """release: demo
model: {id: org/model}
routing:
  kind: load_aware
  plugin_config:
    apiVersion: llm-d.ai/v1alpha1
    kind: EndpointPickerConfig
    plugins:
      - {type: %s}
      - {type: max-score-picker, parameters: {maxNumOfEndpoint: 2}}
    schedulingProfiles:
      - {name: default, plugins: [{pluginRef: %s}, {pluginRef: max-score-picker}]}
roles:
  - name: decode
"""


def test_cli_reports_every_plugin_error_at_once(tmp_path, monkeypatch):
    (tmp_path / "m.yaml").write_text(SPEC % ("queue-scorr", "queue-scorr"))
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "example-stateless-b200", "--user", "u",
                       "--namespace", "ns")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.splitlines() == [
        "error: m.yaml:9:10: routing.plugin_config.plugins[0].type: router v0.10.0 has no plugin type "
        "'queue-scorr' (did you mean 'queue-scorer'?)",
        "error: m.yaml:10:47: routing.plugin_config.plugins[1].parameters.maxNumOfEndpoint: max-score-picker in "
        "router v0.10.0 has no parameter 'maxNumOfEndpoint' (did you mean 'maxNumOfEndpoints'?); it takes: "
        "maxNumOfEndpoints (the router decodes parameters strictly and would exit on start)"]


def _render(tmp_path, monkeypatch, plugin: str, cluster: str) -> str:
    (tmp_path / "m.yaml").write_text(SPEC.replace(", parameters: {maxNumOfEndpoint: 2}", "") % (plugin, plugin))
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", cluster, "--user", "u", "--namespace", "ns")
    assert (r.returncode, r.stderr) == (0, "")
    return r.stdout


@pytest.mark.parametrize("cluster", ["example-stateless-b200", "example-slurm"])
def test_alpha_plugin_turns_on_experimental_plugins(tmp_path, monkeypatch, cluster):
    # session-affinity-scorer is registered StabilityAlpha: without the flag the picker's
    # ValidatePluginStability refuses to start.
    alpha = _render(tmp_path, monkeypatch, "session-affinity-scorer", cluster)
    assert alpha.count("--allow-experimental-plugins") == 1
    beta = _render(tmp_path, monkeypatch, "queue-scorer", cluster)
    assert "--allow-experimental-plugins" not in beta
