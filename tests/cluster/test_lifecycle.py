"""The lifecycle of a deployment target on the real API, with the real kubectl:
``deploy`` -> ``ready`` -> ``status`` -> ``diff`` (no drift right after deploy: the
server's defaults are not drift) -> a live edit is drift -> ``servers`` -> ``stop``
(deletes everything it created and nothing else), and the owner guard between two users.
"""

from __future__ import annotations

import json

import pytest
import yaml

from realkube import MARKS, Cluster, Manifesto, fail as _fail, grant, ok as _ok

pytestmark = MARKS

NS = "lifecycle"
TARGET = "//:qwen3-0-6b-example-gb200"
INSTANCE = "qwen3-0-6b"
DIGEST = "manifesto.llm-d.ai/artifact-digest"


def _objects(cluster: Cluster, namespace: str) -> set[tuple[str, str]]:
    """(kind, name) of every object of the kinds an instance creates in namespace."""
    kinds = "deployments.apps,services,configmaps,serviceaccounts,roles.rbac.authorization.k8s.io," \
            "rolebindings.rbac.authorization.k8s.io,secrets,inferencepools.inference.networking.k8s.io," \
            "leaderworkersets.leaderworkerset.x-k8s.io"
    items = cluster.get(kinds, "-n", namespace)["items"]
    return {(o["kind"], o["metadata"]["name"]) for o in items}


@pytest.fixture(scope="module")
def workspace(real_cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lifecycle")
    grant(real_cluster, NS, "alice", "bob")
    run = Manifesto(real_cluster, tmp)
    _ok(run("init", "ws", "--model", "qwen/qwen3-0.6b", "--cluster", "example-gb200", "--user", "alice",
            "--namespace", NS, "--context", "alice", cwd=tmp))
    ws = tmp / "ws"
    _ok(run("build", cwd=ws))
    return run, ws


def test_lifecycle_of_a_deployment_target(real_cluster, workspace):
    run, ws = workspace
    # A bystander in the namespace: stop must leave it alone.
    real_cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bystander", "namespace": NS},
         "data": {"k": "v"}}))
    before = _objects(real_cluster, NS)

    _ok(run("deploy", TARGET, "--context", "alice", cwd=ws))
    _ok(run("ready", TARGET, "--context", "alice", "--timeout", "120", cwd=ws))
    pods = real_cluster.get("pods", "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]
    assert pods and all(p["status"]["phase"] == "Running" and p["spec"]["nodeName"] for p in pods)

    # Right after deploy the live objects carry the server's defaults: not drift.
    status = _ok(run("status", TARGET, "--context", "alice", "-o", "json", cwd=ws))
    report = json.loads(status.stdout)
    assert report["status"] == "in-sync", status.stdout
    _ok(run("diff", TARGET, "--context", "alice", cwd=ws))

    # A live edit by someone else is drift, for status (naming the field) and for diff.
    real_cluster.kubectl("-n", NS, "set", "image", f"deployment/{INSTANCE}-decode", "vllm=evil/image:1")
    report = json.loads(_fail(run("status", TARGET, "--context", "alice", "-o", "json", cwd=ws)).stdout)
    assert report["status"] == "drifted"
    drifted = {o["name"]: [d["path"] for d in o["differences"]] for o in report["objects"] if o["status"] != "in-sync"}
    assert drifted == {f"{INSTANCE}-decode": ["spec.template.spec.containers[0].image"]}, drifted
    diff = _fail(run("diff", TARGET, "--context", "alice", cwd=ws))
    assert "evil/image:1" in diff.stdout
    _ok(run("deploy", TARGET, "--context", "alice", cwd=ws))  # puts it back
    _ok(run("diff", TARGET, "--context", "alice", cwd=ws))

    # A field added live, which `kubectl apply` keeps (it is in neither the artifact nor the
    # last-applied annotation), is drift for diff as for status: read from managedFields.
    decode = f"deployment/{INSTANCE}-decode"
    real_cluster.kubectl("-n", NS, "label", decode, "added-live=1")
    real_cluster.kubectl("-n", NS, "set", "env", decode, "-c", "vllm", "ADDED_LIVE=1")
    diff = _fail(run("diff", TARGET, "--context", "alice", cwd=ws))
    assert f"# Deployment {INSTANCE}-decode: metadata.labels.added-live = \"1\", set live by kubectl-label" \
        in diff.stdout, diff.stdout
    assert f"# Deployment {INSTANCE}-decode: spec.template.spec.containers[name=vllm].env[name=ADDED_LIVE] = " \
        '{"name": "ADDED_LIVE", "value": "1"}, set live by kubectl-set' in diff.stdout, diff.stdout
    assert diff.stdout.count("set live by") == 2, diff.stdout
    report = json.loads(_fail(run("status", TARGET, "--context", "alice", "-o", "json", cwd=ws)).stdout)
    drifted = {o["name"]: sorted(d["path"] for d in o["differences"]) for o in report["objects"]
               if o["status"] != "in-sync"}
    assert drifted == {f"{INSTANCE}-decode": ["metadata.labels.added-live",
                                              "spec.template.spec.containers[0].env[name=ADDED_LIVE]"]}, drifted
    real_cluster.kubectl("-n", NS, "label", decode, "added-live-")
    real_cluster.kubectl("-n", NS, "set", "env", decode, "-c", "vllm", "ADDED_LIVE-")
    _ok(run("diff", TARGET, "--context", "alice", cwd=ws))

    servers = json.loads(_ok(run("servers", "-n", NS, "--context", "alice", "-o", "json", cwd=ws)).stdout)
    assert [(s["instance"], s["owner"]) for s in servers] == [(INSTANCE, "alice")], servers

    _ok(run("stop", TARGET, "--context", "alice", cwd=ws))
    gone = real_cluster.get("pods", "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]
    after = _objects(real_cluster, NS)
    # hf-secret stays: it is the namespace's, shared by every instance in it.
    # (an earlier session on a kept cluster may have left it before this one began)
    assert after - {("Secret", "hf-secret")} == before - {("Secret", "hf-secret")}, (before, after)
    assert not [p for p in gone if not p["metadata"].get("deletionTimestamp")]


def test_owner_guard_between_two_users(real_cluster, workspace, tmp_path):
    run, ws = workspace
    _ok(run("deploy", TARGET, "--context", "alice", cwd=ws))
    # bob renders the same release for himself into the same namespace: refused, naming alice.
    spec = "qwen/qwen3-0.6b"
    args = ("--cluster", "example-gb200", "--namespace", NS, "--user", "bob", "--context", "bob")
    refused = _fail(run("deploy", spec, *args, cwd=tmp_path))
    assert "alice" in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    live = real_cluster.get("deployment", f"{INSTANCE}-decode", "-n", NS)
    assert live["metadata"]["labels"]["llm-d.ai/owner"] == "alice"
    # Nor may bob stop alice's instance, by its ID or by the spec, without --take-over.
    for how in (("--instance", INSTANCE, "-n", NS), (spec, "--cluster", "example-gb200", "--namespace", NS)):
        refused = _fail(run("stop", *how, "--user", "bob", "--context", "bob", cwd=tmp_path))
        assert refused.stderr == (f"error: instance {INSTANCE} in namespace {NS} belongs to alice, not bob; pass "
                                  "--take-over to stop it anyway\n"), refused.stderr
    assert real_cluster.get("deployment", f"{INSTANCE}-decode", "-n", NS)["metadata"]["labels"]["llm-d.ai/owner"] \
        == "alice"
    _ok(run("deploy", spec, *args, "--take-over", cwd=tmp_path))
    live = real_cluster.get("deployment", f"{INSTANCE}-decode", "-n", NS)
    assert live["metadata"]["labels"]["llm-d.ai/owner"] == "bob"
    # `deploy SPEC` applies the artifact `render manifest` prints, digest annotation and all.
    rendered = [d for d in yaml.safe_load_all(_ok(run("render", "manifest", spec, *args[:-2], cwd=tmp_path)).stdout)
                if d]
    (digest,) = {d["metadata"]["annotations"][DIGEST] for d in rendered}
    kinds = ",".join(sorted({f"{d['kind'].lower()}s.{d['apiVersion'].rsplit('/', 1)[0]}" if "/" in d["apiVersion"]
                             else f"{d['kind'].lower()}s" for d in rendered}))
    applied = real_cluster.get(kinds, "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]
    assert {(o["kind"], o["metadata"]["name"]) for o in applied} >= {(d["kind"], d["metadata"]["name"])
                                                                    for d in rendered}
    assert {(o["metadata"].get("annotations") or {}).get(DIGEST) for o in applied} == {digest}
    _ok(run("stop", "--instance", INSTANCE, "-n", NS, "--user", "bob", "--context", "bob", cwd=tmp_path))
    # and --take-over stops another's: alice's again, stopped by bob
    _ok(run("deploy", TARGET, "--context", "alice", cwd=ws))
    _ok(run("stop", "--instance", INSTANCE, "-n", NS, "--user", "bob", "--context", "bob", "--take-over",
            cwd=tmp_path))
    assert not real_cluster.get("deployments", "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]


def test_file_workflow(real_cluster, workspace, tmp_path):
    run, _ = workspace
    target = tmp_path / "render.yaml"
    _ok(run("render", "file", "qwen/qwen3-0.6b", "--cluster", "example-gb200", "--namespace", NS,
            "--user", "alice", "-o", str(target), cwd=tmp_path))
    # Before the first apply, as alice (no `bind` verb): the RoleBinding whose Role is new too
    # cannot be dry-run (the API server checks it against the live Role); it is shown as new.
    first = _fail(run("file", "diff", str(target), "--context", "alice", cwd=tmp_path))
    assert f"# RoleBinding {INSTANCE}-idle-shutdown: new, not in the dry run above" in first.stdout, first.stdout
    assert f"Deployment.{NS}.{INSTANCE}-decode" in first.stdout and not first.stderr.startswith("error"), first.stderr
    _ok(run("file", "apply", str(target), "--context", "alice", cwd=tmp_path))
    _ok(run("file", "diff", str(target), "--context", "alice", cwd=tmp_path))
    real_cluster.kubectl("-n", NS, "scale", f"deployment/{INSTANCE}-decode", "--replicas=3")
    _fail(run("file", "diff", str(target), "--context", "alice", cwd=tmp_path))
    _ok(run("file", "delete", str(target), "--context", "alice", "--now", cwd=tmp_path))
    assert not real_cluster.get("deployments", "-n", NS, "-l", f"app.kubernetes.io/instance={INSTANCE}")["items"]


def test_a_user_without_rights_gets_one_clear_error(real_cluster, workspace, tmp_path):
    run, _ = workspace
    real_cluster.ensure_namespace("no-rights")
    proc = _fail(run("servers", "-n", "no-rights", "--context", "bob", cwd=tmp_path))
    assert "forbidden" in proc.stderr.lower() and "bob" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
