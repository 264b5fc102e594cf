"""`manifesto slurm submit|servers|stop` against the local Slurm kit, and the calls they build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from manifesto.errors import OpsError
from manifesto.ops import slurm

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def test_calls_are_plain_data():
    call = slurm.submit_call("#!/bin/bash\n", None, test_only=False)
    assert call.command() == ["sbatch", "--parsable"] and call.stdin == "#!/bin/bash\n"
    remote = slurm.submit_call("x", "me@login", test_only=True)
    assert remote.command() == ["ssh", "-o", "BatchMode=yes", "me@login", "--", "sbatch --test-only"]
    assert slurm.servers_call(None).command() == [
        "squeue", "--noheader", "--array", "--me", "--format=%i|%j|%T|%N|%R"]
    assert slurm.stop_call("12345_0", "h").command()[-1] == "scancel --verbose 12345_0"
    with pytest.raises(OpsError) as info:
        slurm.stop_call("12; rm -rf /", None)
    assert str(info.value) == "'12; rm -rf /' is not a Slurm job ID (expected N, N_I for one array element, or N+C)"


def test_parse_servers_keeps_manifesto_jobs_only():
    rows = slurm.parse_servers("7_0|manifesto-qwen|RUNNING|node1|None\n8|other|PENDING||Resources\n")
    assert rows == [{"job": "7_0", "instance": "qwen", "state": "RUNNING", "nodes": "node1", "reason": "None"}]
    assert slurm.job_id("123;cluster\n") == "123"
    with pytest.raises(OpsError):
        slurm.job_id("")


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
                                f"--cluster kit.yaml`, cancel it with `manifesto slurm stop {job}`\n")
    try:
        rows = []
        for _ in range(30):
            listed = _cli(tmp_path, "slurm", "servers", "--cluster", "kit.yaml", "--output", "json")
            assert listed.returncode == 0, listed.stderr
            rows = [r for r in json.loads(listed.stdout) if r["job"].split("_")[0] == job]
            if rows and rows[0]["state"] == "RUNNING":
                break
            time.sleep(1)
        assert rows and rows[0]["instance"] == "qwen3-0-6b"
        names = _cli(tmp_path, "slurm", "servers", "--cluster", "kit.yaml", "--output", "name").stdout.split()
        assert any(n.split("_")[0] == job for n in names)
    finally:
        stopped = _cli(tmp_path, "slurm", "stop", job, "--cluster", "kit.yaml")
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


def _slurm_workspace(root, host: str):
    (root / "clusters").mkdir(parents=True)
    (root / "models/qwen").mkdir(parents=True)
    (root / "clusters/kit.yaml").write_text(CLUSTER)
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
