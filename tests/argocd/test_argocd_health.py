"""Every Argo CD health check the project ships passes its own ``health_test.yaml`` under a
real Lua 5.1, run as Argo CD runs it (``lua_health``), and is laid out as Argo CD's
``resource_customizations/<group>/<Kind>/`` folders are."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lua_health import STATUSES, HealthError, health_cases, run_health

ROOT = Path(__file__).resolve().parents[2] / "manifesto" / "data" / "argocd" / "resource_customizations"
FOLDERS = sorted(p.parent for p in ROOT.glob("*/*/health.lua"))
CASES = [(folder, case) for folder in FOLDERS for case in health_cases(folder)]


def _id(value) -> str:
    return value.relative_to(ROOT).as_posix() if isinstance(value, Path) else value[0]


def test_the_checks_are_laid_out_as_argo_cd_reads_them():
    assert {f.relative_to(ROOT).as_posix() for f in FOLDERS} >= {
        "leaderworkerset.x-k8s.io/LeaderWorkerSet", "inference.networking.k8s.io/InferencePool",
        "disaggregatedset.x-k8s.io/DisaggregatedSet"}
    for folder in FOLDERS:
        group, kind = folder.relative_to(ROOT).parts
        assert (folder / "health_test.yaml").is_file()
        for path, obj, _want in health_cases(folder):
            assert (folder / path).parent == folder / "testdata"
            assert obj["apiVersion"].split("/")[0] == group and obj["kind"] == kind, path


@pytest.mark.parametrize(("folder", "case"), CASES, ids=[f"{_id(f)}:{c[0]}" for f, c in CASES])
def test_health_script_gives_the_recorded_status(folder, case):
    path, obj, want = case
    got = run_health((folder / "health.lua").read_text(encoding="utf-8"), obj)
    assert got == {"status": want["status"], "message": want["message"]}, path


@pytest.mark.parametrize("folder", FOLDERS, ids=_id)
def test_each_check_covers_the_four_states(folder):
    seen = {want["status"] for _path, _obj, want in health_cases(folder)}
    assert {"Healthy", "Progressing", "Degraded", "Suspended"} <= seen <= set(STATUSES)


@pytest.mark.parametrize("folder", FOLDERS, ids=_id)
@pytest.mark.parametrize("obj", [
    {}, {"spec": None}, {"spec": {"replicas": "two"}},
    {"status": {"observedGeneration": 1, "conditions": "x"}},
    {"status": {"observedGeneration": 1, "conditions": [{}, "x", {"type": "Progressing", "status": "True"}]}},
    {"status": {"observedGeneration": "1", "readyReplicas": "x", "parents": "x", "roleStatuses": "x"}},
    {"status": {"observedGeneration": 1, "parents": [{}, "x", {"conditions": [{"type": "Accepted"}]}],
                "roleStatuses": [{}, "x"], "conditions": [{"type": "Progressing", "status": "True",
                                                         "lastTransitionTime": "garbage"}]}},
    {"metadata": {"generation": "x", "annotations": {"manifesto.llm-d.ai/progress-deadline-seconds": "x"}},
     "status": {"observedGeneration": 1, "conditions": [{"type": "Progressing", "status": "True",
                                                         "lastTransitionTime": "2020-01-01T00:00:00Z"}]}},
], ids=["empty", "null-spec", "text-replicas", "conditions-not-a-list", "odd-conditions", "text-counts",
        "odd-parents", "bad-deadline"])
def test_a_malformed_object_gets_a_status_not_a_script_error(folder, obj):
    """Argo CD shows a script error as an unknown health on every sync; a half-written
    object must still read as some status."""
    obj = {"apiVersion": "x/v1", "kind": folder.name, **obj}
    try:
        got = run_health((folder / "health.lua").read_text(encoding="utf-8"), obj)
    except HealthError as exc:
        pytest.fail(str(exc))
    assert got["status"] in STATUSES


def test_the_runner_is_a_sandbox():
    for script, why in [("while true do end", "instruction budget"), ("return io.open('/etc/passwd')", "'io'"),
                        ("return require('io')", "module 'io' not found"), ("return {status = 'Fine'}", "'Fine'"),
                        ("return math.floor(1)", "'math'"), ("x(", "does not compile")]:
        with pytest.raises(HealthError, match=why):
            run_health(script, {})
    assert yaml.safe_load("a: 1") == {"a": 1}


@pytest.mark.k8s_schemas
@pytest.mark.integration
@pytest.mark.parametrize("folder", FOLDERS, ids=_id)
def test_the_test_objects_are_valid_objects_of_their_kind(folder):
    """A health check tested on objects the API server would refuse proves little."""
    import kit

    kit.validate_manifests("---\n".join((folder / path).read_text(encoding="utf-8")
                                        for path, _obj, _want in health_cases(folder)))
