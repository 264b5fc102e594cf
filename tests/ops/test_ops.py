"""Kubernetes workflow commands against a scripted fake kubectl (tests/fake_kubectl.py).

The fake is put first on PATH; it keeps object state in a JSON file and records every
argv and stdin, so these tests assert exact kubectl call sequences without a cluster.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifesto.cli import main

from kit import plan_of
from kubefake import FAKE, TOKEN, FakeCluster, install

ROOT = Path(__file__).resolve().parents[2]
GB200 = str(ROOT / "clusters/example-gb200.yaml")
QWEN = str(ROOT / "models/qwen/qwen3-0.6b.yaml")
AGG = str(ROOT / "models/qwen/aggregated.yaml")
DSV4 = str(ROOT / "models/deepseek-v4/1P-EP8-1D-EP8.yaml")
SEL = "app.kubernetes.io/managed-by=manifesto"
ALL_TYPES = ["gateways.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io",
             "destinationrules.networking.istio.io",
             "inferencepools.inference.networking.k8s.io", "disaggregatedsets.disaggregatedset.x-k8s.io",
             "leaderworkersets.leaderworkerset.x-k8s.io",
             "deployments.apps", "jobs.batch", "services", "configmaps", "resourceclaimtemplates.resource.k8s.io",
             "rolebindings.rbac.authorization.k8s.io", "roles.rbac.authorization.k8s.io", "serviceaccounts", "pods"]


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


def _cluster(tmp_path: Path, name: str, extra: str = "", dra: bool = False) -> str:
    text = Path(GB200).read_text().replace("name: example-gb200", f"name: {name}")
    if dra:
        text = text.replace("        extended_resource:\n          resource_name: nvidia.com/gpu\n      presence_label: "
                            "nvidia.com/gpu.present\n      gpu_arch: gb200",
                            "        dra:\n          device_class_name: gpu.nvidia.com\n      presence_label: "
                            "nvidia.com/gpu.present\n      gpu_arch: gb200", 1)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text + extra)
    return str(path)


def _gateway_spec(tmp_path: Path) -> str:
    path = tmp_path / "aggregated-gateway.yaml"
    path.write_text(Path(AGG).read_text().replace("routing: {kind: load_aware, target_role: decode}",
                                                  "routing: {kind: load_aware, target_role: decode, frontend: gateway}"))
    return str(path)


def _deploy(fake: FakeCluster, spec: str, cluster: str = GB200, *extra: str) -> tuple[int, str, str]:
    return fake.run("deploy", spec, "--cluster", cluster, "--user", "u", "--namespace", "ns", *extra)


def _get(kind: str, instance: str) -> list[str]:
    return ["-n", "ns", "get", kind, "-l", f"{SEL},app.kubernetes.io/instance={instance}", "-o", "json"]


APPLY_STDIN = ["-n", "ns", "apply", "-f", "-"]


def _no_token_leaks(fake: FakeCluster, *texts: str) -> None:
    calls = fake.calls()
    assert all(TOKEN not in " ".join(c["argv"]) for c in calls)
    secret_calls = [c for c in calls if c["stdin"] and TOKEN in c["stdin"]]
    assert len(secret_calls) == 1 and json.loads(secret_calls[0]["stdin"])["metadata"]["name"] == "hf-secret"
    assert all(TOKEN not in t for t in texts)


# -- deploy -----------------------------------------------------------------------------

@pytest.mark.integration
def test_deploy_single_deployment_exact_argv(fake):
    rc, out, err = _deploy(fake, QWEN)
    assert rc == 0, err
    assert sorted(a for a in fake.argvs() if "--ignore-not-found" in a) == [  # nothing of someone else's
        ["-n", "ns", "get", kind, *names, "--ignore-not-found", "-o", "json"] for kind, *names in [
            ("configmaps", "qwen3-0-6b-idle-shutdown"),
            ("deployments.apps", "qwen3-0-6b-decode", "qwen3-0-6b-idle-shutdown"),
            ("rolebindings.rbac.authorization.k8s.io", "qwen3-0-6b-idle-shutdown"),
            ("roles.rbac.authorization.k8s.io", "qwen3-0-6b-idle-shutdown"),
            ("serviceaccounts", "qwen3-0-6b-idle-shutdown"), ("services", "qwen3-0-6b-decode-http")]]
    argvs = fake.argvs(owner_reads=False)
    assert argvs[0] == APPLY_STDIN  # hf-secret, from stdin
    assert sorted(map(tuple, argvs[1:4])) == sorted(map(tuple, [
        _get("deployments.apps", "qwen3-0-6b"), _get("leaderworkersets.leaderworkerset.x-k8s.io", "qwen3-0-6b"),
        _get("disaggregatedsets.disaggregatedset.x-k8s.io", "qwen3-0-6b")]))
    assert argvs[4] == APPLY_STDIN  # the artifact, from stdin
    assert len(argvs) == 5  # no routing layer: nothing to prune, no API preflight for Deployments
    secret = json.loads(next(c["stdin"] for c in fake.calls() if "apply" in c["argv"]))
    assert secret["kind"] == "Secret" and secret["stringData"] == {"HF_TOKEN": TOKEN}
    assert secret["metadata"]["namespace"] == "ns"
    assert fake.objects("Deployment") == ["qwen3-0-6b-decode", "qwen3-0-6b-idle-shutdown"]
    _no_token_leaks(fake, out, err)


@pytest.mark.integration
def test_deploy_with_routing_prunes_nothing_when_frontend_unchanged(fake):
    assert _deploy(fake, AGG)[0] == 0
    argvs = fake.argvs(owner_reads=False)
    assert argvs[4] == APPLY_STDIN
    assert sorted(map(tuple, argvs[5:])) == sorted(map(tuple, [
        _get("configmaps", "qwen3-30b"), _get("gateways.gateway.networking.k8s.io", "qwen3-30b"),
        _get("httproutes.gateway.networking.k8s.io", "qwen3-30b"),
        _get("destinationrules.networking.istio.io", "qwen3-30b")]))
    assert "InferencePool" in {o["kind"] for o in fake.state["objects"]}


@pytest.mark.integration
def test_frontend_change_prunes_the_other_frontend(fake, tmp_path):
    assert _deploy(fake, _gateway_spec(tmp_path))[0] == 0
    from manifesto.resolve import names

    assert fake.objects("Gateway") == [names.gateway("qwen3-30b")]
    rules = [names.epp_destination_rule("qwen3-30b"), names.pool_destination_rule("qwen3-30b")]
    assert fake.objects("DestinationRule") == rules
    gw_cms = set(fake.objects("ConfigMap"))
    fake.reset_log()
    rc, out, err = _deploy(fake, AGG)  # back to the standalone frontend
    assert rc == 0, err
    deletes = [a for a in fake.argvs() if "delete" in a]
    assert deletes == [["-n", "ns", "delete", "--ignore-not-found",
                        f"configmaps/{names.gateway_options('qwen3-30b')}",
                        f"gateways.gateway.networking.k8s.io/{names.gateway('qwen3-30b')}",
                        f"httproutes.gateway.networking.k8s.io/{names.route('qwen3-30b')}",
                        *(f"destinationrules.networking.istio.io/{r}" for r in rules)]]
    assert fake.argvs().index(deletes[0]) > fake.argvs().index(APPLY_STDIN, 1)  # prune after apply
    assert fake.objects("Gateway") == [] and fake.objects("HTTPRoute") == [] and fake.objects("DestinationRule") == []
    assert names.envoy_config("qwen3-30b") in fake.objects("ConfigMap")
    assert names.gateway_options("qwen3-30b") in gw_cms
    fake.reset_log()
    assert _deploy(fake, _gateway_spec(tmp_path))[0] == 0  # and forward again
    assert [a for a in fake.argvs() if "delete" in a] == [
        ["-n", "ns", "delete", "--ignore-not-found", f"configmaps/{names.envoy_config('qwen3-30b')}"]]


@pytest.mark.integration
def test_deploy_lws_checks_api_first(fake):
    rc, _, err = _deploy(fake, DSV4)
    assert rc == 0, err
    assert fake.argvs()[0] == ["api-versions"]
    assert fake.objects("LeaderWorkerSet") == ["dsv4-decode-ep8", "dsv4-prefill-ep8"]


@pytest.mark.integration
def test_missing_lws_api_fails_before_any_mutation(fake):
    fake.configure(missing_apis=["leaderworkerset.x-k8s.io"])
    rc, _, err = _deploy(fake, DSV4)
    assert rc == 1
    assert err == ("error: the cluster does not serve leaderworkerset.x-k8s.io/v1: the plan has LeaderWorkerSet roles; "
                   "install LeaderWorkerSet\n")
    assert fake.argvs() == [["api-versions"]]
    # A Deployment-only plan never asks for the LWS API.
    fake.reset_log()
    assert _deploy(fake, QWEN)[0] == 0
    assert ["api-versions"] not in fake.argvs()


@pytest.mark.integration
def test_kind_transition_deletes_obsolete_controller_first(fake):
    labels = {"app.kubernetes.io/managed-by": "manifesto", "app.kubernetes.io/instance": "dsv4-1p-ep8-1d-ep8"}
    fake.seed({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "dsv4-decode-ep8", "namespace": "ns", "labels": labels}})
    rc, _, err = _deploy(fake, DSV4)
    assert rc == 0, err
    argvs = fake.argvs()
    delete = ["-n", "ns", "delete", "--ignore-not-found", "--wait=true", "deployments.apps/dsv4-decode-ep8"]
    assert delete in argvs
    assert argvs.index(delete) < len(argvs) - 1 - argvs[::-1].index(APPLY_STDIN)
    assert "from Deployment to LeaderWorkerSet" in err
    assert fake.objects("Deployment") == ["dsv4-1p-ep8-1d-ep8-idle-shutdown", "dsv4-1p-ep8-1d-ep8-infpool-epp"]


# -- Kueue and DRA preconditions ----------------------------------------------------------

def _queues(lq_active: str = "True", cq_active: str = "True", covered=("cpu", "memory", "ephemeral-storage",
                                                                      "nvidia.com/gpu")) -> list[dict]:
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"name": "q", "namespace": "ns"}, "spec": {"clusterQueue": "cq"},
         "status": {"conditions": [{"type": "Active", "status": lq_active, "reason": "ClusterQueueIsInactive"}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"resourceGroups": [{"coveredResources": list(covered)}]},
         "status": {"conditions": [{"type": "Active", "status": cq_active, "reason": "Stopped"}]}},
    ]


@pytest.mark.integration
def test_kueue_verified_and_requests_printed(fake, tmp_path):
    cluster = _cluster(tmp_path, "kueue-test", "\nkueue:\n  local_queue: q\n")
    fake.seed(*_queues())
    rc, out, err = _deploy(fake, QWEN, cluster)
    assert rc == 0, err
    argvs = fake.argvs(owner_reads=False)
    assert argvs[:4] == [["api-versions"],
                         ["-n", "ns", "get", "localqueues.kueue.x-k8s.io", "q", "-o", "json"],
                         ["get", "clusterqueues.kueue.x-k8s.io", "cq", "-o", "json"],
                         APPLY_STDIN]
    assert "kueue q: Deployment/qwen3-0-6b-decode template container vllm: " in out
    assert "nvidia.com/gpu=1" in out


@pytest.mark.integration
def test_kueue_inactive_local_queue(fake, tmp_path):
    cluster = _cluster(tmp_path, "kueue-test", "\nkueue:\n  local_queue: q\n")
    fake.seed(*_queues(lq_active="False"))
    rc, _, err = _deploy(fake, QWEN, cluster)
    assert rc == 1
    assert err.strip() == "error: Kueue LocalQueue q in namespace ns is not Active (ClusterQueueIsInactive)"
    assert all("apply" not in a for a in fake.argvs())


@pytest.mark.integration
def test_kueue_inactive_cluster_queue_uncovered_and_missing(fake, tmp_path):
    cluster = _cluster(tmp_path, "kueue-test", "\nkueue:\n  local_queue: q\n")
    fake.seed(*_queues(cq_active="False"))
    rc, _, err = _deploy(fake, QWEN, cluster)
    assert (rc, err) == (1, "error: Kueue ClusterQueue cq (of LocalQueue q) is not Active (Stopped)\n")
    (fake.dir / "state.json").unlink()
    fake.seed(*_queues(covered=("cpu", "memory", "nvidia.com/gpu")))
    rc, _, err = _deploy(fake, QWEN, cluster)
    assert (rc, err) == (1, "error: Kueue ClusterQueue cq does not cover requested resource(s) ephemeral-storage; "
                            "add them to its coveredResources or drop the requests\n")
    (fake.dir / "state.json").unlink()
    rc, _, err = _deploy(fake, QWEN, cluster)
    assert (rc, err) == (1, "error: Kueue LocalQueue q does not exist in namespace ns\n")
    fake.configure(missing_apis=["kueue.x-k8s.io"])
    rc, _, err = _deploy(fake, QWEN, cluster)
    assert (rc, err) == (1, "error: the cluster does not serve kueue.x-k8s.io: the cluster profile selects Kueue "
                            "LocalQueue q; install Kueue\n")


@pytest.mark.integration
def test_lws_queue_change_recreates_it(fake, tmp_path):
    assert _deploy(fake, DSV4)[0] == 0
    cluster = _cluster(tmp_path, "kueue-test", "\nkueue:\n  local_queue: q\n")
    fake.seed(*_queues())
    fake.reset_log()
    rc, _, err = _deploy(fake, DSV4, cluster)
    assert rc == 0, err
    deletes = sorted(a[-1] for a in fake.argvs() if "delete" in a)
    assert deletes == ["leaderworkersets.leaderworkerset.x-k8s.io/dsv4-decode-ep8",
                       "leaderworkersets.leaderworkerset.x-k8s.io/dsv4-prefill-ep8"]
    assert "changes Kueue queue (none) -> q" in err
    fake.reset_log()
    assert _deploy(fake, DSV4, cluster)[0] == 0  # unchanged queue: no recreate
    assert not [a for a in fake.argvs() if "delete" in a]


@pytest.mark.integration
def test_dra_preconditions(fake, tmp_path):
    cluster = _cluster(tmp_path, "dra-test", dra=True)
    rc, _, err = _deploy(fake, DSV4, cluster)
    assert rc == 1 and err.strip() == "error: DRA DeviceClass gpu.nvidia.com does not exist"
    assert fake.argvs() == [["api-versions"], ["get", "deviceclasses.resource.k8s.io", "gpu.nvidia.com", "-o", "json"]]
    fake.seed({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"}})
    assert _deploy(fake, DSV4, cluster)[0] == 0
    assert len(fake.objects("ResourceClaimTemplate")) == 2
    fake.configure(missing_apis=["resource.k8s.io"])
    rc, _, err = _deploy(fake, DSV4, cluster)
    assert (rc, err) == (1, "error: the cluster does not serve resource.k8s.io/v1: the accelerator allocates GPUs "
                            "through DRA; the cluster must serve resource.k8s.io/v1\n")


def test_deploy_needs_hf_token(fake, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    rc, _, err = _deploy(fake, QWEN)
    assert (rc, err) == (1, "error: HF_TOKEN is not set; set it in the environment or .env so hf-secret can be "
                            "created in namespace ns\n")
    assert fake.argvs() == []


def test_slurm_cluster_is_refused(fake):
    # `deploy SPEC` submits on Slurm (tests/cli/test_slurm_cli.py); the Kubernetes-only commands refuse.
    rc, _, err = fake.run("deploy", "routing", AGG, "--cluster", str(ROOT / "clusters/example-slurm.yaml"),
                          "--user", "u", "--namespace", "ns")
    assert (rc, err) == (1, "error: cluster 'example-slurm' is a Slurm cluster; `manifesto deploy routing` is "
                            "Kubernetes-only, use `manifesto slurm ...` instead\n")
    rc, _, err = fake.run("servers", "-n", "ns", "--cluster", str(ROOT / "clusters/example-slurm.yaml"))
    assert (rc, err) == (1, "error: cluster 'example-slurm' is a Slurm cluster; `manifesto servers` is "
                            "Kubernetes-only, use `manifesto slurm ...` instead\n")
    assert fake.argvs() == []


@pytest.mark.integration
def test_deploy_routing_and_bootstrap(fake, tmp_path):
    rc, _, err = fake.run("deploy", "routing", AGG, "--cluster", GB200, "--user", "u", "--namespace", "ns")
    assert rc == 0, err
    kinds = {o["kind"] for o in fake.state["objects"]}
    assert "InferencePool" in kinds and "hf-secret" not in str(fake.state["objects"])
    assert fake.objects("Deployment") == ["qwen3-30b-infpool-epp"]
    rc, _, err = fake.run("deploy", "routing", QWEN, "--cluster", GB200, "--user", "u", "--namespace", "ns")
    assert (rc, err) == (1, f"error: {QWEN} has routing disabled; there is no routing layer to deploy\n")
    rc, _, err = fake.run("deploy", "bootstrap", "--cluster", GB200, "--namespace", "ns")
    assert (rc, err) == (0, "manifesto: cluster 'example-gb200' declares no namespace prerequisites\n")
    cluster = _cluster(tmp_path, "claim-test")
    Path(cluster).write_text(Path(cluster).read_text().replace(
        "  shared_mount_path: /mnt/shared", "  shared_claim: {size: 10Ti}\n  shared_mount_path: /mnt/shared"))
    fake.reset_log()
    rc, _, err = fake.run("deploy", "bootstrap", "--cluster", cluster, "--namespace", "ns")
    assert rc == 0, err
    assert fake.argvs() == [APPLY_STDIN]
    assert fake.objects("PersistentVolumeClaim") == ["demo-model-cache"]


# -- file diff / apply ------------------------------------------------------------------

@pytest.mark.integration
def test_file_diff_puts_no_kind_or_name_of_the_file_on_a_get_command_line_unchecked(fake, tmp_path):
    hostile = tmp_path / "m.yaml"
    hostile.write_text("apiVersion: v1\nkind: --kubeconfig=/etc/passwd\nmetadata: {name: a}\n---\n"
                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: --context=prod}\n---\n"
                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, namespace: --all-namespaces}\n")
    fake.run("file", "diff", str(hostile))
    reads = [a for a in fake.argvs() if "get" in a]
    assert reads == [["get", "configmaps", "ok", "--ignore-not-found", "--show-managed-fields", "-o", "json"]], reads


@pytest.mark.integration
def test_file_diff_and_apply(fake, tmp_path):
    from manifesto.render.k8s import objects
    from manifesto.util.yamlemit import dump_all

    plan = plan_of(QWEN, GB200)[0]
    target = tmp_path / "m.yaml"
    target.write_text(dump_all(objects(plan)))
    rc, out, _ = fake.run("file", "diff", str(target))
    assert rc == 1 and "diff -u" in out
    # The live objects are read (with their managedFields) per kind, then kubectl diff runs on
    # the file without the RoleBinding whose Role is new too, which is shown as new instead.
    *reads, last = fake.argvs()
    assert reads and all(a[:3] == ["-n", "ns", "get"] and "--show-managed-fields" in a for a in reads), reads
    assert last[:2] == ["diff", "-f"] and last[2] != str(target) and not Path(last[2]).exists()
    assert "# RoleBinding qwen3-0-6b-idle-shutdown: new, not in the dry run above" in out
    fake.reset_log()
    rc, out, err = fake.run("file", "apply", "-f", str(target))
    assert rc == 0, err
    assert fake.argvs() == [APPLY_STDIN, ["apply", "-f", str(target)]]
    _no_token_leaks(fake, out, err)
    assert "manifesto: hf-secret created in namespace ns\n" in err, err  # it did not exist before
    rc, out, err = fake.run("file", "apply", "-f", str(target))
    assert "manifesto: hf-secret up to date in namespace ns\n" in err, err  # kubectl: unchanged
    rc, _, err = fake.run("file", "diff", "--filename", str(target))
    assert (rc, err) == (0, f"manifesto: no differences between {target} and the cluster\n")
    script = tmp_path / "job.sbatch"
    script.write_text("#!/bin/bash\n")
    rc, _, err = fake.run("file", "apply", str(script))
    assert (rc, err) == (1, f"error: {script} is a Slurm batch script; submit it with sbatch or use "
                            "`manifesto slurm ...`\n")
    rc, _, err = fake.run("file", "diff", str(tmp_path / "absent.yaml"))
    assert (rc, err) == (1, f"error: {tmp_path}/absent.yaml does not exist; write it first with "
                            "`manifesto render file SPEC`\n")


@pytest.mark.integration
def test_file_apply_refuses_a_namespace_the_file_does_not_name(fake, tmp_path):
    target = tmp_path / "m.yaml"
    target.write_text("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: example-ns\n")
    rc, _, err = fake.run("file", "apply", str(target), "-n", "demo")
    assert rc == 1
    assert err == (f"error: --namespace demo: the objects in {target} name namespace example-ns; kubectl would apply "
                   "them there and put hf-secret in another namespace. Render the file for that namespace (or "
                   "deploy a deployment target) instead\n")
    assert fake.calls() == []
    assert fake.run("file", "apply", str(target), "-n", "example-ns")[0] == 0


@pytest.mark.integration
def test_file_output_flag_is_a_deprecated_alias(fake, tmp_path):
    target = tmp_path / "m.yaml"
    target.write_text("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\n")
    rc, _, err = fake.run("file", "apply", "-o", str(target))
    assert rc == 0, err
    assert "warning: `file apply -o FILE` is deprecated" in err
    assert fake.argvs() == [APPLY_STDIN, ["apply", "-f", str(target)]]
    rc, _, err = fake.run("file", "diff", str(target), "-f", str(tmp_path / "other.yaml"))
    assert (rc, err) == (1, f"error: file diff: name the rendered file once (FILE or -f), not {target} "
                            f"and {tmp_path / 'other.yaml'}\n")


@pytest.mark.integration
def test_file_default_path_from_env(fake, tmp_path, monkeypatch):
    target = tmp_path / "out.yaml"
    target.write_text("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\n")
    monkeypatch.setenv("MANIFESTO_RENDER_OUT", str(target))
    rc, _, err = fake.run("file", "apply")
    assert rc == 0, err
    assert fake.argvs() == [APPLY_STDIN, ["apply", "-f", str(target)]]


# -- servers ----------------------------------------------------------------------------

@pytest.mark.integration
def test_servers_lists_every_type_concurrently_and_groups(fake):
    assert _deploy(fake, AGG)[0] == 0
    assert _deploy(fake, QWEN)[0] == 0
    # A cluster without Istio (or Gateway API, or LWS) serves no such type: each lists as empty.
    fake.configure(missing_apis=["leaderworkerset.x-k8s.io", "gateway.networking.k8s.io", "networking.istio.io"])
    fake.reset_log()
    rc, out, err = fake.run("servers", "-n", "ns", "--output", "name")
    assert rc == 0, err
    assert out.split() == ["qwen3-0-6b", "qwen3-30b"]
    assert sorted(map(tuple, fake.argvs())) == sorted(
        ("-n", "ns", "get", t, "-l", SEL, "-o", "json") for t in ALL_TYPES)
    rc, out, _ = fake.run("servers", "-n", "ns", "--output", "json")
    data = json.loads(out)
    assert [d["instance"] for d in data] == ["qwen3-0-6b", "qwen3-30b"]
    small = {(r["kind"], r["name"]) for r in data[0]["resources"]}
    assert ("Deployment", "qwen3-0-6b-decode") in small and ("Service", "qwen3-0-6b-decode-http") in small
    assert all(n.startswith("qwen3-0-6b") for _, n in small)
    assert data[1]["owner"] == "u"
    assert ("InferencePool", "qwen3-30b-infpool") in {(r["kind"], r["name"]) for r in data[1]["resources"]}
    rc, out, _ = fake.run("servers", "-n", "ns")
    assert out.splitlines()[0].split() == ["INSTANCE", "OWNER", "RESOURCES"]
    assert out.splitlines()[2].startswith("qwen3-30b")


@pytest.mark.integration
def test_servers_reads_run_concurrently(fake):
    fake.configure(sleep={"get": 1.0})
    rc, _, err = fake.run("servers", "-n", "ns")
    assert rc == 0, err
    # Every read sleeps a second in the fake: run one after another, no two would overlap.
    _, most = json.loads((fake.dir / "overlap.json").read_text())
    assert most >= 4, most


# -- stop -------------------------------------------------------------------------------

@pytest.mark.integration
def test_stop_deletes_in_order(fake):
    assert _deploy(fake, AGG)[0] == 0
    assert _deploy(fake, QWEN)[0] == 0
    fake.seed({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "qwen3-30b-decode-abc", "namespace": "ns",
               "labels": {"app.kubernetes.io/managed-by": "manifesto", "app.kubernetes.io/instance": "qwen3-30b"}}})
    fake.reset_log()
    rc, _, err = fake.run("stop", "--instance", "qwen3-30b", "-n", "ns", "--user", "u")
    assert rc == 0, err
    deletes = [a for a in fake.argvs() if "delete" in a]
    head = ["-n", "ns", "delete", "--ignore-not-found"]
    assert deletes == [
        head + ["inferencepools.inference.networking.k8s.io/qwen3-30b-infpool",
                "deployments.apps/qwen3-30b-infpool-epp", "services/qwen3-30b-infpool-epp",
                "configmaps/qwen3-30b-envoy-config", "configmaps/qwen3-30b-epp-config",
                "rolebindings.rbac.authorization.k8s.io/qwen3-30b-epp", "roles.rbac.authorization.k8s.io/qwen3-30b-epp",
                "serviceaccounts/qwen3-30b-epp"],
        head + ["deployments.apps/qwen3-30b-decode", "deployments.apps/qwen3-30b-idle-shutdown"],
        head + ["services/qwen3-30b-decode-http", "configmaps/qwen3-30b-idle-shutdown",
                "rolebindings.rbac.authorization.k8s.io/qwen3-30b-idle-shutdown",
                "roles.rbac.authorization.k8s.io/qwen3-30b-idle-shutdown", "serviceaccounts/qwen3-30b-idle-shutdown"],
        ["-n", "ns", "delete", "pods", "-l", f"{SEL},app.kubernetes.io/instance=qwen3-30b", "--ignore-not-found"],
    ]
    left = {o["metadata"].get("labels", {}).get("app.kubernetes.io/instance") for o in fake.state["objects"]}
    assert left == {"qwen3-0-6b", None}  # the other instance and hf-secret remain


@pytest.mark.integration
def test_stop_deletes_the_gateway_frontend_with_its_destination_rules(fake, tmp_path):
    from manifesto.resolve import names

    assert _deploy(fake, _gateway_spec(tmp_path))[0] == 0
    rc, out, err = fake.run("servers", "-n", "ns", "--output", "json")
    assert rc == 0, err
    (data,) = json.loads(out)
    rules = [names.epp_destination_rule("qwen3-30b"), names.pool_destination_rule("qwen3-30b")]
    assert [(r["resource"], r["name"]) for r in data["resources"] if r["kind"] == "DestinationRule"] == [
        ("destinationrules.networking.istio.io", n) for n in rules]
    fake.reset_log()
    rc, _, err = fake.run("stop", "--instance", "qwen3-30b", "-n", "ns", "--user", "u")
    assert rc == 0, err
    routing = [a for a in fake.argvs() if "delete" in a][0]  # the first phase: routing
    assert routing[4:8] == [f"gateways.gateway.networking.k8s.io/{names.gateway('qwen3-30b')}",
                            f"httproutes.gateway.networking.k8s.io/{names.route('qwen3-30b')}",
                            *(f"destinationrules.networking.istio.io/{r}" for r in rules)]
    assert f"configmaps/{names.gateway_options('qwen3-30b')}" in routing
    assert fake.objects("DestinationRule") == [] and fake.objects("Gateway") == []


@pytest.mark.integration
def test_stop_refuses_another_users_instance_unless_taken_over(fake):
    assert _deploy(fake, QWEN)[0] == 0  # as user u
    fake.reset_log()
    for how in (("--instance", "qwen3-0-6b"), (QWEN, "--cluster", GB200)):
        rc, _, err = fake.run("stop", *how, "--namespace", "ns", "--user", "bob")
        assert (rc, err) == (1, "error: instance qwen3-0-6b in namespace ns belongs to u, not bob; pass --take-over "
                                "to stop it anyway\n")
    assert not [a for a in fake.argvs() if "delete" in a]
    assert "qwen3-0-6b-decode" in fake.objects("Deployment")
    rc, _, err = fake.run("stop", "--instance", "qwen3-0-6b", "-n", "ns", "--user", "bob", "--take-over")
    assert rc == 0, err
    assert "stopping qwen3-0-6b of u (--take-over)" in err
    assert fake.objects("Deployment") == []


@pytest.mark.integration
def test_stop_spec_now_and_unknown(fake):
    assert _deploy(fake, QWEN)[0] == 0
    fake.reset_log()
    rc, _, err = fake.run("stop", QWEN, "--cluster", GB200, "--user", "u", "--namespace", "ns", "--now")
    assert rc == 0, err
    deletes = [a for a in fake.argvs() if "delete" in a]
    assert all(a[2:6] == ["delete", "--ignore-not-found", "--grace-period=0", "--force"] for a in deletes[:-1])
    assert deletes[-1][-2:] == ["--grace-period=0", "--force"]
    rc, out, err = fake.run("stop", "--instance", "qwen3-0-6b", "-n", "ns", "--user", "u")
    # stop is idempotent: nothing live is said, and is no failure
    assert (rc, out, err) == (0, "", "manifesto: nothing to stop: no live objects of instance qwen3-0-6b in "
                                     "namespace ns\n")


@pytest.mark.integration
def test_stop_output_json_lists_what_it_deleted(fake):
    assert _deploy(fake, QWEN)[0] == 0
    rc, out, err = fake.run("stop", QWEN, "--cluster", GB200, "--user", "u", "--namespace", "ns", "-o", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert (data["instance"], data["namespace"]) == ("qwen3-0-6b", "ns")
    assert data["deleted"] and all("/" in ref for ref in data["deleted"]), data
    assert any(ref.startswith("deployment") for ref in data["deleted"]), data
    rc, out, _ = fake.run("stop", "--instance", "qwen3-0-6b", "-n", "ns", "--user", "u", "-o", "json")
    assert (rc, json.loads(out)["deleted"]) == (0, [])


@pytest.mark.integration
def test_stop_now_lists_what_kubectl_force_deleted(fake):
    # kubectl --force says `deployment.apps "x" force deleted from ns namespace` (v1.37)
    assert _deploy(fake, QWEN)[0] == 0
    rc, out, err = fake.run("stop", QWEN, "--cluster", GB200, "--user", "u", "--namespace", "ns", "--now", "-o", "json")
    assert rc == 0, err
    assert "deployment.apps/qwen3-0-6b-decode" in json.loads(out)["deleted"], out


class _Terminal:
    def isatty(self) -> bool:
        return True


@pytest.mark.integration
def test_stop_numbered_picker(fake, monkeypatch):
    assert _deploy(fake, AGG)[0] == 0
    assert _deploy(fake, QWEN)[0] == 0
    monkeypatch.setattr("sys.stdin", _Terminal())
    monkeypatch.setattr("builtins.input", lambda prompt="": "2")
    rc, _, err = fake.run("stop", "-n", "ns", "--user", "u")
    assert rc == 0, err
    assert "  1) qwen3-0-6b" in err and "  2) qwen3-30b" in err
    assert fake.objects("InferencePool") == []
    assert "qwen3-0-6b-decode" in fake.objects("Deployment")
    monkeypatch.setattr("builtins.input", lambda prompt="": "")
    rc, _, err = fake.run("stop", "-n", "ns", "--user", "u")
    assert (rc, err) == (1, "  1) qwen3-0-6b\nmanifesto: nothing selected\n")


@pytest.mark.integration
def test_stop_without_a_target_or_a_terminal_refuses_to_prompt(fake):
    assert _deploy(fake, QWEN)[0] == 0
    fake.reset_log()
    rc, _, err = fake.run("stop", "-n", "ns")  # pytest's stdin is not a terminal
    assert (rc, err) == (1, "error: stop without SPEC or --instance opens a picker, which needs a terminal; "
                            "pass --instance ID (`manifesto servers -o name` lists them) or SPEC\n")
    assert fake.argvs() == []
    assert "qwen3-0-6b-decode" in fake.objects("Deployment")


@pytest.mark.integration
def test_servers_output_formats(fake):
    assert _deploy(fake, QWEN)[0] == 0
    rc, out, _ = fake.run("servers", "-n", "ns", "-o", "yaml")
    assert rc == 0 and out.startswith("- instance: qwen3-0-6b\n")
    rc, out, _ = fake.run("servers", "-n", "ns", "-o", "name")
    assert out == "qwen3-0-6b\n"


@pytest.mark.integration
def test_picker_uses_fzf_when_present(tmp_path):
    from manifesto.ops.lifecycle import pick

    fzf = tmp_path / "fzf"
    fzf.write_text("#!/bin/sh\ntail -n 1\n")
    fzf.chmod(0o755)
    assert pick(["a", "b"], fzf=str(fzf)) == "b"
    assert pick(["a", "b"], fzf=None, ask=lambda _: "a") == "a"


# -- ready ------------------------------------------------------------------------------

def _mark_ready(fake: FakeCluster, instance: str, pods: dict[str, int]) -> None:
    state = fake.state
    for o in state["objects"]:
        if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-epp"):
            o["status"] = {"conditions": [{"type": "Available", "status": "True"}]}
    (fake.dir / "state.json").write_text(json.dumps(state))
    for role, count in pods.items():
        for i in range(count):
            fake.seed({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"{role}-{i}", "namespace": "ns",
                "labels": {"app.kubernetes.io/managed-by": "manifesto", "app.kubernetes.io/instance": instance,
                           "app.kubernetes.io/component": "model-server", "manifesto.llm-d.ai/role": role}},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}})


@pytest.mark.integration
def test_ready(fake):
    assert _deploy(fake, AGG)[0] == 0
    args = ("ready", AGG, "--cluster", GB200, "--user", "u", "--namespace", "ns")
    # The fake starts the pods of every applied workload; they turn Ready after one read.
    rc, _, err = fake.run(*args, "--timeout", "0")
    assert (rc, err) == (1, "manifesto: waiting up to 0s for qwen3-30b in namespace ns: 2 decode pod(s), "
                            "Deployment qwen3-30b-infpool-epp available\n"
                            "error: qwen3-30b not ready after 0s: role decode: 0/2 pods ready\n")
    fake.reset_log()
    rc, _, err = fake.run(*args, "--timeout", "0")
    assert rc == 0, err
    assert fake.argvs() == [["-n", "ns", "get", "pods", "-l", f"{SEL},app.kubernetes.io/instance=qwen3-30b", "-o", "json"],
                            ["-n", "ns", "get", "deployments.apps", "qwen3-30b-infpool-epp", "-o", "json"]]


@pytest.mark.integration
def test_ready_gateway_needs_programmed(fake, tmp_path):
    fake.configure(gateway_programmed=False)
    spec = _gateway_spec(tmp_path)
    assert _deploy(fake, spec)[0] == 0
    _mark_ready(fake, "qwen3-30b", {"decode": 2})
    args = ("ready", spec, "--cluster", GB200, "--user", "u", "--namespace", "ns", "--timeout", "0")
    rc, _, err = fake.run(*args)
    from manifesto.resolve import names

    assert (rc, err.splitlines()[-1]) == (
        1, f"error: qwen3-30b not ready after 0s: Gateway {names.gateway('qwen3-30b')} not programmed")
    state = fake.state
    for o in state["objects"]:
        if o["kind"] == "Gateway":
            o["status"] = {"conditions": [{"type": "Programmed", "status": "True"}]}
    (fake.dir / "state.json").write_text(json.dumps(state))
    assert fake.run(*args)[0] == 0


# -- retries, timeouts, trace -----------------------------------------------------------

@pytest.mark.integration
def test_transient_faults_are_retried(fake, monkeypatch):
    fake.configure(fail={"get pods": {"times": 2}})
    rc, _, err = fake.run("servers", "-n", "ns")
    assert rc == 0, err
    assert sum(1 for a in fake.argvs() if "pods" in a) == 3
    fake.configure(fail={"get pods": {"times": 2}})
    monkeypatch.setenv("MANIFESTO_KUBECTL_RETRIES", "1")
    rc, _, err = fake.run("servers", "-n", "ns")
    assert (rc, err) == (1, "error: `kubectl -n ns get pods -l app.kubernetes.io/managed-by=manifesto -o json` "
                            "failed after 2 attempts: Unable to connect to the server: dial tcp 10.0.0.1:6443: "
                            "i/o timeout\n")


@pytest.mark.integration
def test_non_transient_faults_are_not_retried(fake):
    fake.configure(fail={"get pods": {"times": 5, "stderr": 'Error from server (Forbidden): pods is forbidden'}})
    rc, _, err = fake.run("servers", "-n", "ns")
    assert (rc, err) == (1, "error: `kubectl -n ns get pods -l app.kubernetes.io/managed-by=manifesto -o json` "
                            "failed: Error from server (Forbidden): pods is forbidden\n")
    assert sum(1 for a in fake.argvs() if "pods" in a) == 1


@pytest.mark.integration
def test_read_timeout(fake, monkeypatch):
    fake.configure(sleep={"get pods": 5})
    monkeypatch.setenv("MANIFESTO_KUBECTL_TIMEOUT", "0.5")
    monkeypatch.setenv("MANIFESTO_KUBECTL_RETRIES", "0")
    rc, _, err = fake.run("servers", "-n", "ns")
    assert rc == 1 and "timed out" in err and "MANIFESTO_KUBECTL_TIMEOUT" in err  # not the fake's 5s answer
    monkeypatch.setenv("MANIFESTO_KUBECTL_TIMEOUT", "nope")
    rc, _, err = fake.run("servers", "-n", "ns")
    assert (rc, err) == (1, "error: MANIFESTO_KUBECTL_TIMEOUT='nope': expected a number of seconds "
                            "from 0 (no bound) to 2073600\n")


@pytest.mark.integration
def test_trace_logs_argv_and_duration_never_stdin(fake, monkeypatch):
    monkeypatch.setenv("MANIFESTO_TRACE", "1")
    rc, out, err = _deploy(fake, QWEN)
    assert rc == 0, err
    traces = [line for line in err.splitlines() if line.startswith("trace: ")]
    owner_reads = [t for t in traces if " --ignore-not-found " in t]
    traces = [t for t in traces if t not in owner_reads]
    assert len(owner_reads) == 6 and all(t.startswith("trace: kubectl -n ns get ") for t in owner_reads)
    assert traces[0].startswith("trace: kubectl -n ns apply -f - (") and traces[0].endswith("s, rc=0)")
    assert len(traces) == 5  # hf-secret, three workload listings, the artifact
    assert TOKEN not in err and "stringData" not in err
    _no_token_leaks(fake, out, err)


@pytest.mark.integration
def test_context_flag_reaches_kubectl(fake):
    rc, _, err = fake.run("servers", "-n", "ns", "--context", "ctx-a")
    assert rc == 0, err
    assert all(a[:4] == ["--context", "ctx-a", "-n", "ns"] for a in fake.argvs())


@pytest.mark.integration
def test_the_profile_named_for_the_kube_cluster_follows_context(fake, isolated_env):
    """With no --cluster, the profile is the one named for the cluster of --context, not of the
    current context."""
    clusters = isolated_env.config_home / "clusters"
    clusters.mkdir()
    base = Path(GB200).read_text()
    for name in ("acme-a", "acme-b"):
        (clusters / f"{name}.yaml").write_text(base.replace("name: example-gb200", f"name: {name}"))
    fake.configure(current_context="ctx-a", contexts={"ctx-a": {"cluster": "acme-a"}, "ctx-b": {"cluster": "acme-b"}})
    rc, out, err = fake.run("explain", "qwen/qwen3-0.6b", "--context", "ctx-b", "--user", "u", "--namespace", "ns",
                            "-o", "json")
    assert rc == 0, err
    assert json.loads(out)["cluster"] == "acme-b"
    assert ["config", "view", "--minify", "--context", "ctx-b", "-o",
            "jsonpath={.contexts[0].context.cluster}"] in fake.argvs()


@pytest.mark.integration
def test_deploy_refuses_objects_of_another_owner_unless_take_over(fake):
    assert fake.run("deploy", QWEN, "--cluster", GB200, "--user", "alice", "--namespace", "ns")[0] == 0
    fake.reset_log()
    rc, _, err = fake.run("deploy", QWEN, "--cluster", GB200, "--user", "bob", "--namespace", "ns")
    assert rc == 1
    assert err == ("error: 7 object(s) to apply already exist in namespace ns and belong to instance qwen3-0-6b "
                   "of user alice: ServiceAccount qwen3-0-6b-idle-shutdown, Role qwen3-0-6b-idle-shutdown, "
                   "RoleBinding qwen3-0-6b-idle-shutdown, ConfigMap qwen3-0-6b-idle-shutdown, "
                   "Service qwen3-0-6b-decode-http, Deployment qwen3-0-6b-decode, Deployment qwen3-0-6b-idle-shutdown; "
                   "pass --take-over to modify them anyway\n")
    assert not [c for c in fake.calls() if "apply" in c["argv"]]  # nothing changed, the secret included
    owners = {o["metadata"]["labels"].get("llm-d.ai/owner") for o in fake.state["objects"] if o["kind"] != "Secret"}
    assert owners == {"alice"}
    rc, _, err = fake.run("deploy", QWEN, "--cluster", GB200, "--user", "bob", "--namespace", "ns", "--take-over")
    assert rc == 0 and "manifesto: taking over objects of instance qwen3-0-6b of user alice: ServiceAccount " \
        "qwen3-0-6b-idle-shutdown, " in err
    owners = {o["metadata"]["labels"].get("llm-d.ai/owner") for o in fake.state["objects"] if o["kind"] != "Secret"}
    assert owners == {"bob"}


# -- pure helpers -----------------------------------------------------------------------

def test_call_values_are_data():
    from manifesto.ops.kubectl import Kube, settings_from_env

    kube = Kube(namespace="ns", context="c", **settings_from_env({"MANIFESTO_KUBECTL_TIMEOUT": "0"}))
    call = kube.read("get", "pods")
    assert call.argv == ("kubectl", "--context", "c", "-n", "ns", "get", "pods")
    assert call.timeout is None and call.retries == 4 and call.stdin is None
    write = kube.write("apply", "-f", "-", stdin="x")
    assert write.retries == 0 and write.timeout is None and write.stdin == "x" and write.write
    assert Kube(**settings_from_env({})).write("delete", "x").timeout == 300.0
    assert settings_from_env({}) == {"timeout": 300.0, "retries": 4, "trace": False}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.integration
def test_a_hung_kubectl_is_killed_with_its_children(fake, monkeypatch):
    """A timed-out call ends kubectl and every process it started (an auth plugin, say),
    so nothing keeps running, or keeps our pipes open, after the command gives up."""
    fake.configure(hang=["get pods"])
    monkeypatch.setenv("MANIFESTO_KUBECTL_TIMEOUT", "1")
    monkeypatch.setenv("MANIFESTO_KUBECTL_RETRIES", "0")
    rc, _, err = fake.run("servers", "-n", "ns")
    assert rc == 1 and err.strip().endswith("no answer within 1s (MANIFESTO_KUBECTL_TIMEOUT)"), err
    pids = [int(p) for line in (fake.dir / "hung.pids").read_text().split("\n") if line for p in line.split()]
    assert len(pids) == 2
    import time

    for _ in range(50):  # SIGKILL is asynchronous: give the kernel a moment to finish the job
        if not any(_alive(p) for p in pids):
            break
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), pids


@pytest.mark.integration
def test_writes_are_bounded_and_say_they_may_be_half_done(fake, monkeypatch):
    fake.configure(hang=["apply"])
    monkeypatch.setenv("MANIFESTO_KUBECTL_TIMEOUT", "1")
    rc, _, err = _deploy(fake, QWEN)
    assert rc == 1
    assert err.strip().splitlines()[-1] == ("error: `kubectl -n ns apply -f -` timed out: no answer within 1s "
                                            "(MANIFESTO_KUBECTL_TIMEOUT); the change may have been made in part, "
                                            "check the cluster before running it again")
    assert sum(1 for a in fake.argvs() if "apply" in a) == 1  # never retried


@pytest.mark.integration
def test_the_stand_in_diff_shows_hunks_and_get_o_name_lists_names(fake, tmp_path):
    """The stand-in kubectl answers as kubectl does: `diff` prints the changed lines under each
    header, and `get -o name` prints TYPE.GROUP/NAME lines, nothing when nothing exists."""
    import os
    import subprocess

    def kubectl(*argv):
        return subprocess.run(["kubectl", *argv], capture_output=True, text=True, env=dict(os.environ))

    assert kubectl("-n", "ns", "get", "deployments.apps", "-o", "name").stdout == ""
    short = kubectl("-n", "ns", "get", "deployments", "-o", "name")  # a name it does not take: it says which it does
    assert (short.returncode, short.stdout) == (1, "") and short.stderr == (
        'error: the server doesn\'t have a resource type "deployments" (this stand-in knows a grouped resource by '
        "its full name only: deployments.apps)\n")
    target = tmp_path / "m.yaml"
    assert fake.run("render", "file", QWEN, "--cluster", GB200, "--user", "u", "-n", "ns", "-o", str(target))[0] == 0
    rc, out, _ = fake.run("file", "diff", str(target))
    assert rc == 1 and "diff -u -N live/Deployment.qwen3-0-6b-decode merged/Deployment.qwen3-0-6b-decode\n" in out
    assert "+++ merged/Deployment.qwen3-0-6b-decode\n" in out and '+  "kind": "Deployment",\n' in out
    empty = kubectl("-n", "ns", "get", "pods")  # typed by hand: kubectl's note, no JSON
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, "", "No resources found in ns namespace.\n")
    assert fake.run("file", "apply", str(target))[0] == 0
    table = kubectl("-n", "ns", "get", "deployments.apps")
    assert (table.returncode, table.stdout) == (0, "NAME\nqwen3-0-6b-decode\nqwen3-0-6b-idle-shutdown\n")
    assert kubectl("-n", "ns", "get", "pods", "nope").stderr == 'Error from server (NotFound): pods "nope" not found\n'
    assert kubectl("-n", "ns", "get", "deployments.apps", "-o", "name").stdout == \
        "deployment.apps/qwen3-0-6b-decode\ndeployment.apps/qwen3-0-6b-idle-shutdown\n"
    assert kubectl("-n", "ns", "get", "deployments.apps", "qwen3-0-6b-decode", "-o", "name").stdout == \
        "deployment.apps/qwen3-0-6b-decode\n"
    target.write_text(target.read_text().replace("replicas: 1", "replicas: 2", 1))
    rc, out, _ = fake.run("file", "diff", str(target))
    assert rc == 1 and '-    "replicas": 1,\n' in out and '+    "replicas": 2,\n' in out, out
    assert [line for line in out.splitlines() if line.startswith("diff ")] == [
        "diff -u -N live/Deployment.qwen3-0-6b-decode merged/Deployment.qwen3-0-6b-decode"]
