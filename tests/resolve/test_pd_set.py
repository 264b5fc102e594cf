"""Prefill/decode as one DisaggregatedSet (LeaderWorkerSet 0.10): when a P/D spec renders as
one, what it holds, the rules against mixed pairs, and that the pair renders stay the pair."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kit import REPO_ROOT, cli_in_process, plan_of, require_shared, validate_manifests
from manifesto.errors import ResolveError
from manifesto.render.k8s import objects
from manifesto.resolve.pd_set import MAX_ROLES

GB200 = REPO_ROOT / "clusters" / "example-gb200.yaml"
LWS010 = REPO_ROOT / "clusters" / "example-gb200-lws.yaml"
SLURM = REPO_ROOT / "clusters" / "example-slurm.yaml"
K3 = REPO_ROOT / "models" / "kimi-k3" / "1P-1D-DP4-TP4.yaml"
DSV4 = REPO_ROOT / "models" / "deepseek-v4" / "1P-EP8-1D-EP8.yaml"
QWEN_PD = REPO_ROOT / "models" / "qwen" / "qwen3-0.6b-pd.yaml"

PD = {
    "release": "pdset", "topology": "pd",
    "model": {"id": "Qwen/Qwen3-0.6B", "label": "Qwen3-0.6B", "image_ref": "vllm.standard"},
    "routing": {"kind": "pd", "target_role": "decode"}, "runtime": {"sidecars": []},
    "roles": [{"name": n, "workload": "leaderworkerset", "parallelism": {"tp": 1, "dp": False, "ep": False},
               "kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
               "vllm": {"max_model_len": 8192}} for n in ("prefill", "decode")],
}


def _spec(tmp_path: Path, data: dict, name: str = "spec") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _cluster(tmp_path: Path, version: str | None) -> Path:
    text = LWS010.read_text().replace('  version: 0.10.0\n', f'  version: "{version}"\n' if version else "")
    if version is None:
        text = text.replace("leaderworkerset:\n", "")
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return path


def _edit(change) -> dict:
    data = copy.deepcopy(PD)
    change(data)
    return data


def _role(data: dict, name: str) -> dict:
    return next(r for r in data["roles"] if r["name"] == name)


def _kinds(plan) -> list[str]:
    return [o["kind"] for o in objects(plan)]


# -- where the choice lives --------------------------------------------------------------

def test_a_cluster_with_lws_010_renders_lws_roles_as_one_set():
    plan, _, _ = plan_of(K3, LWS010)
    assert plan.pd_set == plan.instance
    kinds = _kinds(plan)
    assert kinds.count("DisaggregatedSet") == 1 and "LeaderWorkerSet" not in kinds


@pytest.mark.parametrize("version,expected", [(None, None), ("0.9.0", None), ("v0.10", "pdset"), ("1.0.0", "pdset")])
def test_auto_follows_the_declared_release(tmp_path, version, expected):
    plan, _, _ = plan_of(_spec(tmp_path, PD), _cluster(tmp_path, version))
    assert plan.pd_set == expected


def test_the_spec_can_keep_the_pair(tmp_path):
    plan, _, _ = plan_of(_spec(tmp_path, PD | {"pd_workload": "lws-pair"}), LWS010)
    assert plan.pd_set is None and _kinds(plan).count("LeaderWorkerSet") == 2


def test_deployment_based_pd_stays_deployments():
    plan, _, _ = plan_of(QWEN_PD, LWS010)
    assert plan.pd_set is None
    assert [o["metadata"]["name"] for o in objects(plan) if o["kind"] == "Deployment"][:2] == [
        r.workload_name for r in plan.roles]


def test_asking_for_a_set_on_an_older_cluster_is_one_error(tmp_path):
    spec = _spec(tmp_path, PD | {"pd_workload": "disaggregatedset"})
    with pytest.raises(ResolveError) as err:
        plan_of(spec, _cluster(tmp_path, "0.9.1"))
    assert err.value.path == "pd_workload"
    assert "needs LeaderWorkerSet 0.10 or newer" in err.value.message and "0.9.1" in err.value.message
    with pytest.raises(ResolveError, match="declares no leaderworkerset.version"):
        plan_of(spec, GB200)


def test_a_set_of_deployment_roles_is_refused(tmp_path):
    data = _edit(lambda d: _role(d, "decode").update(workload="deployment"))
    with pytest.raises(ResolveError) as err:
        plan_of(_spec(tmp_path, data | {"pd_workload": "disaggregatedset"}), LWS010)
    assert err.value.path == "roles[1].workload" and "renders as a Deployment" in err.value.message


def test_an_aggregated_spec_cannot_ask_for_a_set(tmp_path):
    data = _edit(lambda d: d.update(topology="aggregated", routing={"kind": "disabled"}, roles=[_role(d, "decode")]))
    with pytest.raises(ResolveError, match="needs topology: pd"):
        plan_of(_spec(tmp_path, data | {"pd_workload": "disaggregatedset"}), LWS010)


def test_slurm_ignores_the_choice(tmp_path):
    # Without the roles' `workload: leaderworkerset`, a Kubernetes controller Slurm refuses.
    roles = [{k: v for k, v in r.items() if k != "workload"} for r in PD["roles"]]
    plan, _, _ = plan_of(_spec(tmp_path, PD | {"pd_workload": "disaggregatedset", "roles": roles}), SLURM)
    assert plan.pd_set is None


def test_an_unquoted_version_is_one_clear_error(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(LWS010.read_text().replace("version: 0.10.0", "version: 0.10"))
    r = cli_in_process("render", "manifest", str(K3), "--cluster", str(path), "--user", "u", "--namespace", "ns")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (f"error: {path}:77:3: leaderworkerset.version: 0.1 is a number; quote the release, "
                        'e.g. "0.10.0" (YAML reads 0.10 as 0.1)\n')


# -- what the set holds --------------------------------------------------------------------

@pytest.mark.parametrize("model", [K3, DSV4], ids=["kimi-k3", "deepseek-v4"])
def test_each_role_is_the_pairs_leaderworkerset(model):
    """Sizes, parallelism, resources, NIXL settings, probes, claims: each role of the set is
    exactly the LeaderWorkerSet the pair would have had, and everything else is unchanged."""
    pair = objects(plan_of(model, GB200)[0])
    dset_plan = plan_of(model, LWS010)[0]
    dset = objects(dset_plan)
    lws = {o["metadata"]["labels"]["manifesto.llm-d.ai/role"]: o for o in pair if o["kind"] == "LeaderWorkerSet"}
    (ds,) = [o for o in dset if o["kind"] == "DisaggregatedSet"]
    assert [r["name"] for r in ds["spec"]["roles"]] == [r.name for r in dset_plan.roles]
    for role in ds["spec"]["roles"]:
        # All but the rollout: the set's own controller plans it (docs/decisions.md).
        assert {**role["spec"], "rolloutStrategy": None} == {**lws[role["name"]]["spec"], "rolloutStrategy": None}
        assert role["spec"]["rolloutStrategy"] == {"type": "RollingUpdate", "rollingUpdateConfiguration": {
            "maxSurge": 0, "maxUnavailable": 1}}
        assert role["metadata"] == {"labels": lws[role["name"]]["metadata"]["labels"]}
    assert ds["metadata"]["name"] == dset_plan.instance and "slices" not in ds["spec"]
    # Nothing else differs but the cluster's name where it is written.
    rest = lambda objs: [o for o in objs if o["kind"] not in ("LeaderWorkerSet", "DisaggregatedSet")]  # noqa: E731
    differing = [(a["kind"], a["metadata"]["name"]) for a, b in zip(rest(pair), rest(dset)) if a != b]
    assert all(kind in ("ConfigMap", "Role", "Deployment") and name.endswith("idle-shutdown")
               for kind, name in differing), differing


def test_both_roles_carry_the_nixl_connector_and_one_image():
    (ds,) = [o for o in objects(plan_of(K3, LWS010)[0]) if o["kind"] == "DisaggregatedSet"]
    images, configs = set(), []
    for role in ds["spec"]["roles"]:
        lwt = role["spec"]["leaderWorkerTemplate"]
        for tpl in (lwt.get("leaderTemplate"), lwt["workerTemplate"]):
            if tpl is None:
                continue
            (vllm,) = [c for c in tpl["spec"]["containers"] if c["name"] == "vllm"]
            images.add(vllm["image"])
            script = vllm["command"][-1]
            assert "--kv-transfer-config" in script
            configs.append(script[script.index("--kv-transfer-config"):].split("\n", 1)[0])
    assert len(images) == 1 and len(configs) >= 2
    assert all('"kv_connector":"NixlConnector"' in c for c in configs), configs


def test_kueue_labels_go_on_each_role_and_the_set(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(LWS010.read_text().replace("# kueue:\n#   local_queue: demo-gpu-queue",
                                              "kueue:\n  local_queue: gpu-queue"))
    (ds,) = [o for o in objects(plan_of(K3, path)[0]) if o["kind"] == "DisaggregatedSet"]
    queue = "kueue.x-k8s.io/queue-name"
    assert ds["metadata"]["labels"][queue] == "gpu-queue"
    for role in ds["spec"]["roles"]:
        assert role["metadata"]["labels"][queue] == "gpu-queue"
        lwt = role["spec"]["leaderWorkerTemplate"]
        assert all(queue not in (t["metadata"].get("labels") or {}) for t in lwt.values() if isinstance(t, dict))


@pytest.mark.integration
def test_the_rendered_set_validates_against_the_kit():
    r = cli_in_process("render", "manifest", str(K3), "--cluster", str(LWS010), "--user", "u", "--namespace", "ns")
    assert r.returncode == 0, r.stderr
    validate_manifests(r.stdout)


# -- rules against mixed pairs ---------------------------------------------------------------

@pytest.mark.parametrize("prefill,decode,ok", [(1, 2, True), (4, 2, True), (1, 4, True), (2, 3, False),
                                               (4, 6, False), (3, 2, False)])
def test_the_nixl_tp_ratio_rule(tmp_path, prefill, decode, ok):
    """vLLM 0.33.0 (kv_connector/utils.py, TransferTopology.tp_ratio): the larger TP size must be a
    multiple of the smaller. Checked for every P/D spec, the pair as well as the set."""
    def change(d):
        _role(d, "prefill")["parallelism"]["tp"] = prefill
        _role(d, "decode")["parallelism"]["tp"] = decode
    spec = _spec(tmp_path, _edit(change))
    for cluster in (GB200, LWS010):
        if ok:
            plan_of(spec, cluster)
            continue
        with pytest.raises(ResolveError) as err:
            plan_of(spec, cluster)
        small, large = sorted((prefill, decode))
        assert err.value.path == "roles[1].parallelism.tp"
        assert f"({large} is not a multiple of {small})" in err.value.message
        assert "NIXL connector" in err.value.message


def test_a_mixed_tp_pair_is_one_cli_error_at_its_field(tmp_path):
    def change(d):
        _role(d, "prefill")["parallelism"]["tp"] = 2
        _role(d, "decode")["parallelism"]["tp"] = 3
    spec = _spec(tmp_path, _edit(change))
    r = cli_in_process("render", "manifest", str(spec), "--cluster", str(LWS010), "--user", "u", "--namespace", "ns")
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: {spec}:") and r.stderr.count("\n") == 1
    assert "roles[1].parallelism.tp" in r.stderr


@pytest.mark.parametrize("key,value", [("kv_connector_extra_config", {"backends": ["UCX"]}),
                                       ("kv_connector_module_path", "my.connector")])
def test_a_set_refuses_different_connector_settings(tmp_path, key, value):
    spec = _spec(tmp_path, _edit(lambda d: _role(d, "decode")["kv_transfer_config"].update({key: value})))
    with pytest.raises(ResolveError) as err:
        plan_of(spec, LWS010)
    assert err.value.path == f"roles[1].kv_transfer_config.{key}"
    assert "same KV connector settings" in err.value.message
    plan_of(spec, GB200)  # the pair keeps what it always accepted


def test_a_set_keeps_per_role_nixl_settings(tmp_path):
    def change(d):
        _role(d, "prefill")["kv_transfer_config"]["kv_buffer_device"] = "cuda"
        _role(d, "decode")["kv_transfer_config"]["kv_load_failure_policy"] = "fail"
        _role(d, "decode")["env"] = {"UCX_TLS": "cuda_ipc,rc"}
    plan, _, _ = plan_of(_spec(tmp_path, _edit(change)), LWS010)
    assert plan.pd_set == "pdset"


def test_a_set_with_a_name_too_long_for_its_children_is_refused(tmp_path):
    # The child <release>-0-<revision>-prefill is the name of its leaders' StatefulSet, whose
    # pods are labelled controller-revision-hash=<StatefulSet>-<up to 10 characters>:
    # 33 + 12 + 7 + 1 + 10 = 63 is the limit. (The names alone, <child>-prv, allowed 40: the
    # StatefulSet controller then refused every pod; tests/cluster/test_controller_limits.py.)
    release = "a" * 33
    plan_of(_spec(tmp_path, PD | {"release": release}), LWS010)
    with pytest.raises(ResolveError) as err:
        plan_of(_spec(tmp_path, PD | {"release": release + "b"}), LWS010)
    assert err.value.path == "release"
    assert "The release may have at most 33 characters (it has 34)" in err.value.message
    assert f"LeaderWorkerSet {release}b-0-<revision>-prefill (53 characters)" in err.value.message


def test_a_set_of_more_than_ten_roles_is_refused_at_load(tmp_path):
    # api/disaggregatedset/v1/disaggregatedset_types.go:109 (v0.10.0): MaxItems=10 on spec.roles;
    # the pinned CRD says maxItems: 10. Before this rule, 11 roles rendered a set the API refuses.
    def roles(n):
        def change(d):
            first, decode = d["roles"]
            d["roles"] = [dict(copy.deepcopy(first), name=f"prefill{i}") for i in range(n - 1)] + [decode]
        return change

    plan, _, _ = plan_of(_spec(tmp_path, _edit(roles(10))), LWS010)
    assert plan.pd_set == "pdset" and len(plan.roles) == 10
    crd = yaml.safe_load(require_shared("k8s-schemas/crds/disaggregatedset.x-k8s.io_disaggregatedsets.yaml")
                         .read_text())
    roles_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["roles"]
    assert roles_schema["maxItems"] == MAX_ROLES == 10
    with pytest.raises(ResolveError) as err:
        plan_of(_spec(tmp_path, _edit(roles(11))), LWS010)
    assert err.value.path == "roles[10]"
    assert "at most 10 roles" in err.value.message and "pd_workload: lws-pair" in err.value.message
    # The pair has no such limit.
    plan, _, _ = plan_of(_spec(tmp_path, _edit(roles(11)) | {"pd_workload": "lws-pair"}), LWS010)
    assert plan.pd_set is None and len(plan.roles) == 11


# -- the pair stays the pair ---------------------------------------------------------------------

def test_the_bundled_pair_artifacts_are_unchanged():
    """out/example-gb200 holds the LWS pairs; rendering them again gives the same bytes."""
    for model in (K3, DSV4):
        rel = model.relative_to(REPO_ROOT / "models").with_suffix(".yaml")
        r = cli_in_process("render", "manifest", str(model), "--cluster", str(GB200), "--user", "example-user",
                           "--namespace", "example-ns")
        assert r.returncode == 0, r.stderr
        committed = (REPO_ROOT / "out" / "example-gb200" / rel).read_text()
        body = lambda text: text[text.index("\n---\n"):]  # noqa: E731 (the header names the command's paths)
        assert body(r.stdout) == body(committed)


def test_explain_says_the_roles_are_one_set():
    r = cli_in_process("explain", str(K3), "--cluster", str(LWS010), "--user", "u", "--namespace", "ns")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "topology        pd as one DisaggregatedSet kimi-k3-1p-1d-dp4tp4 (both roles roll out together)" in lines
    assert "role decode: a LeaderWorkerSet of DisaggregatedSet kimi-k3-1p-1d-dp4tp4 (its controller names it)" in lines
    pair = cli_in_process("explain", str(K3), "--cluster", str(GB200), "--user", "u", "--namespace", "ns")
    assert "role decode: LeaderWorkerSet kimi-k3-1p-1d-dp4tp4-decode" in pair.stdout.splitlines()


@pytest.mark.integration
def test_every_bundled_set_validates_against_the_kit():
    """out/example-gb200-lws: every artifact that holds a DisaggregatedSet, in one kit call."""
    texts = [p.read_text() for p in sorted((REPO_ROOT / "out" / "example-gb200-lws").rglob("*.yaml"))]
    sets = [t for t in texts if "\nkind: DisaggregatedSet\n" in t]
    assert len(sets) >= 6, len(sets)
    validate_manifests("".join(sets))


@pytest.mark.parametrize("version", ["latest", "0", "0.10.0-rc1", "v"])
def test_a_version_that_is_no_release_is_refused(tmp_path, version):
    path = tmp_path / "c.yaml"
    path.write_text(LWS010.read_text().replace("version: 0.10.0", f'version: "{version}"'))
    r = cli_in_process("config", "validate", str(K3), "--cluster", str(path), "--user", "u", "--namespace", "ns")
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert f"{path}:77:" in r.stderr and "leaderworkerset.version" in r.stderr
    assert "is not a release version: write MAJOR.MINOR or MAJOR.MINOR.PATCH" in r.stderr


# -- the routing sidecar goes where HTTP is served -------------------------------------------

@pytest.mark.parametrize("cluster", [LWS010, GB200], ids=["disaggregatedset", "lws-pair"])
def test_the_routing_sidecar_is_on_the_serving_pod_of_a_multi_node_decode_only(tmp_path, cluster):
    # Decode with TP 2 over 2 pods: pod 0 serves HTTP, pod 1 runs a headless TP rank. LWS v0.10.0
    # runs the leader template on pod 0 (leaderworkerset_controller.go:777-781) and the worker
    # template on the others (pod_controller.go:391, 438-444). The sidecar used to be in the
    # one template both used, so the headless worker ran one too.
    def change(d):
        decode = _role(d, "decode")
        decode["parallelism"]["tp"] = 2
        decode["lws"] = {"size": 2}
    plan, _, _ = plan_of(_spec(tmp_path, _edit(change)), cluster)
    (decode,) = [r for r in plan.roles if r.name == "decode"]
    assert decode.layout.serving_nodes == (0,) and decode.layout.nodes == 2 and decode.proxy
    objs = objects(plan)
    if plan.pd_set is not None:
        (dset,) = [o for o in objs if o["kind"] == "DisaggregatedSet"]
        lwt = next(r for r in dset["spec"]["roles"] if r["name"] == "decode")["spec"]["leaderWorkerTemplate"]
    else:
        lwt = next(o for o in objs if o["kind"] == "LeaderWorkerSet"
                   and o["metadata"]["name"].endswith("-decode"))["spec"]["leaderWorkerTemplate"]
    inits = lambda t: [c["name"] for c in t["spec"].get("initContainers", [])]  # noqa: E731
    assert inits(lwt["leaderTemplate"]) == ["routing-proxy"]
    assert inits(lwt["workerTemplate"]) == []
    # Every pod of a role whose pods all serve (external DP, a rank per pod) keeps its sidecar.
    plan, _, _ = plan_of(K3, cluster)
    objs = objects(plan)
    lwts = ([r["spec"]["leaderWorkerTemplate"] for r in next(o for o in objs if o["kind"] == "DisaggregatedSet")
             ["spec"]["roles"] if r["name"] == "decode"] if plan.pd_set is not None else
            [o["spec"]["leaderWorkerTemplate"] for o in objs if o["kind"] == "LeaderWorkerSet"
             and o["metadata"]["name"].endswith("-decode")])
    assert [inits(t["workerTemplate"]) for t in lwts] == [["routing-proxy"]] and "leaderTemplate" not in lwts[0]
