"""vLLM and llm-d-router tables derived from the pinned releases, and the checks that use them.

The tables are data (``manifesto/data/*.json``) written by ``tools/gen_vllm_table.py`` and
``tools/gen_router_table.py``; these tests pin their headers, that the image catalog's pins have
one, that each bad-argument case gets one whole, placed error and no artifact, and that every
flag the committed artifacts and goldens hand to vLLM, the endpoint picker and the P/D sidecar
is one the pinned release declares.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from kit import cli_in_process

from manifesto.load.catalog import router_table, table_versions, vllm_table
from manifesto.resolve.router_check import check_flags, epp_problem
from manifesto.resolve.vllm_check import check_flag_words, vllm_version

ROOT = Path(__file__).resolve().parents[2]
VLLM = "0.33.0"
ROUTER = "v0.10.0"


def _catalog() -> dict:
    return yaml.safe_load((ROOT / "catalog" / "images.yaml").read_text())


# ---- the tables themselves ----------------------------------------------------------------

def test_vllm_table_header_and_size():
    t = vllm_table(VLLM)
    assert (t.format, t.vllm, t.generator) == (1, VLLM, "tools/gen_vllm_table.py")
    assert t.source.startswith(f"PyPI vllm=={VLLM} (vllm-{VLLM}-")
    # What the release's parser held when the table was made (issue 20 counted the same parser).
    assert len(t.args) == 320
    assert sum(a.kind == "onoff" for a in t.args) + sum(a.kind == "flag" for a in t.args) == 94
    assert {"kv-cache-dtype", "tool-call-parser", "reasoning-parser"} == set(t.after_parse)
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" in t.env and "VLLM_MOE_DP_CHUNK_SIZE" not in t.env
    gmu = next(a for a in t.args if a.name == "gpu-memory-utilization")
    assert (gmu.type, gmu.bounds) == ("float", {"gt": 0, "le": 1})


def test_router_table_header():
    t = router_table(ROUTER)
    assert (t.format, t.router, t.generator) == (1, ROUTER, "tools/gen_router_table.py")
    assert t.commit == "71f4f0999f95b96c49a9d0c4afbd18dfdb943c26"
    assert t.api_versions[0] == "llm-d.ai/v1alpha1"
    picker = next(p for p in t.plugins if p.type == "weighted-random-picker")
    assert (picker.strict, [(f.name, f.type) for f in picker.parameters]) == (True, [("maxNumOfEndpoints", "integer")])


def test_the_catalog_vllm_pin_has_a_table():
    image = _catalog()["vllm"]["standard"]
    version = vllm_version(image)
    assert version is not None, f"catalog vllm.standard {image} names no vLLM release"
    assert vllm_table(version) is not None, (
        f"the catalog pins vLLM {version} but manifesto/data has tables only for {table_versions('vllm')}; "
        f"run tools/gen_vllm_table.py {version}")


def test_the_catalog_router_pin_has_a_table():
    release = _catalog()["llm_d"]["release"]
    assert router_table(release) is not None, (
        f"the catalog pins router {release} but manifesto/data has tables only for "
        f"{table_versions('llm-d-router')}; run tools/gen_router_table.py")


def test_every_image_a_golden_or_bundled_spec_pins_has_a_table():
    pinned = set()
    for path in [*ROOT.glob("tests/golden/*/model.yaml"), *ROOT.glob("models/**/*.yaml")]:
        pinned.update(re.findall(r"vllm/vllm-openai:[\w.-]+", path.read_text()))
    for image in sorted(pinned):
        assert vllm_table(vllm_version(image) or "") is not None, f"{image} has no vLLM table"


def test_tables_ship_in_the_wheel():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'packages = ["manifesto"]' in text  # hatch packs every file under manifesto/, data/ included
    assert sorted(p.name for p in (ROOT / "manifesto" / "data").glob("*.json")) == [
        "llm-d-router-main.json", "llm-d-router-v0.10.0.json", "vllm-0.33.0.json"]


# ---- one clear error per bad argument ------------------------------------------------------

SPEC = """\
release: demo
model: {{id: org/model}}
runtime: {{sidecars: []}}
{top}
roles:
  - name: decode
    parallelism: {{tp: 1}}
{role}
"""


def _render(tmp_path, monkeypatch, role: str = "", top: str = "", *extra: str):
    (tmp_path / "m.yaml").write_text(SPEC.format(role=role, top=top))
    monkeypatch.chdir(tmp_path)
    return cli_in_process("render", "manifest", "m.yaml", "--cluster", "example-stateless-b200", "--user", "u", "--namespace", "ns",
                          *extra)


BAD = [
    ("misspelt-key", "    vllm: {max_model_lenn: 8192}",
     "m.yaml:8:12: roles[0].vllm.max_model_lenn: vLLM 0.33.0 has no argument --max-model-lenn "
     "(did you mean 'max_model_len'?)"),
    ("misspelt-kebab", "    vllm: {tensor-paralel-size: 3}",
     "m.yaml:8:12: roles[0].vllm.tensor-paralel-size: vLLM 0.33.0 has no argument --tensor-paralel-size "
     "(did you mean 'tensor_parallel_size'? Manifesto sets it from parallelism.tp)"),
    ("removed-flag", "    vllm: {task: embed}",
     "m.yaml:8:12: roles[0].vllm.task: --task is not an argument of vLLM 0.33.0: --task is not a vllm serve "
     "option. For embedding, reranking, or reward models, use --runner pooling. To adapt a generative model "
     "for pooling, also use --convert embed, --convert classify, or --convert reward."),
    ("deprecated-flag", "    vllm: {log_config_file: /x.json}",
     "m.yaml:8:12: roles[0].vllm.log_config_file: --log-config-file is deprecated in vLLM 0.33.0 "
     "(--log-config-file is deprecated and will be removed in v0.33.0.); use "
     "--logging-config.pylogging_config_file instead"),
    ("out-of-range", '    vllm: {gpu_memory_utilization: "9.0"}',
     "m.yaml:8:12: roles[0].vllm.gpu_memory_utilization: --gpu-memory-utilization takes a value in (0, 1] "
     "in vLLM 0.33.0, found '9.0'"),
    ("wrong-type", "    vllm: {max_num_seqs: many}",
     "m.yaml:8:12: roles[0].vllm.max_num_seqs: --max-num-seqs takes a whole number, found 'many'"),
    ("fraction-for-count", "    vllm: {max_num_seqs: 1.5}",
     "m.yaml:8:12: roles[0].vllm.max_num_seqs: --max-num-seqs takes a whole number, found 1.5"),
    ("bad-size", "    vllm: {max_model_len: 8 k}",
     "m.yaml:8:12: roles[0].vllm.max_model_len: --max-model-len takes a whole number or a size such as 32k, "
     "found '8 k'"),
    ("choices", "    vllm: {kv_cache_dtype: fp9}",
     "m.yaml:8:12: roles[0].vllm.kv_cache_dtype: --kv-cache-dtype takes one of auto, bfloat16, float16, fp8, "
     "fp8_ds_mla, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_per_token_head, int4_per_token_head, int8_per_token_head, "
     "nvfp4, nvfp4_4over6, nvfp4_ds_mla, octave_k3v3, octave_k3v3_compact, octave_k3v4, turboquant_3bit_nc, "
     "turboquant_4bit_nc, turboquant_k3v4_nc, turboquant_k8v4, ultraquant_4bit in vLLM 0.33.0, found 'fp9'"),
    ("tool-parser", "    vllm: {tool_call_parser: hermess}",
     None),  # message checked by prefix below: the list is long
    ("switch-with-value", "    vllm: {enable_prefix_caching: 'yes'}",
     "m.yaml:8:12: roles[0].vllm.enable_prefix_caching: --enable-prefix-caching is a switch: write true to "
     "pass it (false leaves it out, or no_enable_prefix_caching: true for --no-enable-prefix-caching), "
     "found 'yes'"),
    ("value-flag-bare", "    vllm: {max_num_seqs: true}",
     "m.yaml:8:12: roles[0].vllm.max_num_seqs: --max-num-seqs takes a value, and true would pass it bare"),
    ("json-subkey-of-scalar", "    vllm: {max_num_seqs.x: 1}",
     "m.yaml:8:12: roles[0].vllm.max_num_seqs.x: --max-num-seqs is not a JSON config, so it has no sub-key 'x'"),
    ("raw-arg", "    vllm_raw_args: ['--max-modle-len 4096']",
     "m.yaml:8:21: roles[0].vllm_raw_args[0]: vLLM 0.33.0 has no argument --max-modle-len "
     "(did you mean 'max_model_len'?)"),
    ("raw-arg-range", "    vllm_raw_args: ['--gpu-memory-utilization=1.5']",
     "m.yaml:8:21: roles[0].vllm_raw_args[0]: --gpu-memory-utilization takes a value in (0, 1] in vLLM 0.33.0, "
     "found '1.5'"),
    ("computed", "    computed: {vllm: {max_num_seqz: 4}}",
     "m.yaml:8:23: roles[0].computed.vllm.max_num_seqz: vLLM 0.33.0 has no argument --max-num-seqz "
     "(did you mean 'max_num_seqs'?)"),
    ("role-env", "    env: {VLLM_RANDOMIZE_DP_DUMMY_INPUT: '1'}",
     "m.yaml:8:11: roles[0].env.VLLM_RANDOMIZE_DP_DUMMY_INPUT: vLLM 0.33.0 reads no variable "
     "VLLM_RANDOMIZE_DP_DUMMY_INPUT (did you mean 'VLLM_RANDOMIZE_DP_DUMMY_INPUTS'?); it would log "
     "'Unknown vLLM environment variable' and ignore it"),
    ("removed-env", "    env: {VLLM_MOE_DP_CHUNK_SIZE: '256'}",
     "m.yaml:8:11: roles[0].env.VLLM_MOE_DP_CHUNK_SIZE: vLLM 0.33.0 reads no variable VLLM_MOE_DP_CHUNK_SIZE; "
     "it would log 'Unknown vLLM environment variable' and ignore it"),
]


@pytest.mark.parametrize("role, expected", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_vllm_argument(tmp_path, monkeypatch, role, expected):
    r = _render(tmp_path, monkeypatch, role)
    assert (r.returncode, r.stdout) == (1, "")
    if expected is None:
        assert r.stderr.startswith("error: m.yaml:8:12: roles[0].vllm.tool_call_parser: --tool-call-parser takes "
                                   "one of apertus, beam, ")
        assert r.stderr.endswith(" in vLLM 0.33.0, found 'hermess' (did you mean 'hermes'?)\n")
    else:
        assert r.stderr == f"error: {expected}\n"


def test_spec_level_vllm_and_env(tmp_path, monkeypatch):
    r = _render(tmp_path, monkeypatch, "", "vllm: {enforce_eagre: true}")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", (
        "error: m.yaml:4:8: vllm.enforce_eagre: vLLM 0.33.0 has no argument --enforce-eagre "
        "(did you mean 'enforce_eager'?)\n"))
    r = _render(tmp_path, monkeypatch, "", "env: {VLLM_LOGGING_LEVL: DEBUG}")
    assert r.returncode == 1 and r.stderr.startswith(
        "error: m.yaml:4:7: env.VLLM_LOGGING_LEVL: vLLM 0.33.0 reads no variable VLLM_LOGGING_LEVL "
        "(did you mean 'VLLM_LOGGING_LEVEL'?)")


def test_owned_flags_keep_their_own_message(tmp_path, monkeypatch):
    r = _render(tmp_path, monkeypatch, "    vllm: {tensor_parallel_size: 2}")
    assert (r.returncode, r.stderr) == (1, (
        "error: m.yaml:8:12: roles[0].vllm.tensor_parallel_size: --tensor-parallel-size is set by Manifesto; "
        "configure it through parallelism.tp\n"))


def test_good_arguments_render(tmp_path, monkeypatch):
    role = ("    vllm: {max_model_len: 32k, gpu_memory_utilization: '0.9', kv_cache_dtype: fp8, "
            "no_enable_prefix_caching: true, compilation_config: {cudagraph_mode: FULL_DECODE_ONLY}, "
            "compilation_config.mode: 3, reasoning_parser: qwen3, tool_call_parser: hermes}\n"
            "    vllm_raw_args: ['--max-num-seqs 64', '-O3', '--speculative-config.method=mtp']")
    r = _render(tmp_path, monkeypatch, role)
    assert (r.returncode, r.stderr) == (0, "")
    assert "--max-model-len 32k" in r.stdout and "--no-enable-prefix-caching" in r.stdout


def test_a_custom_tool_parser_plugin_widens_the_list(tmp_path, monkeypatch):
    role = "    vllm: {tool_parser_plugin: /p/my_parser.py, tool_call_parser: mine}"
    assert _render(tmp_path, monkeypatch, role).returncode == 0


def test_unknown_release_is_said_once_and_skipped(tmp_path, monkeypatch):
    top = "vllm: {max_model_lenn: 1}"
    (tmp_path / "m.yaml").write_text(SPEC.format(role="", top=top).replace("{id: org/model}",
                                                                          "{id: org/model, image: my/vllm:dev}"))
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "example-stateless-b200", "--user", "u", "--namespace", "ns")
    assert (r.returncode, r.stderr) == (0, (
        "manifesto: warning: the image my/vllm:dev names no vLLM release; vLLM arguments and VLLM_* variables "
        "are not checked\n"))


def test_cluster_env_is_checked(tmp_path, monkeypatch):
    cluster = (ROOT / "clusters" / "example-stateless-b200.yaml").read_text()
    assert "default_env" not in cluster
    (tmp_path / "c.yaml").write_text(cluster.replace("fabric:", "fabric:\n  default_env: {VLLM_HOST_IPP: x}", 1)
                                     if "fabric:" in cluster else cluster + "fabric:\n  default_env: {VLLM_HOST_IPP: x}\n")
    (tmp_path / "m.yaml").write_text(SPEC.format(role="", top=""))
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "c.yaml", "--user", "u", "--namespace", "ns")
    assert r.returncode == 1 and re.fullmatch(
        r"error: c\.yaml:\d+:\d+: fabric\.default_env\.VLLM_HOST_IPP: vLLM 0\.33\.0 reads no variable VLLM_HOST_IPP "
        r"\(did you mean 'VLLM_HOST_IP'\?\); it would log 'Unknown vLLM environment variable' and ignore it\n",
        r.stderr), r.stderr


# ---- the router: plugin types, parameters, references ----------------------------------------

PICKER_POLICY = {
    "apiVersion": "llm-d.ai/v1alpha1", "kind": "EndpointPickerConfig",
    "plugins": [{"type": "queue-scorer"}, {"type": "weighted-random-picker", "parameters": {"threshold": 0.1}}],
    "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "queue-scorer"},
                                                          {"pluginRef": "weighted-random-picker"}]}],
}


def test_threshold_on_the_weighted_random_picker_is_refused():
    # The defect issue 20 found in the built-in load-aware policy: the EPP exits with
    # `json: unknown field "threshold"`.
    assert epp_problem(router_table(ROUTER), PICKER_POLICY) == (
        ("plugins", 1, "parameters", "threshold"),
        "weighted-random-picker in router v0.10.0 has no parameter 'threshold'; it takes: maxNumOfEndpoints "
        "(the router decodes parameters strictly and would exit on start)")


@pytest.mark.parametrize("name", ["PD_POLICY", "LOAD_AWARE_POLICY"])
def test_builtin_policies_fit_the_pinned_router(name):
    from manifesto.resolve import routing

    assert epp_problem(router_table(_catalog()["llm_d"]["release"]), getattr(routing, name)) is None


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "routing").glob("*.yaml")))
def test_bundled_routing_profiles_fit_the_pinned_router(name):
    data = yaml.safe_load((ROOT / "routing" / name).read_text())
    assert epp_problem(router_table(_catalog()["llm_d"]["release"]), data) is None


def _policy(**changes) -> dict:
    import copy

    p = copy.deepcopy(PICKER_POLICY)
    p["plugins"][1].pop("parameters")
    for key, value in changes.items():
        p[key] = value
    return p


@pytest.mark.parametrize("config, expected", [
    (_policy(plugins=[{"type": "queue-scorr"}], schedulingProfiles=[]),
     (("plugins", 0, "type"), "router v0.10.0 has no plugin type 'queue-scorr' (did you mean 'queue-scorer'?)")),
    (_policy(plugins=[{"type": "weighted-random-picker", "parameters": {"maxNumOfEndpoints": "two"}}],
             schedulingProfiles=[]),
     (("plugins", 0, "parameters", "maxNumOfEndpoints"),
      "weighted-random-picker parameter maxNumOfEndpoints takes a whole number, found 'two'")),
    (_policy(plugins=[{"type": "weighted-random-picker", "parameters": {"maxnumofendpoints": 2}}],
             schedulingProfiles=[]), None),
    (_policy(plugins=[{"type": "pd-profile-handler"}], schedulingProfiles=[]),
     (("plugins", 0, "type"), "plugin type pd-profile-handler was removed in router v0.9.0; use disagg-profile-handler")),
    (_policy(apiVersion="llm-d.ai/v1"),
     (("apiVersion",), "router v0.10.0 reads apiVersion llm-d.ai/v1alpha1 or inference.networking.x-k8s.io/v1alpha1, "
                       "not 'llm-d.ai/v1'")),
    (_policy(schedulingProfiles=[{"name": "d", "plugins": [{"pluginRef": "weighted-random-pickr"}]}]),
     (("schedulingProfiles", 0, "plugins", 0, "pluginRef"),
      "pluginRef 'weighted-random-pickr' names no plugin of this config (did you mean 'weighted-random-picker'?); "
      "plugins: queue-scorer, weighted-random-picker")),
], ids=["unknown-type", "wrong-parameter-type", "keys-match-without-case", "removed-type", "api-version",
        "dangling-ref"])
def test_epp_problems(config, expected):
    assert epp_problem(router_table(ROUTER), config) == expected


def test_unknown_parameter_in_a_routing_profile_is_placed(tmp_path, monkeypatch):
    text = (ROOT / "routing" / "kv-aware.yaml").read_text()
    (tmp_path / "r.yaml").write_text(text.replace("- {type: max-score-picker}",
                                                  "- type: max-score-picker\n    parameters: {threshold: 0.1}"))
    (tmp_path / "m.yaml").write_text("release: demo\nmodel: {id: org/model}\nrouting: {kind: load_aware}\n"
                                     "roles:\n  - name: decode\n")
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "example-stateless-b200", "--user", "u", "--namespace", "ns",
                       "--routing-profile", "r.yaml")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", (
        "error: r.yaml:21:18: plugins[4].parameters.threshold: max-score-picker in router v0.10.0 has no "
        "parameter 'threshold'; it takes: maxNumOfEndpoints (the router decodes parameters strictly and would "
        "exit on start)\n"))


def test_inline_plugin_config_is_checked(tmp_path, monkeypatch):
    (tmp_path / "m.yaml").write_text(
        "release: demo\nmodel: {id: org/model}\nrouting:\n  kind: load_aware\n  plugin_config:\n"
        "    apiVersion: llm-d.ai/v1alpha1\n    kind: EndpointPickerConfig\n    plugins:\n"
        "      - {type: max-score-picker, parameters: {maxNumOfEndpoint: 2}}\n"
        "    schedulingProfiles:\n      - {name: default, plugins: [{pluginRef: max-score-picker}]}\n"
        "roles:\n  - name: decode\n")
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "example-stateless-b200", "--user", "u", "--namespace", "ns")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", (
        "error: m.yaml:9:47: routing.plugin_config.plugins[0].parameters.maxNumOfEndpoint: max-score-picker in "
        "router v0.10.0 has no parameter 'maxNumOfEndpoint' (did you mean 'maxNumOfEndpoints'?); it takes: "
        "maxNumOfEndpoints (the router decodes parameters strictly and would exit on start)\n"))


# ---- every committed artifact hands the runtimes only flags they declare -------------------

ARTIFACTS = sorted([*ROOT.glob("out/*/**/*.yaml"), *ROOT.glob("out/*/**/*.sbatch"),
                    *ROOT.glob("tests/golden/*/expected.*")])
ARGS_BLOCK = re.compile(r"^\s*args=\(\n\s*serve \S+\n(.*?)\n\s*\)$", re.M | re.S)
ARGS_MORE = re.compile(r"^\s*args\+=\((.*)\)\s*$", re.M)


def _vllm_words(text: str) -> list[list[str]]:
    return [shlex.split(m) for m in ARGS_BLOCK.findall(text) + ARGS_MORE.findall(text)]


def _router_commands(text: str, path: Path) -> list[tuple[str, list[str]]]:
    """(component, argv) of every endpoint picker and P/D sidecar the artifact starts."""
    out = []
    if path.suffix == ".sbatch":
        for line in text.splitlines():
            words = line.split()
            if words and words[0] in ("/app/epp", "/app/pd-sidecar"):
                out.append(("epp" if words[0] == "/app/epp" else "sidecar", [w for w in words[1:] if w != "&"]))
        return out
    for doc in yaml.safe_load_all(text):
        spec = (doc or {}).get("spec") or {}
        pod = ((spec.get("template") or {}).get("spec")) or {}
        for c in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
            image = c.get("image", "")
            if "llm-d-router-endpoint-picker" in image:
                out.append(("epp", c.get("args") or []))
            elif "llm-d-router-disagg-sidecar" in image:
                out.append(("sidecar", c.get("args") or []))
    return out


def test_artifacts_are_present():
    assert len(ARTIFACTS) > 30
    assert sum(bool(_vllm_words(p.read_text())) for p in ARTIFACTS) > 30
    assert sum(bool(_router_commands(p.read_text(), p)) for p in ARTIFACTS) > 10


@pytest.mark.parametrize("path", ARTIFACTS, ids=[str(p.relative_to(ROOT)) for p in ARTIFACTS])
def test_artifact_flags_exist_in_the_pinned_releases(path):
    text = path.read_text()
    images = set(re.findall(r"vllm/vllm-openai:[\w.-]+", text))
    assert images <= {_catalog()["vllm"]["standard"]}, f"{path}: vLLM image other than the catalog's pin: {images}"
    table = vllm_table(VLLM)
    for words in _vllm_words(text):
        assert check_flag_words(table, words) is None, f"{path}: {' '.join(words)}"
    router = router_table(_catalog()["llm_d"]["release"])
    for component, argv in _router_commands(text, path):
        known = router.epp_flags if component == "epp" else router.sidecar_flags
        assert check_flags(known, argv) is None, f"{path}: {component} {argv}"


def test_a_router_release_without_a_table_is_said_and_skipped(tmp_path, monkeypatch):
    cluster = (ROOT / "clusters" / "example-stateless-b200.yaml").read_text()
    assert "\nllm_d:" not in cluster
    (tmp_path / "c.yaml").write_text(cluster + "llm_d: {release: v0.9.0}\n")
    (tmp_path / "m.yaml").write_text("release: demo\nmodel: {id: org/model}\nrouting: {kind: load_aware}\n"
                                     "roles:\n  - name: decode\n")
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "c.yaml", "--user", "u", "--namespace", "ns")
    assert (r.returncode, r.stderr) == (0, (
        "manifesto: warning: Manifesto has no table of llm-d-router v0.9.0; the endpoint-picker configuration "
        "is not checked\n"))


def test_router_main_is_not_checked_against_a_dated_snapshot(tmp_path, monkeypatch):
    cluster = (ROOT / "clusters" / "example-stateless-b200.yaml").read_text()
    (tmp_path / "c.yaml").write_text(cluster + "llm_d: {release: main}\n")
    (tmp_path / "r.yaml").write_text((ROOT / "routing" / "kv-aware.yaml").read_text()
                                     .replace("apiVersion: llm-d.ai/v1alpha1", "apiVersion: llm-d.ai/v1"))
    (tmp_path / "m.yaml").write_text("release: demo\nmodel: {id: org/model}\nrouting: {kind: load_aware}\n"
                                     "roles:\n  - name: decode\n")
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "c.yaml", "--user", "u", "--namespace", "ns",
                       "--routing-profile", "r.yaml")
    assert (r.returncode, r.stderr) == (0, (
        "manifesto: warning: llm-d-router main changes with every commit, so no table describes the image; "
        "the endpoint-picker configuration is not checked\n"))


def test_owned_flag_in_raw_args_keeps_its_message(tmp_path, monkeypatch):
    r = _render(tmp_path, monkeypatch, "    vllm_raw_args: ['--revision']")
    assert (r.returncode, r.stderr) == (1, (
        "error: m.yaml:8:21: roles[0].vllm_raw_args[0]: --revision is set by Manifesto; configure it through "
        "model.revision\n"))
