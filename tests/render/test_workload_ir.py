"""The controller-neutral workload IR: the settings projection, the schema, and its lowering.

Every rendered case is checked with ``validate-manifests`` (skips without the shared kit,
fails under ``CI=true``). The upstream example comes from the shared reference inputs.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

import kit
from kit import scrub
from manifesto.cluster import load_cluster
from manifesto.errors import IncompatiblePairError, ResolveError, SchemaError
from manifesto.load.inputs import load_typed
from manifesto.render.k8s.common import KUEUE_PRIORITY, KUEUE_QUEUE
from manifesto.render.k8s.workload import workload_objects
from manifesto.resolve.workload import plan_workload
from manifesto.util.yamlemit import dump_all
from manifesto.schema.workload import Workload
from manifesto.workload import PlatformClaim, workload_settings

GB200 = kit.REPO_ROOT / "clusters" / "example-gb200.yaml"
UPSTREAM_EXAMPLE = "reference/upstream-examples/examples/non-indexed-job.yaml"

DRA_CLUSTER = """\
name: dra-rack
accelerators:
  default: gb200
  profiles:
    gb200:
      gpus_per_node: 4
      allocation:
        dra:
          device_class_name: gpu.nvidia.com
      presence_label: nvidia.com/gpu.present
      node_selector:
        nvidia.com/gpu.product: NVIDIA-GB200
      compute_domain:
        resource_claim_template_name: rack-imex-channel
    h100:
      gpus_per_node: 8
      resource_name: nvidia.com/gpu
pod_defaults:
  node_selector:
    pool: gpu
  annotations:
    example.com/owner: platform
  image_pull_policy: IfNotPresent
  image_pull_secrets: [registry-creds]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions:
              - {key: example.com/rack, operator: Exists}
  tolerations:
    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  dns_policy: ClusterFirst
  dns_config:
    options:
      - {name: ndots, value: "2"}
  shm_size: 2Gi
kueue:
  local_queue: team-gpu
  priority_class: batch-low
storage:
  shared_mount_path: /mnt/shared
"""

POD = """\
pod_template:
  metadata:
    labels: {app.kubernetes.io/name: demo}
  spec:
    containers:
      - name: main
        image: example.invalid/main:1
      - name: sidecar
        image: example.invalid/sidecar:1
"""


@pytest.fixture
def dra_cluster(tmp_path):
    path = tmp_path / "dra-rack.yaml"
    path.write_text(DRA_CLUSTER)
    return load_cluster(path)


@pytest.fixture
def gb200():
    return load_cluster(GB200)


def _write(tmp_path: Path, text: str, name: str = "workload.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _render(path: Path, cluster, accelerator: str | None = None, namespace: str = "ns") -> list[dict]:
    workload, loaded = load_typed(Workload, path)
    acc = workload_settings(cluster).accelerator(accelerator)
    objects = workload_objects(plan_workload(workload), acc, namespace, where=loaded.locs.find)
    kit.validate_manifests(dump_all(objects))
    return objects


def _kind(objects: list[dict], kind: str) -> dict:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


def _container(template: dict, name: str) -> dict:
    return next(c for c in template["spec"]["containers"] if c["name"] == name)


# -- the upstream example -------------------------------------------------------------------


@pytest.mark.integration
def test_upstream_non_indexed_job_renders_and_validates(gb200):
    path = kit.require_shared(UPSTREAM_EXAMPLE)
    objects = _render(path, gb200, "gb200")
    assert [o["kind"] for o in objects] == ["Job"]
    job = objects[0]
    assert job["apiVersion"] == "batch/v1"
    assert job["metadata"]["labels"][KUEUE_QUEUE] == "example-gpu-queue"
    spec = job["spec"]
    assert "completionMode" not in spec  # an ordinary, non-indexed Job
    assert spec["suspend"] is True
    assert (spec["backoffLimit"], spec["activeDeadlineSeconds"], spec["ttlSecondsAfterFinished"]) == (0, 7200, 86400)
    pod = spec["template"]
    assert pod["metadata"]["labels"][KUEUE_QUEUE] == "example-gpu-queue"
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    res = _container(pod, "worker")["resources"]
    assert res["requests"] == {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"}
    assert res["limits"] == {"nvidia.com/gpu": "1"}


def test_cli_render_workload_prints_header_and_yaml(gb200, capsys, monkeypatch):
    from manifesto.cli.build_cmds import formatter
    from manifesto.cli import workload_cmds

    for name in ("MANIFESTO_CLUSTER", "MANIFESTO_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)
    path = kit.require_shared(UPSTREAM_EXAMPLE)
    parser = argparse.ArgumentParser()
    render = parser.add_subparsers(dest="what")
    workload_cmds.register(render, lambda sub, name, **kw: sub.add_parser(name, formatter_class=formatter(), **kw))
    args = parser.parse_args(["workload", str(path), "--cluster", str(GB200), "--namespace", "team"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    header, _, body = out.partition("---\n")
    assert header.startswith("# Generated by:\n#   manifesto render workload ")
    assert "--accelerator gb200 --namespace team" in header
    assert all(line.startswith("#") for line in header.splitlines())
    assert yaml.safe_load(body)["metadata"]["namespace"] == "team"


# -- backends ---------------------------------------------------------------------------------


@pytest.mark.integration
def test_indexed_job_with_headless_service(tmp_path, gb200):
    head = "name: trainer\nbackend: job\naccelerator_count: 4\naccelerator_container: main\n"
    path = _write(tmp_path, head + POD + """\
job:
  completion_mode: Indexed
  completions: 4
  parallelism: 4
service:
  type: headless
""")
    objects = _render(path, gb200)
    assert [o["kind"] for o in objects] == ["Service", "Job"]
    svc, job = objects
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["selector"] == {"batch.kubernetes.io/job-name": "trainer"}
    assert "ports" not in svc["spec"]
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 4, 4)
    assert spec["template"]["spec"]["subdomain"] == "trainer"
    # The cluster names no queue: nothing is queued or suspended.
    assert "suspend" not in spec
    assert KUEUE_QUEUE not in job["metadata"]["labels"]
    assert _container(spec["template"], "main")["resources"]["limits"] == {"nvidia.com/gpu": "4"}
    assert "resources" not in _container(spec["template"], "sidecar")


@pytest.mark.integration
def test_deployment_with_normal_service(tmp_path, gb200):
    head = "name: api\nbackend: deployment\naccelerator_count: 1\naccelerator_container: main\n"
    path = _write(tmp_path, head + POD + """\
deployment: {replicas: 2}
service:
  ports:
    - {name: http, port: 80, target_port: 8000}
""")
    svc, dep = _render(path, gb200, "b200")
    assert dep["apiVersion"] == "apps/v1"
    assert dep["spec"]["replicas"] == 2
    assert dep["spec"]["selector"] == {"matchLabels": {"app.kubernetes.io/name": "demo"}}
    assert svc["spec"]["type"] == "ClusterIP" and "clusterIP" not in svc["spec"]
    assert svc["spec"]["selector"] == {"app.kubernetes.io/name": "demo"}
    assert svc["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": 8000, "protocol": "TCP"}]


@pytest.mark.integration
def test_leaderworkerset_with_leader_template(tmp_path, gb200):
    leader = POD.replace("pod_template:", "leader_template:").replace("main:1", "leader:1")
    path = _write(tmp_path, "name: group\nbackend: leaderworkerset\naccelerator_count: 4\n"
                  "accelerator_container: main\n" + POD + leader + "leaderworkerset: {size: 2, replicas: 3}\n")
    (lws,) = _render(path, gb200)
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert lws["spec"]["replicas"] == 3
    lwt = lws["spec"]["leaderWorkerTemplate"]
    assert lwt["size"] == 2
    assert _container(lwt["leaderTemplate"], "main")["image"] == "example.invalid/leader:1"
    for key in ("leaderTemplate", "workerTemplate"):
        assert _container(lwt[key], "main")["resources"]["limits"] == {"nvidia.com/gpu": "4"}
        assert lwt[key]["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}


@pytest.mark.integration
def test_workload_without_accelerators_gets_no_gpu_placement(tmp_path, dra_cluster):
    path = _write(tmp_path, "name: cpu\nbackend: deployment\n" + POD)
    objects = _render(path, dra_cluster)
    (dep,) = objects
    spec = dep["spec"]["template"]["spec"]
    assert "nodeSelector" not in spec and "tolerations" not in spec and "resourceClaims" not in spec
    assert spec["imagePullSecrets"] == [{"name": "registry-creds"}]  # not GPU-specific
    # The cluster's default queue is for GPU workloads only.
    assert KUEUE_QUEUE not in dep["metadata"]["labels"]


def test_grove_is_reserved(tmp_path, gb200):
    path = _write(tmp_path, "name: g\nbackend: grove\n" + POD)
    with pytest.raises(ResolveError) as err:
        _render(path, gb200)
    text = str(err.value)
    assert re.search(r"workload\.yaml:2:1: backend: backend 'grove' is reserved and not implemented", text)
    assert "manifesto.render.k8s.workload.LOWERINGS" in text


# -- Kueue placement --------------------------------------------------------------------------


def _queued(tmp_path, cluster, backend: str, extra: str = "") -> dict:
    labels = "  metadata:\n    labels: {app.kubernetes.io/name: demo, kueue.x-k8s.io/queue-name: stale}\n"
    pod = POD.replace("  metadata:\n    labels: {app.kubernetes.io/name: demo}\n", labels)
    path = _write(tmp_path, f"name: q\nbackend: {backend}\naccelerator_count: 2\naccelerator_container: main\n"
                  + pod + extra)
    return _render(path, cluster)[-1]


@pytest.mark.integration
def test_kueue_job_labels_object_and_pod_and_suspends(tmp_path, dra_cluster):
    job = _queued(tmp_path, dra_cluster, "job")
    assert job["metadata"]["labels"][KUEUE_QUEUE] == "team-gpu"
    assert job["metadata"]["labels"][KUEUE_PRIORITY] == "batch-low"
    assert job["spec"]["template"]["metadata"]["labels"][KUEUE_QUEUE] == "team-gpu"
    assert job["spec"]["suspend"] is True


@pytest.mark.integration
def test_kueue_deployment_labels_object_and_pod(tmp_path, dra_cluster):
    dep = _queued(tmp_path, dra_cluster, "deployment")
    assert dep["metadata"]["labels"][KUEUE_QUEUE] == "team-gpu"
    assert dep["spec"]["template"]["metadata"]["labels"][KUEUE_QUEUE] == "team-gpu"
    assert KUEUE_QUEUE not in dep["spec"]["selector"]["matchLabels"]


@pytest.mark.integration
def test_kueue_leaderworkerset_labels_only_the_lws(tmp_path, dra_cluster):
    leader = POD.replace("pod_template:", "leader_template:").replace(
        "labels: {app.kubernetes.io/name: demo}",
        "labels: {app.kubernetes.io/name: demo, kueue.x-k8s.io/queue-name: x}")
    lws = _queued(tmp_path, dra_cluster, "leaderworkerset", leader + "leaderworkerset: {size: 2}\n")
    assert lws["metadata"]["labels"][KUEUE_QUEUE] == "team-gpu"
    for key in ("leaderTemplate", "workerTemplate"):
        labels = lws["spec"]["leaderWorkerTemplate"][key]["metadata"]["labels"]
        assert KUEUE_QUEUE not in labels and KUEUE_PRIORITY not in labels


@pytest.mark.integration
def test_explicit_queue_name_wins_and_queued_job_cannot_be_unsuspended(tmp_path, dra_cluster):
    job = _queued(tmp_path, dra_cluster, "job", "queue_name: urgent\n")
    assert job["metadata"]["labels"][KUEUE_QUEUE] == "urgent"
    with pytest.raises(ResolveError) as info:
        _queued(tmp_path, dra_cluster, "job", "job: {suspend: false}\n")
    assert scrub(str(info.value), tmp_path) == (
        '<tmp>/workload.yaml:14:7: job.suspend: a Job queued in Kueue (team-gpu) is created suspended and Kueue '
        'resumes it on admission; drop suspend: false or the queue')


# -- DRA and platform claims ------------------------------------------------------------------


@pytest.mark.integration
def test_dra_claim_template_and_platform_claims_on_leader_and_workers(tmp_path, dra_cluster):
    leader = POD.replace("pod_template:", "leader_template:")
    path = _write(tmp_path, "name: group\nbackend: leaderworkerset\naccelerator_count: 4\n"
                  "accelerator_container: main\n" + POD + leader + "leaderworkerset: {size: 2}\n")
    objects = _render(path, dra_cluster)
    assert [o["kind"] for o in objects] == ["ResourceClaimTemplate", "LeaderWorkerSet"]
    rct, lws = objects
    name = rct["metadata"]["name"]
    assert re.fullmatch(r"group-accelerator-[0-9a-f]{8}", name)
    assert rct["spec"]["spec"]["devices"]["requests"] == [{
        "name": "gpu",
        "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 4},
    }]
    lwt = lws["spec"]["leaderWorkerTemplate"]
    assert lwt["leaderTemplate"]["spec"] == lwt["workerTemplate"]["spec"]  # same-shaped
    for key in ("leaderTemplate", "workerTemplate"):
        pod = lwt[key]
        assert pod["spec"]["resourceClaims"] == [
            {"name": "accelerator", "resourceClaimTemplateName": name},
            {"name": "compute-domain-channel", "resourceClaimTemplateName": "rack-imex-channel"},
        ]
        main = _container(pod, "main")
        assert main["resources"] == {"claims": [{"name": "accelerator"}, {"name": "compute-domain-channel"}]}
        assert "resources" not in _container(pod, "sidecar")
        assert all(c["imagePullPolicy"] == "IfNotPresent" for c in pod["spec"]["containers"])
        assert pod["spec"]["nodeSelector"] == {
            "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-GB200", "pool": "gpu"}
        assert pod["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        assert pod["spec"]["dnsPolicy"] == "ClusterFirst"
        assert pod["spec"]["dnsConfig"] == {"options": [{"name": "ndots", "value": "2"}]}
        assert "nodeAffinity" in pod["spec"]["affinity"]
        assert pod["metadata"]["annotations"] == {"example.com/owner": "platform"}


@pytest.mark.integration
def test_workload_values_win_over_cluster_defaults(tmp_path, dra_cluster):
    path = _write(tmp_path, """\
name: own
backend: job
accelerator_count: 1
pod_template:
  metadata:
    annotations: {example.com/owner: me}
  spec:
    nodeSelector: {pool: special}
    dnsPolicy: Default
    imagePullSecrets: [{name: mine}]
    containers:
      - {name: main, image: example.invalid/main:1, imagePullPolicy: Always}
""")
    (_, job) = _render(path, dra_cluster)
    pod = job["spec"]["template"]
    assert pod["metadata"]["annotations"] == {"example.com/owner": "me"}
    assert pod["spec"]["nodeSelector"]["pool"] == "special"
    assert pod["spec"]["dnsPolicy"] == "Default"
    assert pod["spec"]["imagePullSecrets"] == [{"name": "registry-creds"}, {"name": "mine"}]
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_conflicting_gpu_request_and_claim_names_are_refused(tmp_path, gb200, dra_cluster):
    path = _write(tmp_path, """\
name: c
backend: job
accelerator_count: 2
pod_template:
  spec:
    containers:
      - name: main
        image: x
        resources:
          limits: {nvidia.com/gpu: 1}
""")
    with pytest.raises(ResolveError) as info:
        _render(path, gb200)
    assert scrub(str(info.value), tmp_path) == (
        '<tmp>/workload.yaml:10:20: pod_template.spec.containers[0].resources.limits.nvidia.com/gpu: nvidia.com/gpu '
        'is 1 here but accelerator_count is 2; leave the accelerator resource to accelerator_count')
    path = _write(tmp_path, """\
name: c
backend: job
accelerator_count: 2
pod_template:
  spec:
    resourceClaims: [{name: accelerator, resourceClaimTemplateName: mine}]
    containers: [{name: main, image: x}]
""")
    with pytest.raises(ResolveError) as info:
        _render(path, dra_cluster)
    assert scrub(str(info.value), tmp_path) == (
        "<tmp>/workload.yaml:6:5: pod_template.spec.resourceClaims: claim name 'accelerator' is already used here; "
        "Manifesto adds it for the cluster's accelerator, so drop it from the workload")


# -- schema errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("name: w\nbackend: job\nreplica: 2\n" + POD, r"workload\.yaml:3:1: replica: unknown key 'replica'"),
    ("name: w\nbackend: job\n" + POD + "job: {backof_limit: 1}\n",
     r"workload\.yaml:12:7: job\.backof_limit: unknown key 'backof_limit'.*backoff_limit"),
    ("name: w\nbackend: job\n" + POD + "service: {type: headless, port: 1}\n",
     r"workload\.yaml:12:27: service\.port: unknown key 'port'"),
    ("name: w\nbackend: cron\n" + POD, r"workload\.yaml:2:1: backend: 'cron' is not allowed"),
    ("name: w\nbackend: deployment\n" + POD + "accelerator_count: 1\n",
     r"workload\.yaml:12:1: accelerator_count: pod_template has 2 containers \(main, sidecar\)"),
    ("name: w\nbackend: job\naccelerator_count: 1\naccelerator_container: gpu\n" + POD,
     r"workload\.yaml:4:1: accelerator_container: 'gpu' is not a container of pod_template"),
    ("name: w\nbackend: job\n" + POD + "leaderworkerset: {size: 2}\n",
     r"workload\.yaml:12:1: leaderworkerset: the leaderworkerset section needs backend: leaderworkerset"),
    ("name: w\nbackend: leaderworkerset\n" + POD, 
     r"workload\.yaml:2:1: backend: backend: leaderworkerset needs a leaderworkerset"),
    ("name: w\nbackend: job\n" + POD + "leader_template: {spec: {containers: [{name: a}]}}\n",
     r"workload\.yaml:12:1: leader_template: leader_template is for backend: leaderworkerset"),
    ("name: w\nbackend: job\n" + POD + "job: {completion_mode: Indexed}\n",
     r"workload\.yaml:12:7: job\.completion_mode: an Indexed Job needs completions"),
    ("name: w\nbackend: job\npod_template:\n  spec: {containers: []}\n",
     r"workload\.yaml:4:10: pod_template\.spec\.containers: a pod spec needs a non-empty list"),
    ("name: w\nbackend: job\npod_template:\n  metadata: {}\n  spec: {containers: [{name: a}]}\n  kind: Pod\n",
     r"workload\.yaml:6:3: pod_template\.kind: unknown key 'kind'"),
    ("name: w\nbackend: deployment\n" + POD + "service: {type: normal}\n",
     r"service: a normal \(ClusterIP\) Service needs at least one port"),
])
def test_schema_errors_point_at_the_field(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(SchemaError) as err:
        load_typed(Workload, path)
    assert re.search(message, str(err.value)), str(err.value)


def test_restart_policy_is_checked_per_backend(tmp_path, gb200):
    text = POD.replace("    containers:", "    restartPolicy: Never\n    containers:")
    path = _write(tmp_path, "name: w\nbackend: deployment\n" + text)
    with pytest.raises(ResolveError) as info:
        _render(path, gb200)
    assert scrub(str(info.value), tmp_path) == (
        '<tmp>/workload.yaml:7:5: pod_template.spec.restartPolicy: restartPolicy Never is not allowed for backend '
        'deployment; use Always')


# -- the settings projection ------------------------------------------------------------------


def test_settings_of_the_bundled_gb200_cluster(gb200):
    settings = workload_settings(gb200)
    assert settings.cluster_name == "example-gb200"
    assert settings.default_accelerator == "gb200"
    assert sorted(settings.accelerators) == ["b200", "gb200"]
    assert settings.queue_name is None
    acc = settings.accelerator("gb200")
    assert acc == settings.accelerator()
    assert (acc.backend, acc.resource_name, acc.device_class_name) == ("extended_resource", "nvidia.com/gpu", None)
    assert acc.gpus_per_node == 4
    assert acc.node_selector == {"nvidia.com/gpu.present": "true"}
    assert acc.queue_name is None and acc.claims == ()
    p = acc.placement
    assert (p.affinity, p.tolerations, p.dns_policy, p.dns_config, p.annotations) == (None, (), None, None, {})
    assert (p.image_pull_policy, p.image_pull_secrets) == (None, ())


def test_settings_of_a_dra_kueue_cluster(dra_cluster):
    settings = workload_settings(dra_cluster)
    assert settings.queue_name == "team-gpu" and settings.priority_class == "batch-low"
    acc = settings.accelerator("gb200")
    assert (acc.backend, acc.resource_name, acc.device_class_name) == ("dra", None, "gpu.nvidia.com")
    assert acc.node_selector == {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-GB200",
                                 "pool": "gpu"}
    assert acc.queue_name == "team-gpu"
    assert acc.claims == (PlatformClaim("compute-domain-channel", "rack-imex-channel"),)
    p = acc.placement
    assert p.image_pull_policy == "IfNotPresent" and p.image_pull_secrets == ("registry-creds",)
    assert p.dns_policy == "ClusterFirst" and p.annotations == {"example.com/owner": "platform"}
    assert p.tolerations == ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
    # The older resource_name shape is an extended resource too; storage and shm are not projected.
    h100 = settings.accelerator("h100")
    assert (h100.backend, h100.resource_name, h100.gpus_per_node, h100.claims) == (
        "extended_resource", "nvidia.com/gpu", 8, ())
    assert not hasattr(p, "shm_size") and not hasattr(settings, "storage")


def test_settings_refuse_unknown_accelerators_and_slurm_clusters(dra_cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(kit.REPO_ROOT)  # the origin is shown relative to the working directory
    with pytest.raises(IncompatiblePairError) as info:
        workload_settings(dra_cluster).accelerator("b300")
    assert scrub(str(info.value), tmp_path) == (
        "<tmp>/dra-rack.yaml:4:3: accelerators.profiles: 'b300' is not offered by cluster 'dra-rack'; it offers: "
        "gb200, h100")
    with pytest.raises(ResolveError) as info:
        workload_settings(load_cluster(kit.REPO_ROOT / "clusters" / "example-slurm.yaml"))
    assert str(info.value) == (
        "clusters/example-slurm.yaml:6:1: platform: cluster 'example-slurm' is a Slurm cluster; workload settings "
        "describe Kubernetes placement")


def test_public_api():
    import manifesto.workload as api

    assert set(api.__all__) >= {"workload_settings", "WorkloadSettings", "AcceleratorSettings", "PlatformClaim"}
    assert all(hasattr(api, n) for n in api.__all__)
