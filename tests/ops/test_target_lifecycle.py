"""Deployment targets end to end against the fake kubectl: build, deploy, diff, status, stop
from out/, with the wrong-context and stale-artifact refusals and drift detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifesto.cli import main

from kubefake import FAKE, TOKEN, FakeCluster, install

pytestmark = pytest.mark.integration  # every test here starts processes

ROOT = Path(__file__).resolve().parents[2]
BUILD = """\
options:
  default: {user: ci, namespace: ci}
targets:
  - kind: cluster
    path: clusters
    sources: ["*.yaml"]
  - kind: model
    path: models
    sources: ["**/*.yaml"]
  - kind: deployment
    name: qwen-demo
    model: //models/qwen:qwen3-0.6b
    cluster: lab
    namespace: demo
    user: alice
    context: lab-admin
"""


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


@pytest.fixture
def ws(fake, tmp_path, monkeypatch) -> Path:
    root = tmp_path / "ws"
    (root / "models/qwen").mkdir(parents=True)
    (root / "clusters").mkdir()
    (root / "BUILD.yaml").write_text(BUILD)
    (root / "models/qwen/qwen3-0.6b.yaml").write_text((ROOT / "models/qwen/qwen3-0.6b.yaml").read_text())
    (root / "clusters/lab.yaml").write_text((ROOT / "clusters/example-gb200.yaml").read_text()
                                            .replace("name: example-gb200", "name: lab"))
    monkeypatch.chdir(root)
    fake.configure(current_context="lab-admin")
    assert fake.run("build", "//:qwen-demo")[0] == 0
    return root


def _live(fake, kind: str, name: str) -> dict:
    return next(o for o in fake.state["objects"] if o["kind"] == kind and o["metadata"]["name"] == name)


def test_deploy_applies_exactly_the_artifact_bytes(fake, ws):
    rc, out, err = fake.run("deploy", "//:qwen-demo")
    assert rc == 0, err
    text = (ws / "out/deploy/qwen-demo.yaml").read_text()
    applies = [c for c in fake.calls() if "apply" in c["argv"]]
    secret, manifest = applies
    assert secret["argv"] == ["--context", "lab-admin", "-n", "demo", "apply", "-f", "-"]
    assert json.loads(secret["stdin"])["stringData"] == {"HF_TOKEN": TOKEN}
    assert manifest["argv"] == ["--context", "lab-admin", "-n", "demo", "apply", "-f", "-"]
    assert manifest["stdin"] == text
    assert TOKEN not in text and all(TOKEN not in " ".join(c["argv"]) for c in fake.calls())
    assert _live(fake, "Deployment", "qwen3-0-6b-decode")["metadata"]["namespace"] == "demo"
    assert _live(fake, "Deployment", "qwen3-0-6b-decode")["metadata"]["labels"]["llm-d.ai/owner"] == "alice"


def test_the_out_path_names_the_same_target(fake, ws):
    rc, _, err = fake.run("deploy", "out/deploy/qwen-demo.yaml")
    assert rc == 0, err
    assert fake.run("status", str(ws / "out/deploy/qwen-demo.yaml"))[0] == 0


def test_an_address_without_its_leading_slashes_names_the_target(fake, ws):
    rc, _, err = fake.run("deploy", ":qwen-demo")
    assert rc == 0, err
    rc, out, err = fake.run("status", ":qwen-demo")
    assert rc == 0, err


def test_status_reports_missing_in_sync_and_drifted(fake, ws):
    rc, out, _ = fake.run("status", "//:qwen-demo")
    assert rc == 1 and out.startswith("//:qwen-demo  missing  (qwen3-0-6b in namespace demo, context lab-admin")
    fake.run("deploy", "//:qwen-demo")
    rc, out, _ = fake.run("status", "//:qwen-demo")
    assert rc == 0 and out.startswith("//:qwen-demo  in-sync")
    assert "drifted" not in out and "missing" not in out

    # Someone edits a live object: the digest still matches, the content does not.
    state = fake.state
    live = next(o for o in state["objects"] if o["kind"] == "Deployment" and o["metadata"]["name"] == "qwen3-0-6b-decode")
    live["spec"]["replicas"] = 3
    fake._write(state)
    rc, out, _ = fake.run("status", "//:qwen-demo", "-o", "json")
    report = json.loads(out)
    assert rc == 1 and report["status"] == "drifted"
    drifted = [o for o in report["objects"] if o["status"] != "in-sync"]
    assert drifted == [{"kind": "Deployment", "name": "qwen3-0-6b-decode", "status": "drifted",
                        "detail": "spec.replicas: live 3, desired 1",
                        "differences": [{"path": "spec.replicas", "live": 3, "desired": 1}]}]
    rc, out, _ = fake.run("servers", "//:qwen-demo")
    assert rc == 1 and out.startswith("//:qwen-demo  drifted")
    assert fake.run("diff", "//:qwen-demo")[0] == 1


def _edit_live(fake, kind: str, name: str, edit) -> None:
    state = fake.state
    edit(next(o for o in state["objects"] if o["kind"] == kind and o["metadata"]["name"] == name))
    fake._write(state)


def test_the_fake_stores_objects_with_the_api_servers_defaults(fake, ws):
    """The fake answers like an API server, so in-sync right after deploy is not a tautology."""
    fake.run("deploy", "//:qwen-demo")
    live = _live(fake, "Deployment", "qwen3-0-6b-decode")
    pod = live["spec"]["template"]["spec"]
    assert (live["spec"]["revisionHistoryLimit"], live["spec"]["progressDeadlineSeconds"]) == (10, 600)
    assert (pod["dnsPolicy"], pod["schedulerName"], pod["securityContext"]) == ("ClusterFirst", "default-scheduler", {})
    assert pod["containers"][0]["terminationMessagePath"] == "/dev/termination-log"
    assert live["metadata"]["uid"] and live["metadata"]["generation"] == 1 and "status" in live
    assert live["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    service = next(o for o in fake.state["objects"] if o["kind"] == "Service")
    assert service["spec"]["sessionAffinity"] == "None" and service["spec"]["clusterIP"].startswith("10.96.")
    rc, out, err = fake.run("status", "//:qwen-demo")
    assert rc == 0 and out.startswith("//:qwen-demo  in-sync"), out + err


def test_the_deprecated_service_account_alias_the_server_adds_is_not_drift(fake, ws):
    """The real API server (tests/cluster) copies a pod template's serviceAccountName into
    the deprecated ``serviceAccount``; status once called that drift right after deploy. An
    alias that names another account is drift."""
    fake.run("deploy", "//:qwen-demo")
    pod = _live(fake, "Deployment", "qwen3-0-6b-idle-shutdown")["spec"]["template"]["spec"]
    assert pod["serviceAccount"] == pod["serviceAccountName"] == "qwen3-0-6b-idle-shutdown"
    rc, out, err = fake.run("status", "//:qwen-demo")
    assert rc == 0 and out.startswith("//:qwen-demo  in-sync"), out + err
    _edit_live(fake, "Deployment", "qwen3-0-6b-idle-shutdown",
               lambda o: o["spec"]["template"]["spec"].update(serviceAccount="default"))
    rc, out, _ = fake.run("status", "//:qwen-demo", "-o", "json")
    (obj,) = [o for o in json.loads(out)["objects"] if o["status"] != "in-sync"]
    assert rc == 1 and obj["differences"] == [
        {"path": "spec.template.spec.serviceAccount", "live": "default", "desired": None}]


def test_dangerous_live_edits_are_drift_and_each_field_is_named(fake, ws):
    fake.run("deploy", "//:qwen-demo")

    def edit(obj):
        pod = obj["spec"]["template"]["spec"]
        pod["hostNetwork"] = True
        pod["containers"][0]["securityContext"] = {"privileged": True}
        pod["nodeSelector"]["kubernetes.io/hostname"] = "node-7"

    _edit_live(fake, "Deployment", "qwen3-0-6b-decode", edit)
    rc, out, _ = fake.run("status", "//:qwen-demo")
    assert rc == 1 and out.startswith("//:qwen-demo  drifted")
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if "Deployment/qwen3-0-6b-decode" in line))
    assert lines[at].split()[1:] == ["drifted"]
    assert lines[at + 1:at + 4] == [
        '      spec.template.spec.containers[0].securityContext: live {"privileged": true}, desired (absent)',
        '      spec.template.spec.nodeSelector.kubernetes.io/hostname: live "node-7", desired (absent)',
        "      spec.template.spec.hostNetwork: live true, desired (absent)",
    ]


def test_extra_containers_and_volumes_are_drift(fake, ws):
    fake.run("deploy", "//:qwen-demo")

    def edit(obj):
        pod = obj["spec"]["template"]["spec"]
        pod["containers"].append({"name": "miner", "image": "evil/miner:1"})
        pod["volumes"].append({"name": "host-root", "hostPath": {"path": "/"}})

    _edit_live(fake, "Deployment", "qwen3-0-6b-decode", edit)
    rc, out, _ = fake.run("status", "//:qwen-demo", "-o", "json")
    (obj,) = [o for o in json.loads(out)["objects"] if o["status"] != "in-sync"]
    assert rc == 1 and obj["differences"] == [
        {"path": "spec.template.spec.containers[name=miner]", "live": {"name": "miner", "image": "evil/miner:1"},
         "desired": None},
        {"path": "spec.template.spec.volumes[name=host-root]", "live": {"name": "host-root", "hostPath": {"path": "/"}},
         "desired": None},
    ]


def test_a_changed_server_default_is_drift(fake, ws):
    """A field the artifact leaves to the server is drift once someone sets it to another value."""
    fake.run("deploy", "//:qwen-demo")
    _edit_live(fake, "Deployment", "qwen3-0-6b-decode",
               lambda o: o["spec"]["template"]["spec"].update(dnsPolicy="None", restartPolicy="Always"))
    rc, out, _ = fake.run("status", "//:qwen-demo", "-o", "json")
    (obj,) = [o for o in json.loads(out)["objects"] if o["status"] != "in-sync"]
    assert rc == 1 and obj["differences"] == [
        {"path": "spec.template.spec.dnsPolicy", "live": "None", "desired": None}]


def test_a_workload_scaled_to_zero_by_idle_shutdown_is_idle_not_drifted(fake, ws):
    fake.run("deploy", "//:qwen-demo")
    _edit_live(fake, "Deployment", "qwen3-0-6b-decode", lambda o: o["spec"].update(replicas=0))
    rc, out, err = fake.run("status", "//:qwen-demo")
    assert rc == 0, out + err
    assert out.startswith("//:qwen-demo  idle  (qwen3-0-6b")
    assert "  Deployment/qwen3-0-6b-decode" in out and "idle  scaled to 0 by the idle-shutdown controller" in out
    # Idle and edited: drifted, naming the edit only.
    _edit_live(fake, "Deployment", "qwen3-0-6b-decode",
               lambda o: o["spec"]["template"]["spec"].update(hostNetwork=True))
    rc, out, _ = fake.run("status", "//:qwen-demo", "-o", "json")
    (obj,) = [o for o in json.loads(out)["objects"] if o["status"] != "in-sync"]
    assert rc == 1 and obj["differences"] == [
        {"path": "spec.template.spec.hostNetwork", "live": True, "desired": None}]


def test_replicas_zero_without_an_idle_controller_is_drift():
    """Only an artifact that runs the idle-shutdown controller explains a workload at 0."""
    from manifesto.ops.targets import object_states, parse_objects

    objs = [o for o in parse_objects((ROOT / "out/deploy/qwen-demo.yaml").read_text())
            if "idle-shutdown" not in o["metadata"]["name"]]
    (deployment,) = [o for o in objs if o["kind"] == "Deployment"]
    live = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    live[("Deployment", deployment["metadata"]["name"])] = {**deployment, "spec": {**deployment["spec"], "replicas": 0}}
    states = {(k, s) for k, _, s, _ in object_states(objs, live)}
    assert ("Deployment", "drifted") in states and ("Deployment", "idle") not in states


def test_server_and_controller_fields_are_not_drift(fake, ws):
    fake.run("deploy", "//:qwen-demo")
    fake.run("deploy", "//:qwen-demo")  # a second apply: new resourceVersion, same generation

    def edit(obj):
        obj["status"] = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
        obj["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "4"
        obj["metadata"]["resourceVersion"] = "99999"
        obj["metadata"]["managedFields"].append({"manager": "kube-controller-manager"})

    _edit_live(fake, "Deployment", "qwen3-0-6b-decode", edit)
    rc, out, err = fake.run("status", "//:qwen-demo")
    assert rc == 0 and out.startswith("//:qwen-demo  in-sync"), out + err


def test_kubeconfig_from_the_user_dotenv_reaches_every_kubectl_call(fake, ws, monkeypatch):
    import os

    monkeypatch.delenv("KUBECONFIG", raising=False)
    user_env = Path(os.environ["MANIFESTO_CONFIG_HOME"]) / ".env"
    user_env.parent.mkdir(parents=True, exist_ok=True)
    user_env.write_text("KUBECONFIG=/home/alice/.kube/lab.yaml\n")
    fake.reset_log()
    rc, _, err = fake.run("deploy", "//:qwen-demo")
    assert rc == 0, err
    assert fake.argvs()[0] == ["config", "current-context"]
    assert {c["kubeconfig"] for c in fake.calls()} == {"/home/alice/.kube/lab.yaml"}


def test_a_workspace_dotenv_cannot_pick_the_kubeconfig(fake, ws, monkeypatch):
    """A kubeconfig can run programs (exec credential plugins), and a workspace's .env can come
    with a clone: only the user's own settings choose it."""
    import os

    monkeypatch.delenv("KUBECONFIG", raising=False)
    (ws / ".env").write_text("MANIFESTO_NAMESPACE=demo\nKUBECONFIG=/tmp/planted-kubeconfig\n")
    fake.reset_log()
    rc, _, err = fake.run("deploy", "//:qwen-demo")
    assert rc == 0, err
    user = Path(os.environ["MANIFESTO_CONFIG_HOME"]) / ".env"
    assert err.splitlines()[0] == (f"warning: .env:2: KUBECONFIG is ignored: a workspace's .env may not set it (a "
                                   f"kubeconfig can run programs through exec credential plugins); set it in the "
                                   f"environment or in {user}")
    assert err.count("KUBECONFIG is ignored") == 1
    assert "/tmp/planted-kubeconfig" not in {c["kubeconfig"] for c in fake.calls()}


def test_a_missing_kubectl_is_named_not_read_as_no_context(fake, ws, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    rc, _, err = fake.run("status", "//:qwen-demo")
    assert (rc, err) == (1, "error: kubectl not found on PATH; install kubectl to use cluster commands\n")


def test_a_kubectl_killed_by_a_signal_is_named(fake, ws):
    fake.configure(signal={"config current-context": 9})
    rc, _, err = fake.run("deploy", "//:qwen-demo")
    assert (rc, err) == (1, "error: could not read the current kube context: `kubectl config current-context` "
                            "failed: killed by signal SIGKILL\n")
    assert not [c for c in fake.calls() if "apply" in c["argv"]]


def test_no_current_context_is_said_plainly(fake, ws):
    fake.configure(current_context=None)
    rc, _, err = fake.run("deploy", "//:qwen-demo")
    assert (rc, err) == (1, "error: //:qwen-demo belongs to kube context 'lab-admin', but no kube context is "
                            "current; switch with `kubectl config use-context lab-admin` or pass --context "
                            "lab-admin\n")


def test_an_object_applied_from_another_artifact_is_drifted(fake, ws):
    fake.run("deploy", "//:qwen-demo")
    state = fake.state
    live = next(o for o in state["objects"] if o["kind"] == "Service")
    live["metadata"]["annotations"]["manifesto.llm-d.ai/artifact-digest"] = "sha256:0000"
    fake._write(state)
    rc, out, _ = fake.run("status", "//:qwen-demo")
    assert rc == 1 and f"Service/{live['metadata']['name']}" in out
    assert "applied from another artifact (sha256:0000)" in out


def test_diff_is_clean_after_deploy(fake, ws):
    assert fake.run("diff", "//:qwen-demo")[0] == 1
    fake.run("deploy", "//:qwen-demo")
    fake.reset_log()
    rc, _, err = fake.run("diff", "//:qwen-demo")
    assert rc == 0 and "no differences" in err
    # diff reads the workloads the idle-shutdown controller scales (none is idle here), changes nothing
    # and the live objects by name with their managedFields (drift kubectl diff cannot see)
    selector = "app.kubernetes.io/managed-by=manifesto,app.kubernetes.io/instance=qwen3-0-6b"
    first, idle, *by_name, last = fake.argvs()
    assert [first, idle, last] == [["config", "current-context"],
                                   ["--context", "lab-admin", "-n", "demo", "get", "deployments.apps", "-l", selector,
                                    "-o", "json"],
                                   ["--context", "lab-admin", "-n", "demo", "diff", "-f",
                                    str(ws / "out/deploy/qwen-demo.yaml")]]
    assert by_name and all(a[4] == "get" and a[-3:] == ["--show-managed-fields", "-o", "json"] for a in by_name)


def test_the_wrong_context_is_refused_before_any_change(fake, ws):
    fake.configure(current_context="prod-admin")
    fake.reset_log()
    for command in ("deploy", "diff", "status", "stop"):
        rc, _, err = fake.run(command, "//:qwen-demo")
        assert rc == 1
        assert err == ("error: //:qwen-demo belongs to kube context 'lab-admin', but the current kube context is "
                       "'prod-admin'; switch with `kubectl config use-context lab-admin` or pass --context lab-admin\n")
    assert all(c["argv"][:2] == ["config", "current-context"] for c in fake.calls())
    rc, _, err = fake.run("deploy", "//:qwen-demo", "--context", "other")
    assert rc == 1 and "but --context is 'other'" in err
    rc, _, err = fake.run("deploy", "//:qwen-demo", "--context", "lab-admin")
    assert rc == 0, err


def test_a_stale_artifact_is_refused_with_the_fix(fake, ws):
    spec = ws / "models/qwen/qwen3-0.6b.yaml"
    spec.write_text(spec.read_text().replace("max_model_len: 8192", "max_model_len: 4096"))
    fake.reset_log()
    for _ in range(2):  # the second refusal says "stale" too, not "hand-edited" (issue 15)
        rc, _, err = fake.run("deploy", "//:qwen-demo")
        assert rc == 1
        assert err == ("error: out/deploy/qwen-demo.yaml: stale: its inputs changed since it was built; run "
                       "`manifesto build //:qwen-demo` first (or pass --build to build it now)\n")
    assert fake.calls() == []
    rc, _, err = fake.run("deploy", "//:qwen-demo", "--build")
    assert rc == 0, err
    assert "#     max_model_len: 4096\n" in (ws / "out/deploy/qwen-demo.yaml").read_text()
    assert "max_model_len: 4096" in next(c["stdin"] for c in fake.calls() if c["argv"][-3:] == ["apply", "-f", "-"]
                                         and "kind: Deployment" in (c["stdin"] or ""))


def test_a_hand_edited_artifact_is_refused(fake, ws):
    path = ws / "out/deploy/qwen-demo.yaml"
    path.write_text(path.read_text().replace("namespace: demo", "namespace: other"))
    rc, _, err = fake.run("deploy", "//:qwen-demo")
    assert rc == 1 and "out/deploy/qwen-demo.yaml: hand-edited" in err


def test_dry_run_prints_the_calls_and_runs_none(fake, ws):
    fake.reset_log()
    rc, out, _ = fake.run("deploy", "//:qwen-demo", "--dry-run")
    assert rc == 0
    assert out == ("kubectl --context lab-admin -n demo apply -f -  # stdin: Secret hf-secret from $HF_TOKEN\n"
                   "kubectl --context lab-admin -n demo apply -f - < out/deploy/qwen-demo.yaml\n")
    assert [c["argv"] for c in fake.calls()] == [["config", "current-context"]]


def test_dry_run_stops_where_deploy_would_without_hf_token(fake, ws, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    expected = (1, "error: HF_TOKEN is not set; set it in the environment or .env so hf-secret can be created in "
                   "namespace demo\n")
    rc, out, err = fake.run("deploy", "//:qwen-demo", "--dry-run")
    assert ((rc, err), out) == (expected, "")
    rc, _, err = fake.run("deploy", "//:qwen-demo")
    assert (rc, err) == expected
    (ws / ".env").write_text("HF_TOKEN=hf_from_dotenv\n")
    assert fake.run("deploy", "//:qwen-demo", "--dry-run")[0] == 0


def test_stop_deletes_the_target_instance(fake, ws):
    fake.run("deploy", "//:qwen-demo")
    rc, _, err = fake.run("stop", "//:qwen-demo")
    assert rc == 0, err
    assert [o for o in fake.state["objects"] if o["kind"] != "Secret"] == []
    rc, out, _ = fake.run("status", "//:qwen-demo")
    assert rc == 1 and out.startswith("//:qwen-demo  missing")


def test_target_flags_that_the_target_fixes_are_refused(fake, ws):
    rc, _, err = fake.run("deploy", "//:qwen-demo", "--namespace", "x")
    assert rc == 1 and err.startswith("error: --namespace: //:qwen-demo is a deployment target")


def test_a_model_address_or_matrix_artifact_is_not_deployable(fake, ws):
    rc, _, err = fake.run("deploy", "//models/qwen:qwen3-0.6b")
    assert rc == 1 and "is a model target, not a deployment target (deployment targets: //:qwen-demo)" in err
    fake.run("build", "//models/qwen:qwen3-0.6b", "--cluster", "lab")
    rc, _, err = fake.run("deploy", "out/lab/qwen/qwen3-0.6b.yaml")
    assert rc == 1 and "is a matrix artifact of the build" in err


def test_a_file_outside_out_is_one_clear_error_not_a_traceback(fake, ws):
    """`status FILE` takes a deployment target: a spec, or any file not below a workspace's
    out/, is refused with the forms it takes (it used to crash unpacking None)."""
    for ref, what in (("models/qwen/qwen3-0.6b.yaml", "is not a file below a workspace's out/"),
                      ("no-such-file.yaml", "is no file")):
        for command in ("status", "diff"):
            rc, out, err = fake.run(command, ref)
            assert rc == 1 and out == "" and "Traceback" not in err, (command, err)
            assert err == (f"error: {ref} {what} and not a build address; name a deployment target "
                           "(`kind: deployment` in BUILD.yaml) by its address, e.g. //:NAME, or by its artifact "
                           "out/deploy/NAME.yaml\n"), (command, err)
    assert fake.calls() == []  # refused before any kubectl call


def test_ready_waits_for_the_target_plan(fake, ws):
    fake.run("deploy", "//:qwen-demo")
    rc, _, err = fake.run("ready", "//:qwen-demo", "--timeout", "0")
    assert rc == 1
    assert err == ("manifesto: waiting up to 0s for qwen3-0-6b in namespace demo: 1 decode pod(s)\n"
                   "error: qwen3-0-6b not ready after 0s: role decode: 0/1 pods ready\n")
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "qwen3-0-6b-decode-0", "namespace": "demo",
                        "labels": {**_live(fake, "Deployment", "qwen3-0-6b-decode")["spec"]["template"]["metadata"]
                                   ["labels"]}},
           "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    fake.seed(pod)
    rc, _, err = fake.run("ready", "//:qwen-demo", "--timeout", "0")
    assert rc == 0 and "qwen3-0-6b is ready" in err


def test_every_rendered_object_is_in_sync_as_the_server_stores_it():
    """Each kind Manifesto emits (Deployment, LeaderWorkerSet, Service, RBAC, InferencePool,
    Gateway, HTTPRoute, ResourceClaimTemplate...) compares in-sync with itself as the fake
    API server stores it (its defaults filled in), and out of sync once a default is changed."""
    import yaml

    from manifesto.testing.fake_kubectl import stored
    from manifesto.ops.targets import differences

    paths = sorted((ROOT / "out").rglob("*.yaml")) + sorted((ROOT / "tests/golden").glob("*/expected.yaml"))
    objects = [(path, obj) for path in paths
               for obj in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if obj]
    kinds = set()
    for n, (path, obj) in enumerate(objects):
        kinds.add(obj["kind"])
        live = stored(obj, None, "{}", n + 1)
        assert differences(obj, live) == [], (path, obj["kind"], obj["metadata"]["name"])
    assert {"Deployment", "LeaderWorkerSet", "Service", "ServiceAccount", "Role", "RoleBinding", "ConfigMap",
            "InferencePool", "Gateway", "HTTPRoute", "ResourceClaimTemplate", "DestinationRule"} <= kinds
    lws = next(o for _, o in objects if o["kind"] == "LeaderWorkerSet")
    live = stored(lws, None, "{}", 1)
    live["spec"]["startupPolicy"] = "None"
    assert differences(lws, live) == [("spec.startupPolicy", "None", "(absent)")]


def _idle_scale(fake, replicas: int) -> list[tuple[str, str]]:
    """Set every field the artifact's idle-shutdown controller owns (read from the controller)
    to ``replicas`` live, as its scale-to-zero does; returns the (kind, name) it touched."""
    from manifesto.ops.targets import idle_scaled, parse_objects

    objs = parse_objects((Path.cwd() / "out/deploy/qwen-demo.yaml").read_text())
    scaled = idle_scaled(objs)
    assert scaled and all(fields == ("spec.replicas",) for fields in scaled.values())
    state = fake.state
    for obj in state["objects"]:
        if (obj["kind"], obj["metadata"]["name"]) in scaled:
            obj["spec"]["replicas"] = replicas
    fake._write(state)
    return sorted(scaled)


def test_an_idle_instance_is_no_drift_for_status_nor_diff(fake, ws):
    """The fields the gitops target's ignoreDifferences names (what the idle controller owns):
    at the controller's 0 they are no drift, for `status` and for `diff` alike."""
    fake.run("deploy", "//:qwen-demo")
    touched = _idle_scale(fake, 0)
    rc, out, _ = fake.run("status", "//:qwen-demo", "-o", "json")
    report = json.loads(out)
    assert rc == 0 and report["status"] == "idle"
    assert sorted((o["kind"], o["name"]) for o in report["objects"] if o["status"] == "idle") == touched
    rc, out, err = fake.run("diff", "//:qwen-demo")
    assert rc == 0 and out == "" and err.endswith("no differences between out/deploy/qwen-demo.yaml and the cluster\n")
    # Any other count is someone's doing, which both still report.
    _idle_scale(fake, 3)
    assert fake.run("status", "//:qwen-demo")[0] == 1
    rc, out, _ = fake.run("diff", "//:qwen-demo")
    assert rc == 1 and "Deployment.qwen3-0-6b-decode" in out


def test_argo_cd_tracking_annotation_is_not_drift(fake, ws):
    """Argo CD marks every object it syncs with its tracking annotation; that is no drift."""
    fake.run("deploy", "//:qwen-demo")
    state = fake.state
    for obj in state["objects"]:
        obj["metadata"].setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = (
            f"qwen-demo:{obj['apiVersion'].rpartition('/')[0]}/{obj['kind']}:demo/{obj['metadata']['name']}")
    fake._write(state)
    rc, out, _ = fake.run("status", "//:qwen-demo")
    assert rc == 0 and out.startswith("//:qwen-demo  in-sync"), out
