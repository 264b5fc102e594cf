"""`manifesto slurm submit|servers|stop` against the local Slurm kit, and the calls they build."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

import pytest

from manifesto.errors import OpsError
from manifesto.ops import slurm

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(REPO, "models", "qwen", "qwen3-0.6b.yaml")
CLUSTER = """\
name: kit
platform: slurm
slurm: {partition: gpu, runtime: native, time: "00:05:00"}
accelerators:
  default: b200
  profiles:
    b200: {gpus_per_node: 8, allocation: {slurm: {gres: gpu}}}
"""

# Its jobs run on the local Slurm kit beside test_slurm_jobs' stand-in servers: one xdist worker.
pytestmark = pytest.mark.xdist_group("slurm-jobs")


@pytest.fixture(autouse=True)
def _settled_queue(request):
    """A test on the kit starts with no job of ours in the queue: scancel only asks, so a job
    the previous test (or README block) cancelled may still be listed for a moment."""
    if "slurm_cluster" in request.fixturenames:
        request.getfixturevalue("slurm_cluster")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            proc = subprocess.run(["squeue", "--noheader", "--me", "--format=%i"], capture_output=True, text=True)
            if proc.returncode == 0 and not proc.stdout.strip():
                break
            time.sleep(0.5)


def test_calls_are_plain_data():
    call = slurm.submit_call("#!/bin/bash\n", None, test_only=False)
    assert call.command() == ["sbatch", "--parsable"] and call.stdin == "#!/bin/bash\n"
    remote = slurm.submit_call("x", "me@login", test_only=True)
    assert remote.command() == ["ssh", "-o", "BatchMode=yes", "me@login", "--", "sbatch --test-only"]
    assert slurm.servers_call(None).command() == [
        "squeue", "--noheader", "--array", "--me", "--format=%i|%j|%T|%N|%r"]
    assert slurm.stop_call("12345_0", "h").command()[-1] == "scancel --verbose 12345_0"
    with pytest.raises(OpsError) as info:
        slurm.stop_call("12; rm -rf /", None)
    assert str(info.value) == "'12; rm -rf /' is not a Slurm job ID (expected N, N_I for one array element, or N+C)"


def test_parse_servers_keeps_manifesto_jobs_only():
    rows = slurm.parse_servers("7_0|manifesto-qwen|RUNNING|node1|None\n8|other|PENDING||Resources\n")
    assert rows == [{"job": "7", "instance": "qwen", "state": "RUNNING", "nodes": "node1", "reason": "",
                     "elements": [{"id": "7_0", "state": "RUNNING", "nodes": "node1", "reason": ""}]}]
    assert slurm.job_id("123;cluster\n") == "123"
    with pytest.raises(OpsError):
        slurm.job_id("")


def test_servers_lists_a_job_under_the_id_sbatch_printed():
    """Array elements and heterogeneous components fold into the job ID that submit printed and
    stop takes; the reason is squeue's %r, never the node list."""
    rows = slurm.parse_servers("9_0|manifesto-a|RUNNING|node1|None\n9_1|manifesto-a|PENDING||Resources\n"
                               "10+0|manifesto-b|RUNNING|node2|None\n10+1|manifesto-b|RUNNING|node3|None\n")
    assert [(r["job"], r["state"], r["nodes"], r["reason"]) for r in rows] == [
        ("9", "RUNNING,PENDING", "node1", "Resources"), ("10", "RUNNING", "node2,node3", "")]
    assert [e["id"] for e in rows[1]["elements"]] == ["10+0", "10+1"]
    assert slurm.servers_call(None).argv[-1] == "--format=%i|%j|%T|%N|%r"


def test_submit_makes_the_log_directory_first():
    script = "#!/bin/bash\n#SBATCH --job-name=manifesto-x\n#SBATCH --output=/logs/u/x/manifesto-x-%j.out\n"
    assert slurm.submit_call(script, None, test_only=False).mkdirs == ("/logs/u/x",)
    assert slurm.submit_call(script, "login", test_only=False).command()[-1] == \
        "mkdir -p -- /logs/u/x && sbatch --parsable"
    assert slurm.submit_call(script, None, test_only=True).mkdirs == ()
    assert slurm.script_instance(script) == "x"


def _cli(tmp_path, *args, env=None):
    return subprocess.run([sys.executable, "-m", "manifesto", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "MANIFESTO_NO_CACHE": "1", **(env or {})})


@pytest.mark.integration
@pytest.mark.slurm
def test_submit_list_and_stop_a_real_job(slurm_cluster, tmp_path):
    (tmp_path / "kit.yaml").write_text(CLUSTER)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    vllm = bindir / "vllm"
    vllm.write_text("#!/bin/sh\nexec sleep 120\n")  # a stand-in model server that just waits
    vllm.chmod(0o755)
    env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
    common = ("--cluster", "kit.yaml", "--user", "u", "--namespace", "ns")

    checked = _cli(tmp_path, "slurm", "submit", SPEC, *common, "--test-only", env=env)
    assert checked.returncode == 0, checked.stderr
    assert "to start at" in checked.stderr

    submitted = _cli(tmp_path, "slurm", "submit", SPEC, *common, env=env)
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip()
    assert job.isdigit()
    assert submitted.stderr == (f"submitted Slurm job {job} to kit; list it with `manifesto slurm servers "
                                f"--cluster kit.yaml`, cancel it with `manifesto slurm stop {job} --cluster "
                                "kit.yaml`\n")
    try:
        rows = []
        for _ in range(30):
            listed = _cli(tmp_path, "slurm", "servers", "--cluster", "kit.yaml", "--output", "json")
            assert listed.returncode == 0, listed.stderr
            rows = [r for r in json.loads(listed.stdout) if r["job"] == job]
            if rows and rows[0]["state"] == "RUNNING":
                break
            time.sleep(1)
        assert rows and rows[0]["instance"] == "qwen3-0-6b"
        assert rows[0]["nodes"].startswith("node") and rows[0]["reason"] == "", rows
        assert [e["id"] for e in rows[0]["elements"]] == [f"{job}_0"]
        names = _cli(tmp_path, "slurm", "servers", "--cluster", "kit.yaml", "--output", "name").stdout.split()
        assert job in names
    finally:
        # exactly the command submit printed
        printed = submitted.stderr.split("cancel it with `manifesto ", 1)[1].split("`", 1)[0]
        stopped = _cli(tmp_path, *shlex.split(printed))
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stderr == f"cancelled Slurm job {job} on kit\n"
    state = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True).stdout
    assert "CANCELLED" in state or "COMPLETING" in state


@pytest.mark.integration
@pytest.mark.slurm
def test_deploy_on_a_slurm_cluster_submits(slurm_cluster, tmp_path):
    (tmp_path / "kit.yaml").write_text(CLUSTER)
    proc = _cli(tmp_path, "deploy", SPEC, "--cluster", "kit.yaml", "--user", "u", "--namespace", "ns")
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip()
    assert job.isdigit()
    subprocess.run(["scancel", job], check=False)


@pytest.mark.integration
@pytest.mark.slurm
def test_stopping_a_job_that_does_not_exist_fails(slurm_cluster, tmp_path):
    (tmp_path / "kit.yaml").write_text(CLUSTER)
    proc = _cli(tmp_path, "slurm", "stop", "999999", "--cluster", "kit.yaml")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("error: could not cancel Slurm job 999999: Invalid job id specified (it may have "
                           "finished already; `manifesto slurm servers` lists your jobs)\n")
    traced = _cli(tmp_path, "slurm", "servers", "--cluster", "kit.yaml", "-o", "name", "-v")
    assert traced.returncode == 0 and traced.stderr.startswith("trace: squeue --noheader --array --me "), traced.stderr


@pytest.mark.integration
@pytest.mark.slurm
def test_submit_output_json_and_quiet(slurm_cluster, tmp_path):
    (tmp_path / "kit.yaml").write_text(CLUSTER)
    proc = _cli(tmp_path, "-q", "slurm", "submit", SPEC, "--cluster", "kit.yaml", "--user", "u", "-n", "ns",
                "-o", "json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    job = json.loads(proc.stdout)
    assert job["cluster"] == "kit" and job["job"].isdigit()
    subprocess.run(["scancel", job["job"]], check=False)


@pytest.mark.integration
def test_commands_refuse_kubernetes_clusters(tmp_path):
    proc = _cli(tmp_path, "slurm", "servers", "--cluster", os.path.join(REPO, "clusters", "example-gb200.yaml"))
    assert proc.returncode == 1 and "not a Slurm cluster" in proc.stderr and "Traceback" not in proc.stderr


def _slurm_workspace(root, host: str, cluster: str = CLUSTER):
    (root / "clusters").mkdir(parents=True)
    (root / "models/qwen").mkdir(parents=True)
    (root / "clusters/kit.yaml").write_text(cluster)
    with open(SPEC) as f:
        (root / "models/qwen/qwen3-0.6b.yaml").write_text(f.read())
    (root / "BUILD.yaml").write_text(
        "targets:\n"
        "  - {kind: cluster, path: clusters, sources: ['*.yaml']}\n"
        "  - {kind: model, path: models, sources: ['**/*.yaml'], options: {user: u, namespace: ns}}\n"
        f"  - {{kind: deployment, name: qwen-kit, model: //models/qwen:qwen3-0.6b, cluster: kit, user: slurmer,\n"
        f"     namespace: ns, slurm_host: {host}}}\n")
    return root


@pytest.mark.slurm
@pytest.mark.integration
def test_a_slurm_deployment_target_submits_its_artifact(slurm_cluster, tmp_path):
    import socket

    root = _slurm_workspace(tmp_path / "ws", socket.gethostname())
    assert _cli(root, "build", "//:qwen-kit").returncode == 0
    script = (root / "out/deploy/qwen-kit.sbatch").read_text()
    dry = _cli(root, "slurm", "submit", "//:qwen-kit", "--dry-run")
    assert (dry.returncode, dry.stdout) == (0, "sbatch --parsable < out/deploy/qwen-kit.sbatch\n")
    checked = _cli(root, "slurm", "submit", "//:qwen-kit", "--test-only")
    assert checked.returncode == 0 and "to start at" in checked.stderr, checked.stderr
    proc = _cli(root, "deploy", "out/deploy/qwen-kit.sbatch")
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip()
    try:
        assert job.isdigit()
        shown = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True).stdout
        assert "JobName=manifesto-qwen3-0-6b" in shown, shown
        assert "slurmer" in script  # the target's user, not the option set's
    finally:
        subprocess.run(["scancel", job], check=False)


@pytest.mark.integration
def test_a_slurm_target_on_another_host_is_refused(tmp_path):
    root = _slurm_workspace(tmp_path / "ws", "login-elsewhere")
    assert _cli(root, "build", "//:qwen-kit").returncode == 0
    proc = _cli(root, "slurm", "submit", "//:qwen-kit")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: //:qwen-kit belongs to Slurm host 'login-elsewhere', but this is ")
    assert proc.stderr.endswith("and the cluster profile sets no slurm.ssh_host; run it there\n")


@pytest.mark.slurm
@pytest.mark.integration
def test_a_slurm_target_by_address_status_servers_and_stop(slurm_cluster, tmp_path):
    """status, servers and stop take the address of a Slurm target as they do a Kubernetes one;
    the job log goes to paths.log_root, which submit creates."""
    import socket

    logs = tmp_path / "logs"
    cluster = CLUSTER + f"paths:\n  log_root: {logs}/{{user}}/{{release}}\n"
    root = _slurm_workspace(tmp_path / "ws", socket.gethostname(), cluster)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "vllm").write_text("#!/bin/sh\nexec sleep 120\n")
    (bindir / "vllm").chmod(0o755)
    env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
    assert _cli(root, "build", "//:qwen-kit").returncode == 0
    script = (root / "out/deploy/qwen-kit.sbatch").read_text()
    assert f"#SBATCH --output={logs}/slurmer/qwen3-0-6b/manifesto-qwen3-0-6b-%A_%a.out\n" in script

    before = _cli(root, "status", "//:qwen-kit")
    assert (before.returncode, before.stdout) == (1, f"//:qwen-kit  missing  (qwen3-0-6b on Slurm host "
                                                     f"{socket.gethostname()}, from out/deploy/qwen-kit.sbatch)\n"
                                                     "  no queued or running job\n")
    submitted = _cli(root, "slurm", "submit", "//:qwen-kit", env=env)
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip()
    try:
        assert submitted.stderr == (f"submitted Slurm job {job} for //:qwen-kit; see it with `manifesto status "
                                    "//:qwen-kit`, cancel it with `manifesto stop //:qwen-kit`\n")
        status = {}
        for _ in range(30):
            proc = _cli(root, "status", "//:qwen-kit", "-o", "json")
            status = json.loads(proc.stdout)
            if status["jobs"] and status["jobs"][0]["state"] == "RUNNING":
                break
            time.sleep(1)
        assert proc.returncode == 0 and status["status"] == "in-sync", status
        assert [(j["job"], j["status"], j["reason"]) for j in status["jobs"]] == [(job, "in-sync", "")]
        listed = _cli(root, "slurm", "servers", "//:qwen-kit", "-o", "name")
        assert (listed.returncode, listed.stdout) == (0, f"{job}\n")
        assert _cli(root, "servers", "//:qwen-kit", "-o", "name").stdout == f"{job}\n"
        offered = _cli(root, "__complete", "zsh", "--", "slurm", "stop", "").stdout.splitlines()
        assert f"{job}\tqwen3-0-6b running" in offered and "//:qwen-kit\tdeployment target" in offered, offered
        assert _cli(root, "diff", "//:qwen-kit").returncode == 0
        log = logs / "slurmer" / "qwen3-0-6b" / f"manifesto-qwen3-0-6b-{job}_0.out"
        for _ in range(20):
            if log.exists():
                break
            time.sleep(0.5)
        assert log.exists() and not list(root.glob("*.out"))
    finally:
        stopped = _cli(root, "slurm", "stop", "//:qwen-kit")
    assert (stopped.returncode, stopped.stderr) == (0, f"cancelled Slurm job {job} of //:qwen-kit\n")
    again = _cli(root, "stop", "//:qwen-kit")
    assert (again.returncode, again.stderr) == (0, "manifesto: no queued or running Slurm job of //:qwen-kit "
                                                   "(qwen3-0-6b); nothing to stop\n")


@pytest.mark.integration
def test_slurm_target_commands_refuse_a_stale_artifact_and_another_host(tmp_path):
    import socket

    root = _slurm_workspace(tmp_path / "ws", "login-elsewhere")
    assert _cli(root, "build", "//:qwen-kit").returncode == 0
    for argv in (("status", "//:qwen-kit"), ("servers", "//:qwen-kit"), ("stop", "//:qwen-kit"),
                 ("slurm", "servers", "//:qwen-kit"), ("slurm", "stop", "//:qwen-kit")):
        proc = _cli(root, *argv)
        assert proc.returncode == 1, argv
        assert proc.stderr == (f"error: //:qwen-kit belongs to Slurm host 'login-elsewhere', but this is "
                               f"'{socket.gethostname()}' and the cluster profile sets no slurm.ssh_host; run it "
                               "there\n"), argv
    build = (root / "BUILD.yaml").read_text().replace("login-elsewhere", socket.gethostname())
    (root / "BUILD.yaml").write_text(build.replace("user: slurmer", "user: other"))
    for argv in (("status", "//:qwen-kit"), ("slurm", "servers", "//:qwen-kit"), ("slurm", "submit", "//:qwen-kit")):
        proc = _cli(root, *argv)
        assert proc.returncode == 1, argv
        assert proc.stderr.startswith("error: out/deploy/qwen-kit.sbatch: "), proc.stderr
        assert proc.stderr.endswith("; run `manifesto build //:qwen-kit` first (or pass --build to build it now)\n")


@pytest.mark.integration
def test_render_slurm_writes_the_batch_script(tmp_path):
    """`render slurm SPEC -o FILE` (the spec's save-and-submit step); Kubernetes clusters and a
    format name given as -o are refused."""
    (tmp_path / "kit.yaml").write_text(CLUSTER)
    common = ("--cluster", "kit.yaml", "--user", "u", "-n", "ns")
    proc = _cli(tmp_path, "render", "slurm", SPEC, *common, "-o", "qwen.sbatch")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "wrote qwen.sbatch\n")
    stdout = _cli(tmp_path, "render", "slurm", SPEC, *common)
    assert stdout.returncode == 0 and stdout.stdout == (tmp_path / "qwen.sbatch").read_text()
    assert stdout.stdout.startswith("#!/bin/bash\n")
    assert subprocess.run(["bash", "-n", str(tmp_path / "qwen.sbatch")]).returncode == 0
    k8s = _cli(tmp_path, "render", "slurm", SPEC, "--cluster", os.path.join(REPO, "clusters", "example-gb200.yaml"),
               "--user", "u", "-n", "ns")
    assert (k8s.returncode, k8s.stderr) == (1, "error: cluster 'example-gb200' is a kubernetes cluster; render slurm "
                                               "writes Slurm batch scripts (use `manifesto render manifest` or "
                                               "`render file` for it)\n")
    for command in ("slurm", "file"):
        fmt = _cli(tmp_path, "render", command, SPEC, *common, "-o", "json")
        assert (fmt.returncode, fmt.stderr) == (1, "error: --output json: here -o is the file to write, not an "
                                                   "output format; write ./json for a file of that name\n")
        assert not (tmp_path / "json").exists()
    assert _cli(tmp_path, "render", "file", SPEC, *common, "-o", "./json").returncode == 0
    assert (tmp_path / "json").read_text() == stdout.stdout


def test_status_counts_only_jobs_still_queued_or_running():
    """A job that ended (COMPLETING: Slurm still cleans up after it) does not make a target
    in-sync or drifted; a job with one live element does."""
    from manifesto.ops.slurm import live_jobs

    rows = [{"job": "1", "state": "COMPLETING"}, {"job": "2", "state": "RUNNING"}, {"job": "3", "state": "PENDING"},
            {"job": "4", "state": "COMPLETING,RUNNING"}, {"job": "5", "state": "CANCELLED"}]
    assert [row["job"] for row in live_jobs(rows)] == ["2", "3", "4"]


@pytest.mark.integration
def test_slurm_renders_read_no_kube_context(tmp_path):
    """Without --namespace a Slurm render takes "default", never the kube context's namespace:
    rendering for Slurm is offline, so a kubectl on PATH is never run (its context would
    otherwise land in the header and the endpoint picker's --pool-namespace)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "kubectl-calls"
    kubectl = bindir / "kubectl"
    kubectl.write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\necho ctx-ns\n")
    kubectl.chmod(0o755)
    env = {"PATH": f"{bindir}:{os.environ['PATH']}", "MANIFESTO_NAMESPACE": ""}
    routed = os.path.join(REPO, "models", "qwen", "qwen3-0.6b-pd.yaml")
    for argv in (("render", "manifest", routed), ("render", "slurm", routed), ("config", "validate", routed),
                 ("render", "file", routed, "-o", "job.sbatch"), ("explain", routed), ("explain", routed, "-o", "json")):
        proc = _cli(tmp_path, *argv, "--cluster", "example-slurm", "--user", "u", env=env)
        assert proc.returncode == 0, (argv, proc.stderr)
        text = (tmp_path / "job.sbatch").read_text() if argv[1] == "file" else proc.stdout
        assert "ctx-ns" not in text, argv
        if argv[0] == "render":
            assert "--pool-namespace=default " in text and "--namespace default" in text, argv
    assert not calls.exists(), calls.read_text()
    # A Kubernetes render still asks the context (the stand-in's answer is its namespace).
    proc = _cli(tmp_path, "render", "manifest", routed, "--cluster", "example-gb200", "--user", "u", env=env)
    assert proc.returncode == 0 and "namespace: ctx-ns" in proc.stdout and calls.exists()
