"""The health checks run where Argo CD runs them: every ``health_test.yaml`` case, from the
check's folder and from the ``argocd-cm`` the build emits (``out/gitops``), through
``tools/argocd-lua`` (Argo CD v3.5.1's Lua set-up on gopher-lua v1.1.2) in several local
time zones; and the harness itself passes Argo CD's own bundled checks."""

from __future__ import annotations

import datetime
import re
import subprocess
import time
import zoneinfo
from pathlib import Path

import pytest
import yaml

from argocd_engine import engine
from lua_health import health_cases
from manifesto.ops.health import health
from manifesto.render.gitops import needs_open_libs

pytestmark = pytest.mark.integration  # runs the Go harness

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "manifesto" / "data" / "argocd" / "resource_customizations"
FOLDERS = sorted(p.parent for p in ROOT.glob("*/*/health.lua"))
GITOPS = sorted((REPO / "out" / "gitops").glob("*.yaml"))
#: Local zones of an Argo CD controller: UTC, one far from it without daylight saving, and two
#: with it (north and south).
ZONES = ("UTC", "Asia/Kolkata", "America/New_York", "Australia/Sydney")


def _id(folder: Path) -> str:
    return folder.relative_to(ROOT).as_posix()


def _argocd_cm(path: Path) -> dict:
    return next(d for d in yaml.safe_load_all(path.read_text(encoding="utf-8"))
                if d and d["kind"] == "ConfigMap" and d["metadata"]["name"] == "argocd-cm")


def _requests(folder: Path, source: dict) -> tuple[list[dict], list[dict]]:
    tests = yaml.safe_load((folder / "health_test.yaml").read_text(encoding="utf-8"))["tests"]
    requests = [{**source, "objectYAML": (folder / t["inputPath"]).read_text(encoding="utf-8")} for t in tests]
    return requests, [t["healthStatus"] for t in tests]


def test_argo_cds_own_bundled_checks_pass_through_the_harness():
    """Argo CD's util/lua health_test.go, over the checks compiled into Argo CD v3.5.1."""
    proc = subprocess.run([str(engine().binary), "bundled"], capture_output=True, text=True)
    last = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    checks, cases, failed = map(int, re.fullmatch(r"(\d+) checks, (\d+) cases, (\d+) failed", last).groups())
    assert checks >= 200 and cases >= 1000 and failed == 0


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("folder", FOLDERS, ids=_id)
def test_every_case_passes_from_its_folder(folder, zone):
    script = (folder / "health.lua").read_text(encoding="utf-8")
    requests, want = _requests(folder, {"script": script, "openLibs": needs_open_libs(script)})
    assert engine().run(requests, zone) == want


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("gitops", GITOPS, ids=lambda p: p.name)
def test_every_case_passes_through_the_emitted_argocd_cm(gitops, zone):
    """The checks as the build wrote them, read as Argo CD reads argocd-cm: every check
    found for its kind, with the libraries its key grants."""
    cm = _argocd_cm(gitops)
    for folder in FOLDERS:
        requests, want = _requests(folder, {"configmap": cm})
        assert engine().run(requests, zone) == want, _id(folder)


def test_the_emitted_checks_are_the_shipped_ones():
    for gitops in GITOPS:
        data = _argocd_cm(gitops)["data"]
        for folder in FOLDERS:
            group, kind = folder.relative_to(ROOT).parts
            script = (folder / "health.lua").read_text(encoding="utf-8")
            assert data[f"resource.customizations.health.{group}_{kind}"] == script
            assert data.get(f"resource.customizations.useOpenLibs.{group}_{kind}") == (
                "true" if needs_open_libs(script) else None)


@pytest.mark.parametrize("folder", FOLDERS, ids=_id)
def test_use_open_libs_is_set_exactly_where_a_check_needs_it(folder):
    """Both ways: without the key, a check that names a library fails on some case (Argo CD
    shows Unknown and the Lua error); one that names none passes every case without it."""
    script = (folder / "health.lua").read_text(encoding="utf-8")
    requests, want = _requests(folder, {"script": script, "openLibs": False})
    got = engine().run(requests)
    if needs_open_libs(script):
        failed = [g for g in got if g.get("error")]
        assert failed and all(g["status"] == "Unknown" for g in failed)
        assert any("attempt to index a non-table object(nil)" in g["message"] for g in failed)
    else:
        assert got == want


def test_the_engine_is_argo_cds_not_lua_5_1():
    """What tells gopher-lua under Argo CD's set-up apart from lupa's Lua 5.1."""
    e = engine()

    def message(code: str, open_libs: bool, obj: dict | None = None) -> str:
        got = e.script(f"return {{status = 'Healthy', message = {code}}}", obj or {}, open_libs)
        assert got["status"] == "Healthy", got
        return got["message"]

    assert message("type(string) .. ' ' .. type(os) .. ' ' .. type(math) .. ' ' .. type(io)", False) \
        == "nil nil nil nil"
    assert message("type(string) .. ' ' .. type(os.execute)", True) == "table function"
    # Without the libraries, require("os") still finds oslib_safe.go's module: time and date only.
    assert message("type(require('os').time) .. ' ' .. type(require('os').execute)", False) == "function nil"
    assert message("tostring(tonumber('1e4')) .. ' ' .. tostring(tonumber(' 0x10 '))", False) == "nil 16"
    assert message("tostring(2.5) .. ' ' .. tostring(1e21) .. ' ' .. tostring(12345678.5)", False) \
        == "2.5 1e+21 1.23456785e+07"
    # Null items vanish from lists; the items after them close up.
    assert message("#obj.a .. ' ' .. obj.a[2]", False, {"a": [1, None, 3]}) == "2 3"
    assert e.script("return {status = 'Fine'}", {}, True) == {
        "status": "Unknown", "message": "Lua returned an invalid health status"}
    assert e.script("return {}", {}, True) == {}
    broken = e.script("return obj.x.y", {}, True)
    assert broken["error"] and broken["status"] == "Unknown" and "non-table object(nil)" in broken["message"]
    assert e.script("while true do end", {}, True)["error"]


def _dst_span(zone: str) -> int:
    """Whole days back from now to a time on the other side of a daylight-saving change."""
    tz = zoneinfo.ZoneInfo(zone)
    now = datetime.datetime.now(datetime.UTC)
    for days in range(30, 400, 10):
        if (now - datetime.timedelta(days=days)).astimezone(tz).utcoffset() != now.astimezone(tz).utcoffset():
            return days
    raise AssertionError(f"{zone} has no daylight-saving change in a year")


@pytest.mark.parametrize("zone", ["America/New_York", "Australia/Sydney", "Europe/Berlin"])
@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "DisaggregatedSet"])
def test_a_deadline_across_a_daylight_saving_change_counts_true_seconds(kind, zone):
    """A Progressing condition that started on the other side of a DST change: half an hour
    inside its deadline is Progressing, half an hour past it Degraded, in the controller's zone
    (os.time on a date table would be an hour off)."""
    folder = next(f for f in FOLDERS if f.name == kind)
    script = (folder / "health.lua").read_text(encoding="utf-8")
    span = _dst_span(zone) * 86400
    for offset, want in ((-1800, "Progressing"), (1800, "Degraded")):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - span - offset))
        obj = {"apiVersion": "x/v1", "kind": kind,
               "metadata": {"generation": 1,
                            "annotations": {"manifesto.llm-d.ai/progress-deadline-seconds": str(span)}},
               "spec": {"replicas": 2, "roles": [{"name": "a"}, {"name": "b"}]},
               "status": {"observedGeneration": 1, "conditions": [
                   {"type": "Progressing", "status": "True", "lastTransitionTime": stamp}]}}
        got = engine().script(script, obj, True, zone)
        assert got["status"] == want and got == health(obj), (zone, stamp, got)


def _with_nulls(value):
    """``value`` with a null before and after every list's items, at every depth."""
    if isinstance(value, dict):
        return {k: _with_nulls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [None, *(x for v in value for x in (_with_nulls(v), None))]
    return value


@pytest.mark.parametrize("folder", FOLDERS, ids=_id)
def test_null_items_are_ignored_as_argo_cd_drops_them(folder):
    """Argo CD drops a list's null items when it builds obj: every case gives its recorded
    verdict with nulls strewn through its lists, and manifesto status agrees."""
    script = (folder / "health.lua").read_text(encoding="utf-8")
    cases = health_cases(folder)
    objs = [_with_nulls(obj) for _path, obj, _want in cases]
    got = engine().run([{"script": script, "openLibs": True, "object": o} for o in objs])
    assert got == [want for _path, _obj, want in cases]
    assert [health(o) for o in objs] == got


@pytest.mark.parametrize("folder", FOLDERS, ids=_id)
def test_a_check_never_answers_unknown_for_a_controller_s_object(folder):
    """Every test object, with its lists' items interleaved with nulls, its status emptied
    or missing, still gets a verdict that is not a script error."""
    script = (folder / "health.lua").read_text(encoding="utf-8")
    objs = []
    for _path, obj, _want in health_cases(folder):
        objs.append(obj)
        objs.append({**obj, "status": {}})
        objs.append({k: v for k, v in obj.items() if k != "status"})
        status = obj.get("status") or {}
        objs.append({**obj, "status": {k: ([None, *v, None] if isinstance(v, list) else v) for k, v in status.items()}})
    got = engine().run([{"script": script, "openLibs": True, "object": o} for o in objs])
    for o, g in zip(objs, got):
        assert not g.get("error") and g["status"] != "Unknown", (o, g)


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "InferencePool", "DisaggregatedSet"])
def test_manifesto_status_agrees_with_argo_cd_on_half_written_objects(kind):
    """``manifesto.ops.health`` against the engine (not Lua 5.1), on objects of every odd
    shape, odd numbers included (gopher-lua writes 2.5, 1e+21 and 1.23456785e+07 its own way)."""
    from test_health_agreement import ODD

    folder = next(f for f in FOLDERS if f.name == kind)
    script = (folder / "health.lua").read_text(encoding="utf-8")
    numbers = [{"spec": {"replicas": n, "roles": [{"name": "a", "spec": {"replicas": n}}]},
                "status": {"readyReplicas": n / 3, "observedGeneration": 1, "roleStatuses": [
                    {"name": "a", "readyReplicas": n / 3, "updatedReplicas": 1e21}],
                    "conditions": [{"type": "Progressing", "status": "True",
                                    "lastTransitionTime": "2026-13-40T25:61:61Z"}]}}
               for n in (2.5, 12345678.5, 1e21, 7)]
    deadlines = [{"metadata": {"annotations": {"manifesto.llm-d.ai/progress-deadline-seconds": d}},
                  "status": {"observedGeneration": 1, "conditions": [
                      {"type": "Progressing", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}}
                 for d in ("1e4", " 60", "0x10", "0", "999999999", "1000000000", "٣", 60)]
    objs = [{"apiVersion": "x/v1", "kind": kind, **o} for o in (*ODD, *numbers, *deadlines)]
    got = engine().run([{"script": script, "openLibs": True, "object": o} for o in objs])
    assert [health(o) for o in objs] == got


def test_the_harness_runs_health_test_folders_for_held_out_fixtures(tmp_path):
    """``argocd-lua test [--argocd-cm FILE] FOLDER...``: what a reviewer runs on fixtures of
    their own; it fails on a case whose recorded verdict the engine does not give."""
    binary = str(engine().binary)
    folders = [str(f) for f in FOLDERS]
    for extra in ([], ["--argocd-cm", str(GITOPS[0])]):
        proc = subprocess.run([binary, "test", *extra, *folders], capture_output=True, text=True,
                              env={"TZ": "Europe/Berlin"})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.splitlines()[-1] == f"{sum(len(health_cases(f)) for f in FOLDERS)} cases, 0 failed"
    wrong = tmp_path / "LeaderWorkerSet"
    wrong.mkdir()
    source = next(f for f in FOLDERS if f.name == "LeaderWorkerSet")
    (wrong / "health.lua").write_text((source / "health.lua").read_text())
    (wrong / "testdata").mkdir()
    (wrong / "testdata" / "healthy.yaml").write_text((source / "testdata" / "healthy.yaml").read_text())
    (wrong / "health_test.yaml").write_text(yaml.safe_dump({"tests": [
        {"inputPath": "testdata/healthy.yaml", "healthStatus": {"status": "Degraded", "message": "x"}}]}))
    for extra in ([], ["--argocd-cm", str(GITOPS[0])]):
        proc = subprocess.run([binary, "test", *extra, str(wrong)], capture_output=True, text=True)
        assert proc.returncode == 1 and proc.stdout.startswith("FAIL ") and "1 cases, 1 failed" in proc.stdout


def test_through_argocd_cm_the_engine_decides_as_the_controller_does():
    """Before any check, an object being deleted is Progressing (gitops-engine
    GetResourceHealth); a kind argocd-cm has no key for gets Argo CD's built-in Lua check, or
    none; a bad useOpenLibs value breaks every custom check (settings cannot load)."""
    cm = _argocd_cm(GITOPS[0])
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "spec": {"replicas": 0}}
    deleting = {**lws, "metadata": {"deletionTimestamp": "2026-12-01T00:00:00Z"}}
    hook = {**lws, "metadata": {**deleting["metadata"], "finalizers": ["argocd.argoproj.io/hook-finalizer"]}}
    broken = {"data": {**cm["data"], "resource.customizations.useOpenLibs.leaderworkerset.x-k8s.io_LeaderWorkerSet": "yes"}}
    got = engine().run([{"configmap": cm, "object": o} for o in (lws, deleting, hook)]
                       + [{"configmap": {"data": {}}, "object": {"apiVersion": "v1", "kind": "Pod"}},
                          {"configmap": {"data": {}}, "object": lws},
                          {"configmap": broken, "object": lws}])
    assert [g.get("status") for g in got[:3]] == ["Suspended", "Progressing", "Suspended"]
    assert got[1]["message"] == "Pending deletion"
    assert got[3] == {"none": True} and got[4] == {"none": True}
    assert got[5]["error"] and "ParseBool" in got[5]["message"]


@pytest.mark.parametrize("stamp", ["2026-12-01T00:00:00Z", "2026-12-01T00:00:00.5+05:30", "2026-02-30T00:00:00Z",
                                   "2026-12-01 00:00:00Z", "2026-12-01T00:00:00", "0001-01-01T00:00:00Z",
                                   "2026-12-01T00:00:00+24:00", "2026-12-01T00:00:00+23:60", "2026-12-01T00:00:00+25:00",
                                   "2026-12-01T00:00:00,5Z", "0001-01-01T01:00:00+01:00", "0001-01-01T00:00:00+01:00", "2026-12-01T24:00:00Z", "", 5])
@pytest.mark.parametrize("finalizers", [None, ["argocd.argoproj.io/hook-finalizer"], ["x", 3], ["other"]])
def test_manifesto_status_sees_pending_deletion_as_argo_cd_does(stamp, finalizers):
    cm = _argocd_cm(GITOPS[0])
    meta = {"deletionTimestamp": stamp, **({"finalizers": finalizers} if finalizers is not None else {})}
    obj = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": meta,
           "spec": {"replicas": 0}}
    (got,) = engine().run([{"configmap": cm, "object": obj}])
    assert health(obj) == got
