"""`manifesto test e2e` against the scripted fake kubectl (tests/fake_kubectl.py).

The shipped fake has what the e2e lifecycle needs: ``create -f -`` (Namespace, Job),
``delete namespace``, ``logs``, and pods that become ready after their workload is applied.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifesto.cli import main

from kubefake import FAKE, TOKEN, FakeCluster, install

ROOT = Path(__file__).resolve().parents[2]
GB200 = str(ROOT / "clusters/example-gb200.yaml")
QWEN = str(ROOT / "models/qwen/qwen3-0.6b.yaml")
AGG = str(ROOT / "models/qwen/aggregated.yaml")
NS = "e2e-ns"



@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


def _e2e(fake: FakeCluster, spec: str, *extra: str) -> tuple[int, str, str]:
    return fake.run("test", "e2e", spec, "--cluster", GB200, "--user", "u", "--interval", "0", *extra)


def _gateway_spec(tmp_path: Path) -> str:
    path = tmp_path / "aggregated-gateway.yaml"
    path.write_text(Path(AGG).read_text().replace("routing: {kind: load_aware, target_role: decode}",
                                                  "routing: {kind: load_aware, target_role: decode, frontend: gateway}"))
    return str(path)


def _verbs(fake: FakeCluster) -> list[str]:
    out = []
    for argv in fake.argvs():
        words = [a for a in argv if not a.startswith("-")]
        words = words[1:] if argv[:1] == ["-n"] else words
        out.append(" ".join(words[:2]))
    return out


@pytest.mark.integration
def test_exact_lifecycle_argv(fake):
    rc, out, err = _e2e(fake, QWEN, "--namespace", NS)
    assert rc == 0, err
    sel = "app.kubernetes.io/managed-by=manifesto,app.kubernetes.io/instance=qwen3-0-6b"
    argvs = fake.argvs(owner_reads=False)
    # the three workload listings of deploy run concurrently, so their order is free
    assert sorted(argvs[2:5]) == [["-n", NS, "get", "deployments.apps", "-l", sel, "-o", "json"],
                                  ["-n", NS, "get", "disaggregatedsets.disaggregatedset.x-k8s.io", "-l", sel, "-o",
                                   "json"],
                                  ["-n", NS, "get", "leaderworkersets.leaderworkerset.x-k8s.io", "-l", sel, "-o", "json"]]
    assert argvs[:2] + argvs[5:] == [
        ["create", "-f", "-"],  # the namespace; create refuses an existing one
        ["-n", NS, "apply", "-f", "-"],  # hf-secret over stdin
        ["-n", NS, "apply", "-f", "-"],
        ["-n", NS, "get", "pods", "-l", sel, "-o", "json"],  # ready: the fake's pods are not Ready yet
        ["-n", NS, "get", "pods", "-l", sel, "-o", "json"],  # ... and now they are
        ["-n", NS, "create", "-f", "-"],  # the Job
        ["-n", NS, "get", "jobs.batch", "qwen3-0-6b-e2e", "-o", "json"],
        ["-n", NS, "logs", "job/qwen3-0-6b-e2e", "--all-containers"],
        ["delete", "namespace", NS, "--ignore-not-found", "--wait=false"],
    ]
    calls = [c for c in fake.calls() if "--ignore-not-found" not in c["argv"] or "get" not in c["argv"]]
    secret = json.loads(calls[1]["stdin"])
    assert secret["kind"] == "Secret" and secret["stringData"]["HF_TOKEN"] == TOKEN
    assert all(TOKEN not in " ".join(c["argv"]) for c in calls)
    namespace = json.loads(calls[0]["stdin"])
    assert namespace["kind"] == "Namespace" and namespace["metadata"]["name"] == NS
    assert "fake kubectl: job/qwen3-0-6b-e2e ran no container: there is no cluster" in out  # the Job's logs
    assert not [o for o in fake.state["objects"] if o["metadata"].get("namespace") == NS]


@pytest.mark.integration
def test_storage_swapped_to_empty_dir_except_shm(fake):
    assert _e2e(fake, QWEN, "--namespace", NS)[0] == 0
    deployment = next(o for o in fake.applied() if o["metadata"]["name"] == "qwen3-0-6b-decode")
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["shared"] == {"name": "shared", "emptyDir": {}}
    assert volumes["local-nvme"] == {"name": "local-nvme", "emptyDir": {}}
    assert volumes["dshm"]["emptyDir"]["medium"] == "Memory"
    assert all(o["metadata"].get("namespace") in (NS, None) for o in fake.applied())


def test_swap_keeps_exporter_host_mounts():
    from manifesto.ops.e2e import swap_storage

    pod = {"containers": [
        {"name": "vllm", "volumeMounts": [{"name": "shared", "mountPath": "/mnt"}, {"name": "dshm", "mountPath": "/dev/shm"}]},
        {"name": "node-exporter", "volumeMounts": [{"name": "host-sys", "mountPath": "/host/sys"}]}],
        "volumes": [{"name": "shared", "hostPath": {"path": "/mnt"}}, {"name": "dshm", "hostPath": {"path": "/dev/shm"}},
                    {"name": "host-sys", "hostPath": {"path": "/sys"}}]}
    lws = {"kind": "LeaderWorkerSet", "spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": pod}}}}
    out = swap_storage([lws])
    vols = out[0]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["volumes"]
    assert [list(v)[1] for v in vols] == ["emptyDir", "hostPath", "hostPath"]
    assert pod["volumes"][0] == {"name": "shared", "hostPath": {"path": "/mnt"}}  # input untouched


@pytest.mark.integration
def test_vllm_env_keeps_profile_storage(fake):
    rc, _, err = _e2e(fake, QWEN, "--namespace", NS, "--vllm-env", "/mnt/shared/u/vllm-envs/feature")
    assert rc == 0, err
    deployment = next(o for o in fake.applied() if o["metadata"]["name"] == "qwen3-0-6b-decode")
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert "persistentVolumeClaim" in volumes["shared"] and "hostPath" in volumes["local-nvme"]


def _job_url(job: dict) -> str:
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    return env["MANIFESTO_E2E_URL"]


@pytest.mark.integration
def test_job_targets_per_routing_mode(fake, tmp_path):
    assert _e2e(fake, QWEN, "--namespace", "a")[0] == 0
    assert _job_url(fake.created("Job")) == "http://qwen3-0-6b-decode-http.a.svc:8000"
    (fake.dir / "calls.jsonl").unlink()
    assert _e2e(fake, AGG, "--namespace", "b")[0] == 0
    assert _job_url(fake.created("Job")) == "http://qwen3-30b-infpool-epp.b.svc:80"
    (fake.dir / "calls.jsonl").unlink()
    rc, _, err = _e2e(fake, _gateway_spec(tmp_path), "--namespace", "c")
    assert rc == 0, err
    assert _job_url(fake.created("Job")) == "http://qwen3-30b-gateway-istio.c.svc:80"


@pytest.mark.integration
def test_job_is_unprivileged_cpu_only_and_deterministic(fake):
    assert _e2e(fake, AGG, "--namespace", NS, "--timeout", "42", "--image", "mirror.local/python:3.12")[0] == 0
    job = fake.created("Job")
    assert job["apiVersion"] == "batch/v1" and job["metadata"]["name"] == "qwen3-30b-e2e"
    pod = job["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert c["image"] == "mirror.local/python:3.12"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert set(c["resources"]["limits"]) == {"cpu", "memory"}
    assert not any("kueue" in k for k in json.dumps(job["metadata"]["labels"]).split('"'))
    assert {"name": "MANIFESTO_E2E_TIMEOUT", "value": "42"} in c["env"]
    assert job["spec"]["activeDeadlineSeconds"] == 42  # --timeout bounds the Job, image pull included
    script = c["command"][-1]
    assert "/v1/models" in script and "/v1/completions" in script and "max_tokens" in script
    compile(script, "e2e", "exec")


@pytest.mark.integration
def test_default_image_and_random_namespace_only_in_name(fake):
    rc, _, err = _e2e(fake, QWEN)
    assert rc == 0, err
    ns = json.loads(fake.calls()[0]["stdin"])["metadata"]["name"]
    assert ns.startswith("manifesto-e2e-qwen3-0-6b-") and len(ns) <= 63
    job = fake.created("Job")
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "python:3.12-alpine"
    first = json.dumps(job).replace(ns, "NS")
    (fake.dir / "calls.jsonl").unlink()
    assert _e2e(fake, QWEN)[0] == 0
    ns2 = json.loads(fake.calls()[0]["stdin"])["metadata"]["name"]
    assert ns2 != ns and json.dumps(fake.created("Job")).replace(ns2, "NS") == first


@pytest.mark.integration
def test_gateway_timeout_fails_a_frontend_that_never_comes_and_cleans_up(fake, tmp_path):
    fake.configure(gateway_programmed=False)  # the model pods turn Ready; the Gateway never is programmed
    rc, _, err = _e2e(fake, _gateway_spec(tmp_path), "--namespace", NS, "--gateway-timeout", "0")
    assert rc == 1
    assert err.splitlines()[-1] == ("error: qwen3-30b: the model pods are ready but the routing frontend is not 0s "
                                    "later (--gateway-timeout): Gateway qwen3-30b-gateway not programmed")
    assert "create" not in [a for argv in fake.argvs()[1:] for a in argv]  # no Job was created
    assert fake.argvs()[-1] == ["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]


@pytest.mark.integration
def test_cleanup_on_job_failure(fake):
    fake.configure(job_fails=True, logs="e2e: FAIL: /v1/completions answered HTTP 400")
    rc, out, err = _e2e(fake, QWEN, "--namespace", NS)
    assert rc == 1
    assert "HTTP 400" in out
    assert err.splitlines()[-2:] == ["manifesto: deleting namespace e2e-ns",
                                     "error: e2e Job qwen3-0-6b-e2e in namespace e2e-ns failed: BackoffLimitExceeded"]
    assert fake.argvs()[-1] == ["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]


@pytest.mark.integration
def test_cleanup_on_deploy_failure(fake):
    fake.configure(fail={"apply": {"times": 1, "stderr": "error: forbidden", "rc": 1}})
    rc, _, err = _e2e(fake, QWEN, "--namespace", NS)
    assert (rc, err) == (1, "manifesto: created namespace e2e-ns\nmanifesto: deleting namespace e2e-ns\n"
                            "error: could not create or update hf-secret in namespace e2e-ns (kubectl apply exit 1)\n")
    assert fake.argvs()[-1] == ["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]
    assert "create" not in [a for argv in fake.argvs()[1:] for a in argv]


@pytest.mark.integration
def test_keep_namespace(fake):
    rc, _, err = _e2e(fake, QWEN, "--namespace", NS, "--keep-namespace")
    assert rc == 0, err
    assert not any("namespace" in argv and "delete" in argv for argv in fake.argvs())
    assert "keeping namespace e2e-ns" in err
    assert [o["metadata"]["name"] for o in fake.state["objects"] if o["kind"] == "Job"] == ["qwen3-0-6b-e2e"]


@pytest.mark.integration
def test_existing_namespace_refused_and_not_deleted(fake):
    fake.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    rc, _, err = _e2e(fake, QWEN, "--namespace", NS)
    assert (rc, err) == (1, "error: namespace e2e-ns already exists; test e2e needs a fresh namespace "
                            "(pass another --namespace or omit it)\n")
    assert fake.argvs() == [["create", "-f", "-"]]
    assert any(o["kind"] == "Namespace" for o in fake.state["objects"])


def test_missing_hf_token(fake, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    rc, _, err = _e2e(fake, QWEN, "--namespace", NS)
    assert (rc, err) == (1, "error: HF_TOKEN is not set; set it in the environment or .env (test e2e creates "
                            "hf-secret in its namespace)\n")
    assert fake.argvs() == []


def test_bad_namespace_name(fake):
    rc, _, err = _e2e(fake, QWEN, "--namespace", "Bad_Name")
    assert (rc, err) == (1, "error: namespace 'Bad_Name' is not a valid DNS label (lower-case letters, digits "
                            "and '-', at most 63 characters)\n")
    assert fake.argvs() == []


def test_default_namespace_is_a_dns_label():
    from manifesto.ops.e2e import default_namespace

    name = default_namespace("x" * 80, "abc123")
    assert len(name) <= 63 and name.endswith("-abc123") and name.startswith("manifesto-e2e-x")


@pytest.mark.integration
def test_timeout_bounds_the_whole_wait_for_the_job(fake):
    """A Job that is never scheduled (an image that never pulls) fails at --timeout, with no
    pull allowance added on top."""
    fake.configure(job_hangs=True)
    rc, _, err = _e2e(fake, AGG, "--namespace", NS, "--timeout", "1")
    assert rc == 1
    assert f"error: e2e Job qwen3-30b-e2e in namespace {NS} failed: not finished after 1s\n" in err, err


@pytest.mark.integration
def test_a_completion_is_claimed_only_when_the_probe_says_pass(fake):
    rc, _, err = _e2e(fake, QWEN, "--namespace", NS)
    assert rc == 0 and "served a completion" not in err and "no `e2e: PASS` line" in err, err
    fake.configure(logs="e2e: /v1/completions (Qwen/Qwen3-0.6B): ' hi'\ne2e: PASS")
    rc, out, err = _e2e(fake, QWEN, "--namespace", NS)
    assert rc == 0 and out.endswith("e2e: PASS\n"), out
    assert f"e2e passed: qwen3-0-6b served a completion in namespace {NS}" in err
