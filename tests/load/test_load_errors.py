"""The bad-input corpus: every file under ``tests/data/bad/`` and the exact message it gets.

Each case runs ``manifesto explain`` and ``manifesto config validate`` from ``tests/data``,
so the paths in the messages are relative (``bad/x.yaml:7:5``) and stable, and asserts the
WHOLE stderr, exit code 1, empty stdout and no traceback. Every case fails before the
renderer is reached, so both commands must print the same message. The CLI runs
in-process (``manifesto.cli.main``; an escaping exception counts as a traceback) because a
fresh interpreter costs about a second; a sample of cases also runs as a real subprocess.

Inputs that must merely load without a traceback (merge keys, ``!!omap``, deep nesting) are
at the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from kit import cli_in_process, run_cli, scrub

DATA = Path(__file__).resolve().parents[1] / "data"
BAD = DATA / "bad"

# Clusters are named from the bundled catalog; the model files are all in the corpus.
STATELESS = "example-stateless-b200"  # one b200 profile, 8 GPUs per node, no storage
GB200 = "example-gb200"  # gb200 + b200, 4 GPUs per node, shared claim mounted at /mnt/shared
PD_SPEC = "qwen/qwen3-0.6b-pd"  # a valid bundled spec, for the cluster-file cases


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    expected: str  # the whole stderr, without the trailing newline


def spec(name: str, cluster: str = STATELESS, *extra: str) -> tuple[str, ...]:
    return (f"bad/{name}.yaml", "--cluster", cluster, *extra)


def cluster(name: str, model: str = PD_SPEC) -> tuple[str, ...]:
    return (model, "--cluster", f"bad/{name}.yaml")


def routing(name: str) -> tuple[str, ...]:
    return spec("routed-ok", STATELESS, "--routing-profile", f"bad/{name}.yaml")


DNS = ("must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter "
       "or digit, at most 63 characters")
OWNED = "is set by Manifesto; configure it through"
PLACEHOLDERS = "{cache_key}, {cuda}, {gpu_arch}, {instance}, {release}, {role}, {user}"
EPHEMERAL = ("which starts empty in every pod; the worktree must live on persistent storage "
             "(/mnt/shared, /mnt/local)")

CASES = [
    # ---- schema: unknown keys, wrong types, bad values ---------------------------------
    Case("unknown-key-deep-in-role", spec("unknown-key-deep"),
         "error: bad/unknown-key-deep.yaml:7:7: roles[0].parallelism.tpp: unknown key 'tpp' (did you mean 'tp'?)"),
    Case("unknown-key-top-reports-both-errors", spec("unknown-key-top"),
         "error: bad/unknown-key-top.yaml:2:1: release: required field is missing\n"
         "error: bad/unknown-key-top.yaml:2:1: relase: unknown key 'relase' (did you mean 'release'?)"),
    Case("wrong-type-word-for-int", spec("wrong-type-int"),
         "error: bad/wrong-type-int.yaml:6:11: roles[0].lws.size: expected a whole number, got 'two'"),
    Case("wrong-type-number-for-mapping", spec("wrong-type-mapping"),
         "error: bad/wrong-type-mapping.yaml:6:5: roles[0].parallelism: expected a mapping, got 4"),
    Case("wrong-type-quoted-number", spec("wrong-type-quoted-number"),
         "error: bad/wrong-type-quoted-number.yaml:6:19: roles[0].parallelism.tp: expected a whole number, got '2'"),
    Case("several-errors-in-file-order", spec("several-errors"),
         "error: bad/several-errors.yaml:6:11: roles[0].lws.replicas: must be at least 1\n"
         "error: bad/several-errors.yaml:8:26: roles[1].parallelism.ep: expected true or false, got 'maybe'\n"
         "error: bad/several-errors.yaml:9:5: roles[1].enviroment: unknown key 'enviroment'"),
    Case("dp-zero", spec("dp-zero"),
         "error: bad/dp-zero.yaml:6:26: roles[0].parallelism.dp: dp must be a whole number of at least 1, or false"),
    Case("release-not-dns-label", spec("release-not-dns"),
         f"error: bad/release-not-dns.yaml:2:1: release: 'My_Release' {DNS}"),
    Case("env-value-boolean", spec("env-bool"),
         "error: bad/env-bool.yaml:7:7: roles[0].env.VLLM_USE_DEEP_GEMM: environment values must be strings; "
         "quote the value"),
    Case("missing-model-id", spec("missing-model-id"),
         "error: bad/missing-model-id.yaml:3:1: model.id: required field is missing"),
    Case("topology-not-allowed", spec("bad-topology"),
         "error: bad/bad-topology.yaml:3:1: topology: 'disaggregated' is not allowed; expected 'aggregated' or 'pd'"),
    Case("duplicate-role", spec("duplicate-role"),
         "error: bad/duplicate-role.yaml:6:5: roles[1].name: role 'decode' is defined twice (first as roles[0])"),
    Case("image-and-image-ref", spec("image-and-image-ref"),
         "error: bad/image-and-image-ref.yaml:6:3: model.image: set either image_ref or image, not both"),
    Case("memory-not-a-quantity", spec("bad-quantity"),
         "error: bad/bad-quantity.yaml:6:17: roles[0].resources.memory: 'lots' is not a Kubernetes quantity "
         "(examples: 8, 500m, 64Gi, 2G)"),
    Case("unknown-sidecar", spec("unknown-sidecar"),
         "error: bad/unknown-sidecar.yaml:5:14: runtime.sidecars[0]: 'dcgm' is not allowed; "
         "expected 'dcgm-exporter' or 'node-exporter'"),
    Case("var-not-a-number", spec("var-not-number"),
         "error: bad/var-not-number.yaml:4:8: vars.max_concurrency: expected a number, got 'many'"),
    Case("var-boolean-shown-as-yaml", spec("var-bool"),
         "error: bad/var-bool.yaml:4:8: vars.max_concurrency: expected a number, got true"),
    Case("var-not-finite", spec("var-not-finite"),
         "error: bad/var-not-finite.yaml:4:8: vars.max_concurrency: expected a finite number, got .nan"),
    Case("top-level-list", spec("top-level-list"),
         "error: bad/top-level-list.yaml:2:1: expected a mapping at the top of a model spec"),
    Case("empty-file", spec("empty"),
         "error: bad/empty.yaml: expected a mapping at the top of a model spec"),
    # ---- YAML itself ---------------------------------------------------------------------
    Case("duplicate-yaml-key", spec("duplicate-key"),
         "error: bad/duplicate-key.yaml:7:5: duplicate key 'parallelism' (first defined on line 6)"),
    Case("broken-yaml-unclosed-flow-mapping", spec("broken-yaml"),
         "error: bad/broken-yaml.yaml:4:6: expected ',' or '}', but got ':' "
         "(the '{' mapping started at line 3, column 8)"),
    Case("broken-yaml-bad-indent", spec("bad-indent"),
         "error: bad/bad-indent.yaml:5:9: mapping values are not allowed here; check the indentation, or quote a "
         "value that contains ': '"),
    Case("broken-yaml-tab", spec("yaml-tab"),
         "error: bad/yaml-tab.yaml:4:1: found character '\\t' that cannot start any token; indent with spaces, "
         "not tabs"),
    Case("two-yaml-documents", spec("two-documents"),
         "error: bad/two-documents.yaml:6:1: a second YAML document starts here; a file must hold exactly one"),
    Case("yaml-complex-key", spec("yaml-complex-key"),
         "error: bad/yaml-complex-key.yaml:6:3: keys must be strings, got a list"),
    Case("yaml-non-string-key", spec("yaml-non-string-key"),
         "error: bad/yaml-non-string-key.yaml:7:7: roles[0].env: keys must be strings, got true; quote the key"),
    Case("yaml-set", spec("yaml-set"),
         "error: bad/yaml-set.yaml:7:7: roles[0].vllm.served_model_name: sets (!!set) are not supported; "
         "write a list"),
    Case("not-utf8", spec("not-utf8"),
         "error: bad/not-utf8.yaml: not UTF-8 text (invalid continuation byte)"),
    # ---- extends and role overrides ------------------------------------------------------
    Case("extends-cycle-prints-chain", spec("extends-cycle-a"),
         "error: bad/extends-cycle-b.yaml:2:1: extends: this closes an extends cycle: bad/extends-cycle-a.yaml -> "
         "bad/extends-cycle-b.yaml -> bad/extends-cycle-a.yaml. To fix this, remove this extends line or point it "
         "at a file outside the chain."),
    Case("extends-missing-file", spec("extends-missing"),
         "error: bad/extends-missing.yaml:2:1: extends: file not found: bad/no-such-base.yaml"),
    Case("extends-not-a-string", spec("extends-not-string"),
         "error: bad/extends-not-string.yaml:2:1: extends: expected the path of a YAML file (relative to this file, "
         "or absolute), got a list"),
    Case("roles-map-unknown-role", spec("roles-map-unknown"),
         "error: bad/roles-map-unknown.yaml:5:3: roles.decod: no base role named 'decod' (did you mean 'decode'?); "
         "base roles: prefill, decode"),
    Case("roles-map-not-a-mapping", spec("roles-map-not-mapping"),
         "error: bad/roles-map-not-mapping.yaml:5:3: roles.decode: a role override must be a mapping"),
    Case("roles-map-typo-points-at-override", spec("roles-map-deep-typo"),
         "error: bad/roles-map-deep-typo.yaml:6:11: roles[1].lws.szie: unknown key 'szie' (did you mean 'size'?)"),
    # ---- parallel layout -----------------------------------------------------------------
    Case("tp-not-dividing-gpus-per-pod", spec("tp-not-dividing-pod"),
         "error: bad/tp-not-dividing-pod.yaml:7:5: roles[0].parallelism: a pod has 4 GPUs, which is not a whole "
         "number of DP ranks of tp x pp = 3 GPUs"),
    Case("gpus-not-dividing-over-pods", spec("gpus-not-dividing-pods"),
         "error: bad/gpus-not-dividing-pods.yaml:7:5: roles[0].parallelism: tp x pp x dp = 3 x 1 x 1 = 3 GPUs do "
         "not divide evenly over lws.size = 2 pods"),
    Case("rank-not-whole-pods", spec("rank-not-whole-pods"),
         "error: bad/rank-not-whole-pods.yaml:7:5: roles[0].parallelism: one DP rank needs tp x pp = 6 GPUs, which "
         "is not a whole number of pods of 4 GPUs; a rank must fit one node or span whole nodes"),
    Case("gpus-per-pod-over-gpus-per-node", spec("gpus-over-node"),
         "error: bad/gpus-over-node.yaml:6:5: roles[0].parallelism: 16 GPUs per pod (tp x pp x dp / lws.size = "
         "16 / 1) exceed the accelerator's gpus_per_node = 8; raise lws.size to spread the role over more nodes"),
    Case("multi-node-deployment", spec("multinode-deployment"),
         "error: bad/multinode-deployment.yaml:6:5: roles[0].workload: a Deployment cannot span 2 nodes "
         "(lws.size); multi-node roles need a LeaderWorkerSet"),
    Case("resources-gpus-disagree", spec("resources-gpus-mismatch"),
         "error: bad/resources-gpus-mismatch.yaml:7:17: roles[0].resources.gpus: resources.gpus = 8 disagrees with "
         "the 4 GPUs per pod derived from tp x pp x dp / lws.size; remove resources.gpus or fix parallelism"),
    # ---- vLLM arguments Manifesto owns ---------------------------------------------------
    Case("pp-in-vllm", spec("pp-in-vllm"),
         "error: bad/pp-in-vllm.yaml:8:7: roles[0].vllm.pipeline_parallel_size: --pipeline-parallel-size "
         f"{OWNED} parallelism.pp"),
    Case("pp-in-computed-vllm", spec("pp-in-computed"),
         "error: bad/pp-in-computed.yaml:9:9: roles[0].computed.vllm.pipeline_parallel_size: "
         f"--pipeline-parallel-size {OWNED} parallelism.pp"),
    Case("pp-in-vllm-raw-args", spec("pp-in-raw-args"),
         "error: bad/pp-in-raw-args.yaml:8:9: roles[0].vllm_raw_args[1]: --pipeline-parallel-size "
         f"{OWNED} parallelism.pp"),
    Case("pp-short-flag-in-vllm-raw-args", spec("pp-short-in-raw-args"),
         "error: bad/pp-short-in-raw-args.yaml:6:21: roles[0].vllm_raw_args[0]: --pipeline-parallel-size "
         f"{OWNED} parallelism.pp"),
    Case("tp-in-spec-vllm", spec("tp-in-vllm"),
         f"error: bad/tp-in-vllm.yaml:5:3: vllm.tensor_parallel_size: --tensor-parallel-size {OWNED} parallelism.tp"),
    Case("revision-in-role-vllm", spec("revision-in-role-vllm"),
         f"error: bad/revision-in-role-vllm.yaml:7:7: roles[0].vllm.revision: --revision {OWNED} model.revision"),
    Case("revision-in-vllm-raw-args", spec("revision-in-raw-args"),
         f"error: bad/revision-in-raw-args.yaml:6:21: roles[0].vllm_raw_args[0]: --revision {OWNED} model.revision"),
    # ---- expressions ---------------------------------------------------------------------
    Case("unknown-var-in-expression", spec("unknown-var"),
         "error: bad/unknown-var.yaml:9:9: roles[0].computed.vllm.max_num_seqs: in expression "
         "'max_concurency * mtp_size': unknown name 'max_concurency' (did you mean 'max_concurrency'?); "
         "vars: max_concurrency, mtp_size"),
    Case("bad-expression-syntax", spec("bad-expression"),
         "error: bad/bad-expression.yaml:9:9: roles[0].computed.env.MAX_TOKENS: in expression 'max_concurrency *': "
         "expression ends too early"),
    Case("expression-division-by-zero", spec("expression-division-by-zero"),
         "error: bad/expression-division-by-zero.yaml:9:9: roles[0].computed.vllm.max_num_seqs: in expression "
         "'max_concurrency // shards': division by zero"),
    Case("expression-overflow", spec("expression-overflow"),
         "error: bad/expression-overflow.yaml:9:9: roles[0].computed.vllm.max_num_seqs: in expression 'big * 10': "
         "the result is not a finite number (.inf)"),
    # ---- accelerator, routing, features, images, fabric ----------------------------------
    Case("unknown-accelerator-lists-choices", spec("unknown-accelerator", GB200),
         "error: bad/unknown-accelerator.yaml:3:1: accelerator: 'a100' is not offered by cluster "
         "'example-gb200'; it offers: b200, gb200"),
    Case("unknown-accelerator-from-cli-flag", spec("routed-ok", STATELESS, "--accelerator", "h100"),
         "error: --accelerator 'h100' is not offered by cluster 'example-stateless-b200'; it offers: b200"),
    Case("near-accelerator-name-is-not-a-typo", spec("routed-ok", STATELESS, "--accelerator", "h200"),
         "error: --accelerator 'h200' is not offered by cluster 'example-stateless-b200'; it offers: b200"),
    Case("pd-without-nixl-connector", spec("pd-without-nixl"),
         "error: bad/pd-without-nixl.yaml:8:5: roles[0].kv_transfer_config: prefill/decode needs "
         "kv_transfer_config.kv_connector: NixlConnector on every role (found 'LMCacheConnectorV1'); "
         "the P/D sidecar speaks NIXLv2"),
    Case("pd-without-any-connector", spec("pd-without-connector"),
         "error: bad/pd-without-connector.yaml:6:5: roles[0]: feature 'prefill-decode' requires kv-connector "
         "(prefill/decode roles need kv_transfer_config with kv_connector: NixlConnector)"),
    Case("pd-topology-with-load-aware-routing", spec("pd-with-load-aware"),
         "error: bad/pd-with-load-aware.yaml:5:11: routing.kind: topology: pd needs routing.kind: pd "
         "(found 'load_aware'); prefill/decode implies llm-d"),
    Case("unknown-routing-target-role", spec("unknown-target-role"),
         "error: bad/unknown-target-role.yaml:4:29: routing.target_role: target_role 'decoder' is not a role "
         "(did you mean 'decode'?); roles: decode"),
    Case("unknown-fabric-profile", spec("unknown-fabric-profile"),
         "error: bad/unknown-fabric-profile.yaml:6:5: roles[0].fabric_profile: fabric profile 'standrd' is not "
         "defined by cluster 'example-stateless-b200' (did you mean 'standard'?); defined: standard"),
    Case("unknown-image-ref", spec("unknown-image-ref"),
         "error: bad/unknown-image-ref.yaml:5:3: model.image_ref: image_ref 'vllm.standrd' is not in the image "
         "catalog (did you mean 'vllm.standard'?); known: vllm.standard"),
    Case("vllm-env-not-absolute", spec("vllm-env-relative"),
         "error: bad/vllm-env-relative.yaml:5:3: runtime.vllm_env: 'vllm-envs/feature' must be an absolute path"),
    Case("vllm-env-outside-every-mount", spec("vllm-env-outside-mounts", GB200),
         "error: bad/vllm-env-outside-mounts.yaml:5:3: runtime.vllm_env: '/opt/vllm-envs/feature' is not under any "
         "persistent volume mount of the model pods (/mnt/shared, /mnt/local)"),
    Case("vllm-env-on-pod-local-jit-cache", spec("vllm-env-on-emptydir", GB200),
         "error: bad/vllm-env-on-emptydir.yaml:5:3: runtime.vllm_env: '/var/cache/manifesto-jit/vllm-envs/feature' "
         f"is on the pod-local emptyDir volume mounted at /var/cache/manifesto-jit, {EPHEMERAL}"),
    Case("vllm-env-not-absolute-from-cli-flag", spec("routed-ok", GB200, "--vllm-env", "vllm-envs/feature"),
         # refused at the edge by the option's grammar, before the spec is resolved
         "error: --vllm-env 'vllm-envs/feature' must be an absolute path (starting with '/')"),
    Case("vllm-env-on-emptydir-from-cli-flag", spec("routed-ok", GB200, "--vllm-env", "/var/cache/manifesto-jit/x"),
         "error: --vllm-env '/var/cache/manifesto-jit/x' is on the pod-local emptyDir volume mounted at "
         f"/var/cache/manifesto-jit, {EPHEMERAL}"),
    Case("log-root-placeholder-from-cli-flag", spec("routed-ok", GB200, "--log-root", "/logs/{usr}"),
         f"error: --log-root: unknown placeholder '{{usr}}' in '/logs/{{usr}}'; known: {PLACEHOLDERS}"),
    Case("cache-root-placeholder-from-cli-flag", spec("routed-ok", GB200, "--cache-root", "/cache/{usr}"),
         f"error: --cache-root: unknown placeholder '{{usr}}' in '/cache/{{usr}}'; known: {PLACEHOLDERS}"),
    # ---- cluster profiles ----------------------------------------------------------------
    Case("cluster-allocation-two-backends", cluster("cluster-two-allocations"),
         "error: bad/cluster-two-allocations.yaml:8:7: accelerators.profiles.b200.allocation: allocation must "
         "contain exactly one of extended_resource, dra or slurm (found extended_resource, dra)"),
    Case("cluster-unknown-key-below-named-profile", cluster("cluster-unknown-key"),
         "error: bad/cluster-unknown-key.yaml:7:7: accelerators.profiles.b200.gpus_per_nodes: unknown key "
         "'gpus_per_nodes' (did you mean 'gpus_per_node'?)"),
    Case("cluster-unknown-default-accelerator", cluster("cluster-unknown-default"),
         "error: bad/cluster-unknown-default.yaml:4:3: accelerators.default: 'h100' is not one of "
         "accelerators.profiles: b200"),
    Case("cluster-slurm-allocation-on-kubernetes", cluster("cluster-slurm-alloc-on-k8s"),
         "error: bad/cluster-slurm-alloc-on-k8s.yaml:8:7: accelerators.profiles.b200.allocation: allocation.slurm "
         "needs platform: slurm (this cluster is kubernetes); use extended_resource or dra"),
    Case("cluster-undefined-fabric-default", cluster("cluster-undefined-fabric-default"),
         "error: bad/cluster-undefined-fabric-default.yaml:11:3: fabric.default_profile: 'fast' is not defined "
         "under fabric.profiles; defined: standard"),
    Case("cluster-undefined-expert-parallel-fabric", cluster("cluster-undefined-ep-fabric"),
         "error: bad/cluster-undefined-ep-fabric.yaml:12:5: fabric.expert_parallel_profiles.decode: 'standrd' is "
         "not defined under fabric.profiles (did you mean 'standard'?); defined: standard"),
    Case("cluster-shared-claim-not-a-mapping", cluster("cluster-pvc-not-mapping"),
         "error: bad/cluster-pvc-not-mapping.yaml:12:5: storage.shared_volume.persistentVolumeClaim: expected a "
         "mapping, got 'demo-model-cache'; write persistentVolumeClaim: {claimName: demo-model-cache}"),
    Case("cluster-env-value-boolean", cluster("cluster-env-bool"),
         "error: bad/cluster-env-bool.yaml:12:5: fabric.default_env.NCCL_DEBUG_ENABLE: environment values must be "
         "strings; quote the value"),
    Case("cluster-unknown-placeholder-in-cache-root", cluster("cluster-unknown-placeholder", "bad/multinode-ok.yaml"),
         "error: bad/cluster-unknown-placeholder.yaml:11:3: paths.cache_root: unknown placeholder '{usr}' in "
         f"'/cache/{{usr}}/jit'; known: {PLACEHOLDERS}"),
    Case("cluster-unknown-placeholder-in-cache-root-single-node", cluster("cluster-unknown-placeholder"),
         "error: bad/cluster-unknown-placeholder.yaml:11:3: paths.cache_root: unknown placeholder '{usr}' in "
         f"'/cache/{{usr}}/jit'; known: {PLACEHOLDERS}"),
    Case("cluster-unknown-placeholder-in-log-root", cluster("cluster-log-root-placeholder", "bad/multinode-ok.yaml"),
         "error: bad/cluster-log-root-placeholder.yaml:11:3: paths.log_root: unknown placeholder '{usr}' in "
         f"'/logs/{{usr}}'; known: {PLACEHOLDERS}"),
    Case("cluster-computed-env-unknown-var", cluster("cluster-computed-env-unknown-var"),
         "error: bad/cluster-computed-env-unknown-var.yaml:15:9: fabric.profiles.standard.computed_env."
         "NVSHMEM_QP_DEPTH: in expression 'max_concurrency * 2 + 2': unknown name 'max_concurrency'; vars: (none)"),
    # ---- routing profiles ----------------------------------------------------------------
    Case("routing-undeclared-plugin", routing("routing-undeclared-plugin"),
         "error: bad/routing-undeclared-plugin.yaml:10:10: schedulingProfiles[0].plugins[0].pluginRef: "
         "'queue-scorr' is not a declared plugin (did you mean 'queue-scorer'?); declared: queue-scorer, "
         "max-score-picker"),
    Case("routing-duplicate-plugin", routing("routing-duplicate-plugin"),
         "error: bad/routing-duplicate-plugin.yaml:6:6: plugins[1].type: plugin 'queue-scorer' is declared twice "
         "(first as plugins[0]); give one of them a distinct name"),
    Case("routing-unknown-key", routing("routing-unknown-key"),
         "error: bad/routing-unknown-key.yaml:9:35: schedulingProfiles[0].plugins[0].weigth: unknown key 'weigth' "
         "(did you mean 'weight'?)"),
    Case("routing-wrong-kind", routing("routing-wrong-kind"),
         "error: bad/routing-wrong-kind.yaml:3:1: kind: expected EndpointPickerConfig, got 'InferencePool'"),
    # ---- catalog look-ups ----------------------------------------------------------------
    Case("routing-profile-not-found", spec("routed-ok", STATELESS, "--routing-profile", "no-such-profile"),
         "error: no routing profile 'no-such-profile': not a file, and not in the user or bundled catalog; "
         "known: kv-aware, wide-ep-lws-config"),
    Case("cluster-not-found", spec("routed-ok", "no-such-cluster"),
         "error: no cluster 'no-such-cluster': not a file, and not in the user or bundled catalog; known: "
         "example-gb200, example-gb200-lws, example-h200, example-slurm, example-stateless-b200"),
]

COMMON = ("--user", "u", "--namespace", "ns")


def test_corpus_is_big_enough_and_every_file_is_used():
    assert len(CASES) >= 30
    assert len({c.id for c in CASES}) == len(CASES)
    used = {a for c in CASES for a in c.argv if a.startswith("bad/")}
    used |= {f"bad/{n}" for n in ("extends-cycle-b.yaml", "base.yaml")}  # reached through extends
    used |= {f"bad/{n}" for n in EXTRA_FILES}
    on_disk = {f"bad/{p.name}" for p in BAD.iterdir()}
    assert on_disk - used == set(), "corpus files no case uses"
    assert {u for u in used if u.endswith(".yaml")} - on_disk == set(), "cases naming missing files"


@pytest.fixture
def in_data(monkeypatch):
    monkeypatch.chdir(DATA)


@pytest.mark.parametrize("command", [("explain",), ("config", "validate")], ids=["explain", "config-validate"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reports_exact_message(case, command, in_data):
    rc, out, err = cli_in_process(*command, *case.argv, *COMMON)
    assert "Traceback" not in err
    assert err == case.expected + "\n"
    assert (rc, out) == (1, "")


SUBPROCESS_SAMPLE = ("unknown-key-deep-in-role", "several-errors-in-file-order", "duplicate-yaml-key",
                     "extends-cycle-prints-chain", "unknown-accelerator-lists-choices")


@pytest.mark.integration
@pytest.mark.parametrize("case", [c for c in CASES if c.id in SUBPROCESS_SAMPLE], ids=SUBPROCESS_SAMPLE)
def test_subprocess_prints_the_same(case):
    proc = run_cli("explain", *case.argv, *COMMON, cwd=DATA)
    assert "Traceback" not in proc.stderr
    assert proc.stderr == case.expected + "\n"
    assert (proc.returncode, proc.stdout) == (1, "")


# ---- inputs that only need to load without a traceback ---------------------------------

# Files the cases above do not name: their tests below check behaviour, not a message.
EXTRA_FILES = ("yaml-merge-key.yaml", "yaml-omap.yaml", "delete-without-extends.yaml")


def _explain(*argv: str) -> SimpleNamespace:
    rc, out, err = cli_in_process("explain", *argv, *COMMON)
    return SimpleNamespace(returncode=rc, stdout=out, stderr=err)


def test_several_errors_each_line_is_prefixed(in_data):
    proc = _explain(*spec("several-errors"))
    (case,) = [c for c in CASES if c.id == "several-errors-in-file-order"]
    assert len(proc.stderr.splitlines()) == 3
    assert all(line.startswith("error: bad/several-errors.yaml:") for line in proc.stderr.splitlines())
    assert (proc.returncode, proc.stderr) == (1, case.expected + "\n")


def test_yaml_merge_key_no_traceback(in_data):
    proc = _explain(*spec("yaml-merge-key"))
    assert (proc.returncode, proc.stderr) == (0, "")


def test_yaml_omap_no_traceback(in_data):
    proc = _explain(*spec("yaml-omap"))
    assert (proc.returncode, proc.stderr) == (0, "")


def test_deeply_nested_yaml_no_traceback(in_data, tmp_path):
    deep = "[" * 400 + "]" * 400
    path = tmp_path / "deep.yaml"
    path.write_text(f"release: demo\nmodel: {{id: org/model}}\nroles:\n  - name: d\n    vllm: {{x: {deep}}}\n")
    proc = _explain(str(path), "--cluster", STATELESS)
    assert proc.returncode == 1
    # one error at the first list or mapping past the limit (issue 25: found before any parser recurses)
    assert scrub(proc.stderr, tmp_path) == ("error: <tmp>/deep.yaml:5:75: lists and mappings nest more than 64 deep "
                                            "here; the YAML nests too deeply to be read (a spec nests about 6)\n")


def test_deeply_nested_expression_no_traceback(in_data, tmp_path):
    expr = "(" * 2000 + "a" + ")" * 2000
    path = tmp_path / "deep-expr.yaml"
    path.write_text("release: demo\nmodel: {id: org/model}\nvars: {a: 1}\nroles:\n  - name: d\n"
                    f"    computed: {{vllm: {{max_num_seqs: '{expr}'}}}}\n")
    proc = _explain(str(path), "--cluster", STATELESS)
    assert proc.returncode == 1
    assert scrub(proc.stderr, tmp_path) == ("error: <tmp>/deep-expr.yaml:6:23: roles[0].computed.vllm.max_num_seqs: "
                                            "expression nests too deeply\n")


def test_delete_marker_never_reaches_vllm(in_data):
    proc = _explain(*spec("delete-without-extends"), "--output", "json")
    assert "Traceback" not in proc.stderr
    assert "$delete" not in proc.stdout
