"""The reference's commands and flags: ``deploy manifest SPEC``, ``file delete [--now]``,
``--user`` on the file commands, ``--gateway-timeout``, ``servers --instance`` and
``-o table``; and ``ready``'s progress report. Against the fake kubectl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifesto.cli import main

from kit import plan_of
from kubefake import FAKE, FakeCluster, install

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
GB200 = str(ROOT / "clusters/example-gb200.yaml")
QWEN = str(ROOT / "models/qwen/qwen3-0.6b.yaml")
AGG = str(ROOT / "models/qwen/aggregated.yaml")
SEL = "app.kubernetes.io/managed-by=manifesto"


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


def _deploy(fake, spec, *words):
    return fake.run("deploy", *words, spec, "--cluster", GB200, "--user", "u", "--namespace", "ns")


def _rendered(tmp_path, user="u") -> Path:
    from manifesto.render.k8s import objects
    from manifesto.util.yamlemit import dump_all

    plan = plan_of(QWEN, GB200, user=user, namespace="ns")[0]
    target = tmp_path / f"{user}.yaml"
    target.write_text(dump_all(objects(plan)))
    return target


def test_deploy_manifest_is_deploy(fake):
    rc, _, err = _deploy(fake, QWEN, "manifest")
    assert rc == 0, err
    first = fake.applied()
    fake.reset_log()
    assert _deploy(fake, QWEN)[0] == 0
    assert fake.applied() == first and any(o["kind"] == "Deployment" for o in first)
    rc, _, err = fake.run("deploy", "manifest")
    assert (rc, err) == (1, "error: deploy manifest needs a SPEC: manifesto deploy manifest SPEC\n")


def test_file_delete(fake, tmp_path):
    target = _rendered(tmp_path)
    assert fake.run("file", "apply", str(target))[0] == 0
    assert "qwen3-0-6b-decode" in fake.objects("Deployment")
    fake.reset_log()
    rc, out, err = fake.run("file", "delete", str(target))
    assert rc == 0, err
    assert fake.argvs() == [["delete", "-f", str(target), "--ignore-not-found"]]
    assert 'deployment.apps "qwen3-0-6b-decode" deleted from ns namespace' in out
    assert fake.objects("Deployment") == [] and fake.objects("Secret") == ["hf-secret"]  # the secret stays
    fake.reset_log()
    rc, out, err = fake.run("file", "delete", str(target), "--now")
    assert rc == 0 and out == ""
    assert err == f"manifesto: nothing to delete: no object of {target} exists in the cluster\n"
    assert fake.argvs()[0][-3:] == ["--ignore-not-found", "--grace-period=0", "--force"]
    rc, _, err = fake.run("file", "delete", str(tmp_path / "absent.yaml"))
    assert rc == 1 and "does not exist" in err


def test_user_refuses_another_users_render(fake, tmp_path):
    target = _rendered(tmp_path, user="alice")
    for action in ("diff", "apply", "delete"):
        rc, _, err = fake.run("file", action, str(target), "--user", "bob")
        assert (rc, err) == (1, f"error: --user bob: {target} was rendered for user alice (its llm-d.ai/owner "
                                "label); render it again with --user bob, or drop --user\n")
    assert fake.calls() == []
    assert fake.run("file", "apply", str(target), "--user", "alice")[0] == 0
    hand = tmp_path / "hand.yaml"
    hand.write_text("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\n")
    assert fake.run("file", "apply", str(hand), "--user", "bob")[0] == 0  # no owner label: nothing to disagree with


def _as_json(target: Path, how: str) -> Path:
    """``target``'s objects in another layout kubectl reads (issue 35: the owner check read YAML lines only)."""
    import json

    import yaml

    objs = [d for d in yaml.safe_load_all(target.read_text()) if d]
    out = target.with_name(f"{target.stem}-{how}.{'json' if how.startswith('json') else 'yaml'}")
    if how == "json-list":
        out.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}, indent=2))
    elif how == "json-one-line":
        out.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    elif how == "json-object":
        out.write_text(json.dumps(objs[-1], indent="\t"))
    elif how == "yaml-flow":
        out.write_text("".join("---\n" + json.dumps(o) + "\n" for o in objs))
    elif how == "yaml-quoted-key":
        out.write_text(target.read_text().replace("llm-d.ai/owner:", "'llm-d.ai/owner':"))
    return out


@pytest.mark.parametrize("how", ["json-list", "json-one-line", "json-object", "yaml-flow", "yaml-quoted-key"])
def test_user_refuses_another_users_render_in_any_layout_kubectl_reads(fake, tmp_path, how):
    target = _as_json(_rendered(tmp_path, user="bob"), how)
    for action in ("diff", "apply", "delete"):
        rc, _, err = fake.run("file", action, str(target), "--user", "alice")
        assert (rc, err) == (1, f"error: --user alice: {target} was rendered for user bob (its llm-d.ai/owner "
                                "label); render it again with --user alice, or drop --user\n"), how
    assert fake.calls() == []
    assert fake.run("file", "apply", str(target), "--user", "bob")[0] == 0


def test_user_refuses_a_file_whose_owners_cannot_be_read(fake, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "List", "items": [')
    rc, _, err = fake.run("file", "delete", str(bad), "--user", "alice")
    assert rc == 1 and err.startswith(f"error: cannot read the owners of {bad}'s objects: ") and err.count("\n") == 1
    assert fake.calls() == []


def test_file_apply_shows_kubectls_whole_error_escaped(tmp_path, monkeypatch, capsys):
    wrapper = (
        "import os, runpy, sys\n"
        "argv = sys.argv[1:]\n"
        "if 'apply' in argv and argv[argv.index('-f') + 1] != '-':\n"
        "    sys.stderr.write('Error from server (Invalid): first object is invalid\\n'\n"
        "                     'Error from server (Forbidden): second \\x1b[31mred\\x1b[0m is forbidden\\n')\n"
        "    sys.exit(1)\n"
        f"sys.argv = [{str(FAKE)!r}, *argv]\n"
        f"runpy.run_path({str(FAKE)!r}, run_name='__main__')\n")
    fake = FakeCluster(install(tmp_path, monkeypatch, wrapper), capsys, main)
    target = _rendered(tmp_path)
    rc, _, err = fake.run("file", "apply", str(target))
    assert rc == 1
    assert err.endswith(f"error: `kubectl apply -f {target}` failed:\n"
                        "error: Error from server (Invalid): first object is invalid\n"
                        "error: Error from server (Forbidden): second \\x1b[31mred\\x1b[0m is forbidden\n")


def test_servers_instance_and_table(fake):
    assert _deploy(fake, QWEN)[0] == 0
    assert _deploy(fake, AGG)[0] == 0
    fake.reset_log()
    rc, out, err = fake.run("servers", "-n", "ns", "--instance", "qwen3-0-6b")
    assert rc == 0, err
    assert all(f"{SEL},app.kubernetes.io/instance=qwen3-0-6b" in a for a in fake.argvs())
    head, _, resources = out.partition("\nresources:\n")
    assert head.splitlines()[0].split() == ["INSTANCE", "OWNER", "RESOURCES"]
    assert [line.split()[0] for line in head.splitlines()[1:]] == ["qwen3-0-6b"]
    assert "  deployments.apps/qwen3-0-6b-decode\n" in resources
    rc, out, _ = fake.run("servers", "-n", "ns", "--instance", "qwen3-0-6b", "-o", "name")
    assert out == "qwen3-0-6b\n"
    rc, out, err = fake.run("servers", "-n", "ns", "--instance", "gone")
    assert (rc, out, err) == (0, "", "manifesto: no live objects of instance gone in namespace ns\n")
    assert fake.run("servers", "-n", "ns", "-o", "table")[1] == fake.run("servers", "-n", "ns")[1]
    with pytest.raises(SystemExit):
        fake.run("servers", "-n", "ns", "-o", "tabel")


def test_config_list_table(capsys):
    assert main(["config", "list", "clusters", "-o", "table"]) == 0
    table = capsys.readouterr().out
    assert main(["config", "list", "clusters"]) == 0
    assert capsys.readouterr().out == table and "example-gb200" in table


def _pods_ready(fake, instance, role, count):
    for i in range(count):
        fake.seed({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{role}-{i}", "namespace": "ns",
            "labels": {"app.kubernetes.io/managed-by": "manifesto", "app.kubernetes.io/instance": instance,
                       "app.kubernetes.io/component": "model-server", "manifesto.llm-d.ai/role": role}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}})


def test_gateway_timeout_bounds_the_frontend_after_the_model(fake):
    fake.configure(pods_ready_after=1000)  # the pods the fake starts stay unready: the EPP too
    assert _deploy(fake, AGG)[0] == 0
    _pods_ready(fake, "qwen3-30b", "decode", 2)
    rc, _, err = fake.run("ready", AGG, "--cluster", GB200, "--user", "u", "--namespace", "ns",
                          "--timeout", "600", "--gateway-timeout", "0", "--interval", "0")
    assert rc == 1
    assert err.splitlines()[-1] == ("error: qwen3-30b: the model pods are ready but the routing frontend is not 0s "
                                    "later (--gateway-timeout): Deployment qwen3-30b-infpool-epp not available")


def test_ready_reports_progress_on_change_and_periodically(monkeypatch, capsys):
    from manifesto.ops import lifecycle
    from manifesto.ops.kubectl import Kube, CallResult

    plan = plan_of(QWEN, GB200, user="u", namespace="ns")[0]
    now = [0.0]
    ready_at = 95.0

    def fake_run(call):
        pods = []
        if now[0] >= ready_at:
            pods = [{"metadata": {"labels": dict(plan.roles[0].selector)},
                     "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]
        return CallResult(0, json.dumps({"items": pods}), "")

    monkeypatch.setattr(lifecycle, "run", fake_run)

    def sleep(seconds):
        now[0] += seconds

    lifecycle.wait_ready(Kube(namespace="ns"), plan, 3600, 10, clock=lambda: now[0], sleep=sleep)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "manifesto: waiting up to 3600s for qwen3-0-6b in namespace ns: 1 decode pod(s)"
    # the first poll, then every 30 s while nothing changes, then the end
    assert err[1:] == [f"manifesto: waiting ({t}s of 3600s): role decode: 0/1 pods ready" for t in (0, 30, 60, 90)] \
        + ["manifesto: qwen3-0-6b is ready (after 100s)"]


def test_shipped_fake_runs_deploy_ready_and_test_e2e_end_to_end(tmp_path):
    """The installed ``manifesto-fake-kubectl``, linked as ``kubectl`` and first on PATH, runs
    the whole Kubernetes lifecycle in real processes: deploy, ready (pods turn Ready after
    the workload is applied), test e2e (namespace, Job, logs, namespace deleted), stop."""
    import os
    import shutil
    import subprocess
    import sys

    from kit import run_cli

    script = shutil.which("manifesto-fake-kubectl", path=os.path.dirname(sys.executable))
    assert script, "the manifesto-fake-kubectl script is not installed next to this interpreter"
    bin_dir, state = tmp_path / "bin", tmp_path / "kube"
    linked = subprocess.run([script, "--install", str(bin_dir)], capture_output=True, text=True)
    assert linked.returncode == 0, linked.stderr
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}/usr/bin:/bin",
           "FAKE_KUBE_DIR": str(state), "HF_TOKEN": "hf_fake", "MANIFESTO_NO_CACHE": "1"}
    common = ("--cluster", GB200, "--user", "u", "--namespace", "ns")

    done = run_cli("deploy", AGG, *common, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run_cli("ready", AGG, *common, "--interval", "0.05", "--timeout", "60", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("manifesto: waiting up to 60s for qwen3-30b in namespace ns: 2 decode pod(s)")
    assert any(line.startswith("manifesto: waiting (") and "0/2 pods ready" in line for line in lines)
    assert lines[-1].startswith("manifesto: qwen3-30b is ready")

    done = run_cli("test", "e2e", AGG, "--cluster", GB200, "--user", "u", "--namespace", "e2e-one",
                   "--interval", "0.05", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The stand-in runs no container: the Job completes, and nothing claims a completion was served.
    assert ("e2e Job qwen3-30b-e2e completed in namespace e2e-one, but its log has no `e2e: PASS` line: no "
            "completion is known to have been served") in done.stderr
    assert "served a completion" not in done.stderr
    assert "manifesto: deleting namespace e2e-one" in done.stderr
    import json

    objects = json.loads((state / "state.json").read_text())["objects"]
    assert not [o for o in objects if (o.get("metadata") or {}).get("namespace") == "e2e-one"]
    assert not [o for o in objects if o["kind"] == "Namespace"]
    done = run_cli("stop", AGG, *common, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    objects = json.loads((state / "state.json").read_text())["objects"]
    assert [o["kind"] for o in objects] == ["Secret"]  # hf-secret stays; pods went with their workloads


def test_slurm_servers_says_when_there_is_no_job(tmp_path, monkeypatch):
    """``slurm servers`` with an empty queue says so (stderr) instead of printing nothing."""
    from kit import cli_in_process

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    squeue = bin_dir / "squeue"
    squeue.write_text("#!/bin/sh\nexit 0\n")  # a queue with none of our jobs
    squeue.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    rc, out, err = cli_in_process("slurm", "servers", "--cluster", str(ROOT / "clusters/example-slurm.yaml"))
    assert (rc, out) == (0, "")
    assert err == "manifesto: no Manifesto jobs of yours are queued or running on example-slurm\n"
    rc, out, err = cli_in_process("slurm", "servers", "--cluster", str(ROOT / "clusters/example-slurm.yaml"),
                                  "-o", "json")
    assert (rc, out, err) == (0, "[]\n", "")


def test_slurm_stop_of_a_job_that_already_ended_is_no_error(tmp_path, monkeypatch):
    """scancel's "already completing or completed" (the job ended on its own) is said, exit 0;
    an unknown job is still an error."""
    from kit import cli_in_process

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scancel = bin_dir / "scancel"
    scancel.write_text('#!/bin/sh\nif [ "$2" = 41 ]; then\n'
                       '  echo "scancel: error: Kill job error on job id 41: Job/step already completing or completed" >&2\n'
                       'else\n  echo "scancel: error: Kill job error on job id $2: Invalid job id specified" >&2\nfi\n'
                       'exit 0\n')
    scancel.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    cluster = str(ROOT / "clusters/example-slurm.yaml")
    assert cli_in_process("slurm", "stop", "41", "--cluster", cluster) == (
        0, "", "manifesto: Slurm job 41 on example-slurm had already ended; nothing to cancel\n")
    rc, _, err = cli_in_process("slurm", "stop", "42", "--cluster", cluster)
    assert (rc, err) == (1, "error: could not cancel Slurm job 42: Invalid job id specified (it may have finished "
                            "already; `manifesto slurm servers` lists your jobs)\n")


def test_the_fakes_create_wait_and_logs(tmp_path):
    """The verbs the lifecycle uses beyond apply/get/delete, straight against the fake."""
    import os
    import subprocess
    import sys

    state = tmp_path / "kube"
    env = {**os.environ, "FAKE_KUBE_DIR": str(state)}

    def kubectl(*argv, stdin=None):
        return subprocess.run([sys.executable, str(FAKE), *argv], input=stdin, capture_output=True, text=True,
                              env=env)

    deployment = json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "m"},
                             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "m"}},
                                      "template": {"metadata": {"labels": {"app": "m"}},
                                                   "spec": {"containers": [{"name": "c", "image": "i:1"}]}}}})
    assert kubectl("-n", "ns", "apply", "-f", "-", stdin=deployment).returncode == 0
    pods = json.loads(kubectl("-n", "ns", "get", "pods", "-l", "app=m", "-o", "json").stdout)["items"]
    assert [p["metadata"]["name"] for p in pods] == ["m-0", "m-1"]
    assert [p["status"]["conditions"][0]["status"] for p in pods] == ["False", "False"]
    done = kubectl("-n", "ns", "wait", "--for=condition=Ready", "pods", "-l", "app=m", "--timeout=60s")
    assert (done.returncode, done.stdout) == (0, "pod/m-0 condition met\npod/m-1 condition met\n")
    done = kubectl("-n", "ns", "wait", "--for=condition=Available", "deployments.apps/m")
    assert done.returncode == 0, done.stderr
    assert kubectl("-n", "ns", "wait", "--for=condition=Ready", "pods", "-l", "app=none").stderr == \
        "error: no matching resources found\n"

    job = json.dumps({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                      "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                     "containers": [{"name": "c", "image": "i:1"}]}}}})
    assert kubectl("-n", "ns", "create", "-f", "-", stdin=job).stdout == "job.batch/j created\n"
    again = kubectl("-n", "ns", "create", "-f", "-", stdin=job)
    assert (again.returncode, again.stderr) == (1, 'Error from server (AlreadyExists): error when creating "STDIN": jobs.batch "j" already exists\n')
    assert kubectl("-n", "ns", "wait", "--for=condition=complete", "jobs.batch/j").returncode == 0
    assert kubectl("-n", "ns", "logs", "job/j", "--all-containers").stdout == \
        "fake kubectl: job/j ran no container: there is no cluster\n"
    assert kubectl("-n", "ns", "logs", "job/nope").returncode == 1
    assert kubectl("-n", "ns", "delete", "deployments.apps/m").returncode == 0
    assert json.loads(kubectl("-n", "ns", "get", "pods", "-o", "json").stdout)["items"] == []


def test_completion_offers_table_where_it_is_accepted():
    from manifesto.cli.complete import candidates

    for line in (["servers", "-o", ""], ["config", "list", "models", "--output", "t"]):
        assert "table" in [c[0] for c in candidates(line)[0]], line
    assert "table" not in [c[0] for c in candidates(["explain", "x", "-o", ""])[0]]


def test_file_apply_finds_the_namespace_in_json_and_flow_yaml(tmp_path):
    """The namespace a saved file's objects name is read as kubectl reads the file (JSON, flow
    mappings), not from indented YAML lines only."""
    from manifesto.ops.deploy import file_namespaces

    as_json = '{"apiVersion": "v1", "kind": "List", "items": [{"kind": "ConfigMap", "metadata": {"namespace": "ns-a"}}]}'
    flow = "---\n{kind: ConfigMap, metadata: {name: x, namespace: ns-b}}\n---\nkind: Secret\nmetadata: {namespace: ns-b}\n"
    assert file_namespaces(as_json) == {"ns-a"} and file_namespaces(flow) == {"ns-b"}
    assert file_namespaces("{not json") == set()  # unreadable: kubectl will say why
