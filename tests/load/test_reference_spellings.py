"""The reference's remaining spellings (issue 27): each is read with a warning naming ours, or
refused naming the new spelling and what changes; through the loader and through ``migrate``."""

from __future__ import annotations

import pytest

from kit import cli_in_process

CLUSTER = "example-stateless-b200"


def _spec(tmp_path, body: str, name: str = "ref.yaml"):
    path = tmp_path / name
    path.write_text(body)
    return path


def _render(path):
    return cli_in_process("render", "manifest", str(path), "--cluster", CLUSTER, "--user", "u", "--namespace", "ns")


def _migrate(path):
    return cli_in_process("migrate", str(path))


BASE = "release: demo\nmodel: {id: org/model}\n"


# ---- namespace, model.hf_home, cache.cuda -------------------------------------------------------

NAMESPACE_DROPPED = (
    "namespace is ignored: the namespace is a render option here, as it was for the reference's commands (they "
    "replaced this key with it): pass --namespace, or set MANIFESTO_NAMESPACE or `namespace:` in a BUILD.yaml "
    "option set; without either it is the kube context's namespace")
CUDA_DROPPED = (
    "cache.cuda is ignored: the {cuda} piece of compiled-cache paths is derived from the accelerator's "
    "torch_cuda_arch_list here, and the image tag (or cache.key) already keeps caches of different builds apart; "
    "set cache.key to force a fresh cache")
HF_MAPPED = (
    "model.hf_home is the reference's spelling; it is read as env.HF_HOME (the pods' Hugging Face cache, in "
    "place of the cluster's cache.hf_home; the path must be on a volume the cluster mounts)")


def test_namespace_hf_home_and_cuda_load_with_warnings(tmp_path):
    path = _spec(tmp_path, "release: demo\nnamespace: prod\nmodel: {id: org/model, hf_home: /shared/hf}\n"
                           "cache: {cuda: cu12}\nroles:\n  - name: decode\n")
    r = _render(path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        f"manifesto: warning: {path}:3:24: {HF_MAPPED}",
        f"manifesto: warning: {path}:2:1: {NAMESPACE_DROPPED}",
        f"manifesto: warning: {path}:4:9: {CUDA_DROPPED}",
    ]
    assert "name: HF_HOME\n          value: /shared/hf\n" in r.stdout
    assert "namespace: prod" not in r.stdout and "namespace: ns" in r.stdout


def test_hf_home_with_env_hf_home_is_refused(tmp_path):
    path = _spec(tmp_path, "release: demo\nmodel: {id: org/model, hf_home: /a}\nenv: {HF_HOME: /b}\n"
                           "roles:\n  - name: decode\n")
    r = _render(path)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: {path}:2:24: model.hf_home: the reference's spelling of env.HF_HOME, which is set "
                        "too; keep one\n")


def test_migrate_maps_namespace_hf_home_and_cuda(tmp_path):
    path = _spec(tmp_path, "release: demo  # kept\nnamespace: prod\nmodel:\n  id: org/model\n  hf_home: /shared/hf\n"
                           "cache:\n  cuda: cu12\nroles:\n  - name: decode\n")
    r = _migrate(path)
    assert (r.returncode, r.stdout) == (0, "release: demo  # kept\nmodel:\n  id: org/model\nroles:\n  - name: decode\n"
                                           "env:\n  HF_HOME: /shared/hf\n")
    assert r.stderr == f"mapped: {HF_MAPPED}\ndropped: {NAMESPACE_DROPPED}\ndropped: {CUDA_DROPPED}\n"


# ---- routing.epp_image, routing.epp.image ---------------------------------------------------------

PICKER = ("the picker image is set per cluster here: llm_d.images.epp in the cluster profile (or llm_d.release, "
          "which picks the picker and the P/D sidecar of one router release from the image catalog); remove it from "
          "the spec. What changes: every spec rendered for that cluster runs that picker, and the sidecar stays on "
          "its release")


@pytest.mark.parametrize("routing, key, at", [
    ("routing: {kind: load_aware, epp_image: ghcr.io/x/epp:1}\n", "routing.epp_image", "3:29"),
    ("routing:\n  kind: load_aware\n  epp: {image: ghcr.io/x/epp:1}\n", "routing.epp.image", "5:9"),
], ids=["epp_image", "epp.image"])
def test_picker_image_is_refused_naming_the_cluster_field(tmp_path, routing, key, at):
    path = _spec(tmp_path, BASE + routing + "roles:\n  - name: decode\n")
    r = _render(path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"error: {path}:{at}: {key}: {PICKER}\n")
    r = _migrate(path)
    assert r.returncode == 1
    assert f"could not map: {key}: {PICKER}\n" in r.stderr


# ---- parallelism.gpus_per_node ----------------------------------------------------------------------

def test_gpus_per_node_is_the_alias_of_gpus(tmp_path):
    path = _spec(tmp_path, BASE + "roles:\n  - name: decode\n    parallelism: {tp: 2, gpus_per_node: 2}\n")
    r = _render(path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == (f"manifesto: warning: {path}:5:26: roles[0].parallelism.gpus_per_node is the reference's "
                        "spelling; it is read as roles[0].resources.gpus\n")
    # A value that disagrees with the derived GPUs per pod is the check's error, at the key as written.
    path.write_text(BASE + "roles:\n  - name: decode\n    parallelism: {tp: 2, gpus_per_node: 4}\n")
    r = _render(path)
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1].startswith(f"error: {path}:5:26: roles[0].resources.gpus: resources.gpus = 4 "
                                                "disagrees with the 2 GPUs per pod")


def test_gpus_per_node_beside_gpus_is_refused(tmp_path):
    path = _spec(tmp_path, BASE + "roles:\n  - name: decode\n    parallelism: {gpus: 1, gpus_per_node: 1}\n")
    r = _render(path)
    assert r.returncode == 1
    assert r.stderr == (f"error: {path}:5:28: roles[0].parallelism.gpus_per_node: the reference's spelling of "
                        "roles[0].resources.gpus, which is set too; keep one\n")


def test_migrate_maps_gpus_per_node(tmp_path):
    path = _spec(tmp_path, BASE + "roles:\n  - name: decode\n    parallelism:\n      tp: 2\n      gpus_per_node: 2\n")
    r = _migrate(path)
    assert (r.returncode, r.stdout) == (0, BASE + "roles:\n  - name: decode\n    parallelism:\n      tp: 2\n"
                                               "    resources:\n      gpus: 2\n")


# ---- roles[].vars -------------------------------------------------------------------------------------

VARS = BASE + """vars: {seqs: 64}
roles:
  - name: decode
    vars: {batch: 8192}
    computed: {vllm: {max_num_batched_tokens: batch, max_num_seqs: seqs}}
  - name: other
    vars: {batch: 8192, seqs: 64}
"""


def test_role_vars_move_to_the_top_when_nothing_changes(tmp_path):
    path = _spec(tmp_path, VARS)
    r = _render(path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        f"manifesto: warning: {path}:6:5: roles[0].vars is the reference's spelling; its names are read as "
        "top-level vars (vars are spec-wide here, and no other role gives them another value)",
        f"manifesto: warning: {path}:9:5: roles[1].vars is the reference's spelling; its names are read as "
        "top-level vars (vars are spec-wide here, and no other role gives them another value)",
    ]
    assert "--max-num-batched-tokens 8192" in r.stdout


@pytest.mark.parametrize("other, where", [
    ("  - name: other\n    vars: {batch: 4096}\n", "another role"),
    ("", "the top-level vars"),
], ids=["two-roles", "top-level"])
def test_role_vars_that_change_meaning_are_refused(tmp_path, other, where):
    top = "vars: {batch: 1}\n" if not other else ""
    path = _spec(tmp_path, BASE + top + "roles:\n  - name: decode\n    vars: {batch: 8192}\n"
                 "    computed: {vllm: {max_num_batched_tokens: batch}}\n" + other)
    r = _render(path)
    assert r.returncode == 1
    line = 5 if other else 6
    assert r.stderr.splitlines()[0] == (
        f"error: {path}:{line}:5: roles[0].vars: vars are spec-wide here, and batch has another value in {where}; "
        "give this role's batch its own name in the top-level vars and use that name in this role's computed "
        "expressions")


def test_migrate_moves_role_vars(tmp_path):
    path = _spec(tmp_path, BASE + "roles:\n  - name: decode\n    vars:\n      batch: 8192\n")
    r = _migrate(path)
    assert (r.returncode, r.stdout) == (0, BASE + "roles:\n  - name: decode\nvars:\n  batch: 8192\n")
    assert r.stderr.startswith("mapped: roles[0].vars is the reference's spelling; its names are read as top-level")


def test_migrate_refuses_role_vars_in_a_file_that_extends_another(tmp_path):
    path = _spec(tmp_path, "extends: base.yaml\nroles:\n  decode:\n    vars: {batch: 1}\n")
    r = _migrate(path)
    assert r.returncode == 1
    assert "could not map: roles.decode.vars: vars are spec-wide here; move them to the top-level vars" in r.stderr


def test_role_vars_of_an_override_file_are_moved_after_the_merge(tmp_path):
    _spec(tmp_path, BASE + "vars: {batch: 1}\nroles:\n  - name: decode\n  - name: other\n", "base.yaml")
    path = _spec(tmp_path, "extends: base.yaml\nroles:\n  decode:\n    vars: {batch: 2}\n")
    r = _render(path)  # batch is 1 for 'other' and would be 2 for 'decode': not one spec-wide value
    assert r.returncode == 1
    assert "roles[0].vars: vars are spec-wide here, and batch has another value in the top-level vars" in r.stderr


# ---- vllm_raw_args as a token list ----------------------------------------------------------------------

TOKENS = BASE + """roles:
  - name: decode
    vllm_raw_args: [--max-num-seqs, "64", --enforce-eager, --kv-cache-dtype, fp8, --seed, "-1"]
"""
TOKENS_MAPPED = ("roles[0].vllm_raw_args is the reference's token list (a flag and its value in separate entries); "
                 "it is read with each value joined to its flag: '--max-num-seqs 64', '--kv-cache-dtype fp8', "
                 "'--seed -1'")


def test_token_list_is_joined_flag_by_flag(tmp_path):
    path = _spec(tmp_path, TOKENS)
    r = _render(path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"manifesto: warning: {path}:5:5: {TOKENS_MAPPED}\n"
    for words in ("--max-num-seqs 64", "--enforce-eager", "--kv-cache-dtype fp8", "--seed -1"):
        assert words in r.stdout


def test_errors_in_a_joined_token_list_point_at_the_flag_as_written(tmp_path):
    path = _spec(tmp_path, TOKENS.replace("--kv-cache-dtype", "--kv-cache-dtyp"))
    r = _render(path)
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1] == (
        f"error: {path}:5:60: roles[0].vllm_raw_args[2]: vLLM 0.33.0 has no argument --kv-cache-dtyp "
        "(did you mean 'kv_cache_dtype'?)")


def test_migrate_joins_a_token_list(tmp_path):
    path = _spec(tmp_path, TOKENS)
    r = _migrate(path)
    assert (r.returncode, r.stderr) == (0, f"mapped: {TOKENS_MAPPED}\n")
    assert r.stdout == BASE + ("roles:\n  - name: decode\n    vllm_raw_args: [--max-num-seqs 64, --enforce-eager, "
                               "--kv-cache-dtype fp8, --seed -1]\n")


def test_one_entry_per_flag_is_left_alone(tmp_path):
    path = _spec(tmp_path, BASE + "roles:\n  - name: decode\n    vllm_raw_args: ['--max-num-seqs 64', --enforce-eager]\n")
    r = _migrate(path)
    assert (r.returncode, r.stderr) == (0, "")


# ---- pd without a routing: key -----------------------------------------------------------------------------

PD = """release: demo
topology: pd
model: {id: org/model}
roles:
  - name: prefill
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
  - name: decode
    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}
    routing_proxy: true
    backend_port_base: 8200
"""


def test_pd_without_routing_key_takes_the_derived_proxy(tmp_path):
    path = _spec(tmp_path, PD)
    r = _render(path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        f"manifesto: warning: {path}:9:5: roles[1].routing_proxy is ignored: it restates what is derived: the P/D "
        "sidecar fronts the target role of a pd topology",
        f"manifesto: warning: {path}:10:5: roles[1].backend_port_base is ignored: it restates what is derived: vLLM "
        "listens from 8200 behind the P/D sidecar, else from 8000",
    ]
    r = _migrate(path)
    assert r.returncode == 0 and "routing_proxy" not in r.stdout and "backend_port_base" not in r.stdout


def test_proxy_on_prefill_is_still_refused(tmp_path):
    path = _spec(tmp_path, PD.replace("    kv_transfer_config: {kv_connector: NixlConnector, kv_role: kv_both}\n  - name: "
                                      "decode", "    routing_proxy: true\n    kv_transfer_config: {kv_connector: "
                                      "NixlConnector, kv_role: kv_both}\n  - name: decode", 1))
    r = _render(path)
    assert r.returncode == 1
    assert "roles[0].routing_proxy: derived as False here" in r.stderr


# ---- malformed shapes never crash the rules -------------------------------------------------------------

@pytest.mark.parametrize("value", [None, "x", 7, [1, {"a": 1}], {}, {"z": [None]}, ["--a", 3, None]])
def test_new_rules_take_any_shape(value):
    from manifesto.load.spellings import migrate_spec

    for place in ("namespace", "hf_home", "cuda", "gpus_per_node", "role_vars", "vars", "raw"):
        data = {"release": "x", "model": {"id": "a/b"}, "cache": {}, "vars": {"a": 1},
                "roles": [{"name": "d", "parallelism": {}, "vars": {"b": 1}, "vllm_raw_args": ["--x", "1"]}]}
        target = {"namespace": (data, "namespace"), "hf_home": (data["model"], "hf_home"),
                  "cuda": (data["cache"], "cuda"), "gpus_per_node": (data["roles"][0]["parallelism"], "gpus_per_node"),
                  "role_vars": (data["roles"][0], "vars"), "vars": (data, "vars"),
                  "raw": (data["roles"][0], "vllm_raw_args")}[place]
        target[0][target[1]] = value
        migrate_spec(data)
