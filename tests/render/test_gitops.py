"""GitOps delivery through Argo CD (issue 28): the committed out/gitops/ objects against the kit
and BUILD.yaml, ignoreDifferences against what the idle-shutdown controller really patches,
sync waves against what workloads mount, and `diff --base` on a wave-only change."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import yaml

from kit import REPO_ROOT, cli_in_process, plan_of, validate_manifests

from manifesto.ops.targets import parse_objects
from manifesto.tasks import health_checks
from manifesto.render.gitops import ignore_differences
from manifesto.render.k8s.waves import ANNOTATION, STAGES, WAVES, stage_of, with_waves

OUT = REPO_ROOT / "out"
GITOPS = sorted((OUT / "gitops").glob("*.yaml"))
#: Every committed Kubernetes artifact of a spec (the deployment targets' and the matrix's).
K8S_ARTIFACTS = sorted(p for p in OUT.rglob("*.yaml") if ".cache" not in p.parts
                       and p.relative_to(OUT).parts[0] not in ("gitops", "monitoring"))
WORKLOADS = ("Deployment", "LeaderWorkerSet")


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _applications() -> list[dict]:
    return [d for p in GITOPS for d in _docs(p) if d["kind"] == "Application"]


# ---------------------------------------------------------------- the committed artifact


def test_the_bundled_build_has_a_gitops_artifact():
    assert [p.name for p in GITOPS] == ["argocd.yaml"]


@pytest.mark.integration  # the kit's validator runs as a process
@pytest.mark.parametrize("path", GITOPS, ids=lambda p: p.name)
def test_every_gitops_object_validates_against_the_kit(path):
    validate_manifests(path.read_text())  # Application against Argo CD v3.5.1's CRD, argocd-cm as a ConfigMap


def _targets(kind: str) -> dict:
    from manifesto.build_graph.buildfile import parse_buildfile

    config, _ = parse_buildfile(str(REPO_ROOT / "BUILD.yaml"), "BUILD.yaml")
    return {g.name: g for g in config["generators"] if g.kind == kind}


def _by_folder(folder: str) -> list[dict]:
    return [a for a in _applications() if a["spec"]["source"]["path"] == f"out/{folder}"]


def test_every_deployment_target_is_covered_and_its_file_exists():
    deployments = _targets("deployment")
    assert deployments
    apps = _by_folder("deploy")
    assert {a["metadata"]["name"] for a in apps} == set(deployments)
    for app in apps:
        source = app["spec"]["source"]
        assert (OUT / "deploy" / source["directory"]["include"]).is_file()
        assert app["spec"]["syncPolicy"]["syncOptions"] == ["ServerSideApply=true", "CreateNamespace=true"]
        assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]
        assert app["spec"]["destination"]["namespace"] == next(
            o["metadata"]["namespace"] for o in _docs(OUT / "deploy" / source["directory"]["include"]))


def test_every_monitoring_target_on_a_delivered_cluster_has_an_application():
    monitoring = _targets("monitoring")
    assert monitoring
    apps = _by_folder("monitoring")
    assert {a["metadata"]["name"] for a in apps} == set(monitoring)
    for app in apps:
        path = OUT / "monitoring" / app["spec"]["source"]["directory"]["include"]
        namespaces = {o["metadata"].get("namespace") for o in _docs(path)} - {None}
        assert namespaces == {app["spec"]["destination"]["namespace"]}
        assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]


def test_the_root_application_syncs_its_own_file_and_prunes():
    """App of apps: the root owns every Application of the file (itself included), so one a
    rebuild drops is pruned, and the argocd-cm patch, which Argo CD must never delete."""
    for path in GITOPS:
        roots = [a for a in _applications() if a["spec"]["source"]["path"] == "out/gitops"]
        (root,) = roots
        assert root["metadata"]["name"] == path.stem
        assert root["spec"]["source"]["directory"]["include"] == path.name
        assert root["spec"]["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "argocd"}
        assert root["spec"]["syncPolicy"] == {"automated": {"prune": True, "selfHeal": True},
                                             "syncOptions": ["ServerSideApply=true"]}
        assert "finalizers" not in root["metadata"]  # it is its own resource: a cascade would never end
        (cm,) = [d for d in _docs(path) if d["kind"] == "ConfigMap"]
        assert cm["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
        assert int(cm["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]) < 0


def test_the_argocd_cm_patch_holds_every_bundled_health_check():
    from manifesto.render.gitops import needs_open_libs

    (cm,) = [d for p in GITOPS for d in _docs(p) if d["kind"] == "ConfigMap"]
    assert cm["metadata"]["name"] == "argocd-cm"
    checks = health_checks()
    assert checks, "no health.lua under manifesto/data/argocd/resource_customizations"
    want = {f"resource.customizations.health.{group}_{kind}": Path(path).read_text() for group, kind, path in checks}
    want |= {f"resource.customizations.useOpenLibs.{group}_{kind}": "true" for group, kind, path in checks
             if needs_open_libs(Path(path).read_text())}
    assert cm["data"] == want
    assert "resource.customizations.useOpenLibs.leaderworkerset.x-k8s.io_LeaderWorkerSet" in cm["data"]


def test_needs_open_libs_reads_code_not_comments():
    from manifesto.render.gitops import needs_open_libs

    assert needs_open_libs("local y = string.match(s, 'x')")
    assert needs_open_libs("return os.time()") and needs_open_libs("x = math .floor(1)")
    assert not needs_open_libs("-- string.match and os.time in a comment\nreturn {status = 'Healthy'}")
    assert not needs_open_libs("local strings = {}\nreturn table.concat(strings, ',')")


def test_covered_deployments_carry_waves_and_nothing_else_does():
    """Only the deployment targets a gitops target covers change; the matrix stays as it was."""
    covered = {OUT / "deploy" / a["spec"]["source"]["directory"]["include"] for a in _applications()}
    for path in K8S_ARTIFACTS:
        objs = parse_objects(path.read_text())
        waves = [((o["metadata"].get("annotations") or {}).get(ANNOTATION)) for o in objs]
        if path in covered:
            assert waves == [str(WAVES[stage_of(o)]) for o in objs], path
            assert "--argocd-sync-waves" in path.read_text().split("\n---", 1)[0]
        else:
            assert waves == [None] * len(objs), path


# ---------------------------------------------------------------- ignoreDifferences vs the controller


def _controller_env(objs: list[dict]) -> dict:
    (dep,) = [o for o in objs if o["kind"] == "Deployment"
              and o["metadata"]["labels"].get("app.kubernetes.io/component") == "idle-shutdown"]
    env = {e["name"]: e["value"] for e in dep["spec"]["template"]["spec"]["containers"][0]["env"] if "value" in e}
    return {**env, "NAMESPACE": dep["metadata"]["namespace"]}


def _kinds_by_path(objs: list[dict]) -> dict[str, tuple[str, str, str]]:
    out = {}
    for o in objs:
        version, meta = o["apiVersion"], o["metadata"]
        base = f"/apis/{version}" if "/" in version else f"/api/{version}"
        out[f"{base}/namespaces/{meta['namespace']}/{o['kind'].lower()}s/{meta['name']}"] = (
            version.rpartition("/")[0], o["kind"], meta["name"])
    return out


def _leaves(body, prefix=""):
    """The JSON pointer (RFC 6901: "~" as "~0", "/" as "~1") of every leaf of a patch body."""
    if isinstance(body, dict):
        for key, value in body.items():
            yield from _leaves(value, f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}")
    else:
        yield prefix


def _scale_to_zero(objs: list[dict], tmp_path) -> list[tuple]:
    """Drive the shipped controller's shutdown against a fake Kubernetes API (tests/ops/test_idle_controller)
    configured as the artifact configures it; the PATCH and DELETE requests it made."""
    from test_idle_controller import FakeKube, ic

    kube = FakeKube()
    try:
        env = _controller_env(objs)
        config = ic.load_config(env)
        kube.replicas = {w.path: w.replicas for w in (*config.workloads, config.controller)}
        kube.gateways = {config.gateway.path} if config.gateway else set()
        kube.pool_path = config.pool.path if config.pool else None
        token = tmp_path / "token"
        token.write_text("t\n")
        controller = ic.Controller(ic.load_config({**env, "KUBERNETES_API": f"http://127.0.0.1:{kube.port}",
                                                   "KUBERNETES_TOKEN_FILE": str(token),
                                                   "KUBERNETES_CA_FILE": str(tmp_path / "none")}),
                                   log=lambda _: None)
        assert controller.shutdown(ic.State(), 0.0) == "stopped"
        return kube.mutations()
    finally:
        kube.stop()


#: Artifacts with an idle-shutdown controller of every shape: one Deployment, P/D with an
#: endpoint picker, LeaderWorkerSets.
IDLE_CASES = ["deploy/qwen-demo.yaml", "example-gb200/qwen/qwen3-0.6b-pd.yaml",
              "example-gb200/deepseek-v4/1P-EP8-1D-EP8.yaml", "example-gb200/kimi-k3/aggregated-tp16-ep16.yaml"]


@pytest.mark.parametrize("rel", IDLE_CASES)
def test_the_controllers_scale_to_zero_touches_only_ignored_fields(rel, tmp_path):
    objs = parse_objects((OUT / rel).read_text())
    if rel.startswith("deploy/"):  # the committed Application's own ignoreDifferences
        (app,) = [a for a in _applications() if a["spec"]["source"]["directory"]["include"] == Path(rel).name]
        ignored = app["spec"]["ignoreDifferences"]
    else:
        ignored = ignore_differences(objs)
    covered = {(i["group"], i["kind"], i["name"], p) for i in ignored for p in i["jsonPointers"]}
    by_path = _kinds_by_path(objs)
    patched = set()
    mutations = _scale_to_zero(objs, tmp_path)
    assert mutations, rel
    for method, path, body in mutations:
        if method == "DELETE":  # the Gateway: deleted, not a field (see the README)
            assert by_path[path][1] == "Gateway"
            continue
        assert method == "PATCH"
        group, kind, name = by_path[path]
        for pointer in _leaves(body):
            assert (group, kind, name, pointer) in covered, (rel, path, pointer)
            patched.add((group, kind, name, pointer))
    assert patched == covered, "an ignoreDifferences entry the controller never writes"
    assert all(i["namespace"] == "example-ns" or i["namespace"] == "demo" for i in ignored)


def test_ignore_differences_follow_the_controllers_patch_body(monkeypatch):
    """The fields come from the AST of Kube.scale: a controller patching another field would be
    ignored under that field (so Argo CD can never lag behind it)."""
    from manifesto.render.k8s import idle, idle_owned

    script = idle.controller_script()
    changed = script.replace('{"spec": {"replicas": replicas}}', '{"spec": {"replicas": replicas, "paused": True}}')
    assert changed != script
    idle_owned.scale_patch_paths.cache_clear()
    monkeypatch.setattr(idle, "controller_script", lambda: changed)
    try:
        objs = parse_objects((OUT / "deploy/qwen-demo.yaml").read_text())
        assert {tuple(i["jsonPointers"]) for i in ignore_differences(objs)} == {("/spec/replicas", "/spec/paused")}
    finally:
        idle_owned.scale_patch_paths.cache_clear()


def test_no_idle_controller_no_ignore_differences():
    objs = [o for o in parse_objects((OUT / "deploy/qwen-demo.yaml").read_text())
            if o["metadata"]["labels"].get("app.kubernetes.io/component") != "idle-shutdown"]
    assert ignore_differences(objs) == []


# ---------------------------------------------------------------- sync waves


def _wave(obj: dict) -> int:
    return int(obj["metadata"]["annotations"][ANNOTATION])


def _mounted(obj: dict) -> set[tuple[str, str]]:
    """(kind, name) of every ConfigMap, Secret, ServiceAccount and claim template a workload's
    pods mount, read or run as."""
    found: set[tuple[str, str]] = set()
    spec = obj["spec"]
    templates = ([spec["template"]] if "template" in spec else
                 [t for t in (spec["leaderWorkerTemplate"].get("leaderTemplate"),
                              spec["leaderWorkerTemplate"]["workerTemplate"]) if t])
    for template in templates:
        pod = template["spec"]
        if pod.get("serviceAccountName"):
            found.add(("ServiceAccount", pod["serviceAccountName"]))
        for volume in pod.get("volumes") or []:
            if "configMap" in volume:
                found.add(("ConfigMap", volume["configMap"]["name"]))
            if "secret" in volume:
                found.add(("Secret", volume["secret"]["secretName"]))
            for source in (volume.get("projected") or {}).get("sources") or []:
                for kind, key in (("ConfigMap", "configMap"), ("Secret", "secret")):
                    if key in source:
                        found.add((kind, source[key]["name"]))
            claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                found.add(("PersistentVolumeClaim", claim))
        for claim in pod.get("resourceClaims") or []:
            if claim.get("resourceClaimTemplateName"):
                found.add(("ResourceClaimTemplate", claim["resourceClaimTemplateName"]))
        for container in [*(pod.get("initContainers") or []), *pod["containers"]]:
            for ref in container.get("envFrom") or []:
                for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                    if key in ref:
                        found.add((kind, ref[key]["name"]))
            for env in container.get("env") or []:
                source = env.get("valueFrom") or {}
                for kind, key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
                    if key in source:
                        found.add((kind, source[key]["name"]))
    return found


@pytest.mark.parametrize("path", K8S_ARTIFACTS, ids=lambda p: p.relative_to(OUT).as_posix())
def test_sync_waves_order_workloads_after_what_they_mount(path):
    objs = with_waves(parse_objects(path.read_text()))
    by_key = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    checked = 0
    for obj in objs:
        if obj["kind"] not in WORKLOADS:
            continue
        for ref in _mounted(obj):
            if ref in by_key:  # hf-secret and the shared cache claim live outside the artifact
                assert _wave(by_key[ref]) < _wave(obj), (path.name, obj["metadata"]["name"], ref)
                checked += 1
    assert checked, "no workload mounts anything of its artifact"
    stages = [stage_of(o) for o in objs]
    servers = [_wave(o) for o, s in zip(objs, stages) if s == "model servers"]
    routing = [_wave(o) for o, s in zip(objs, stages) if s == "routing"]
    monitoring = [_wave(o) for o, s in zip(objs, stages) if s == "monitoring"]
    assert servers and max(servers) < min(routing or [99]) and max(servers + routing) < min(monitoring or [99])
    assert all(_wave(o) == WAVES["prerequisites"] for o in objs if o["kind"] in ("ConfigMap", "Secret", "Role"))


def test_sync_waves_add_one_annotation_and_nothing_else():
    """kubectl apply sees the same objects in the same order: only the annotation differs."""
    objs = parse_objects((OUT / "example-gb200/deepseek-v4/1P-EP8-1D-EP8.yaml").read_text())
    waved = with_waves(objs)
    assert [(o["kind"], o["metadata"]["name"]) for o in waved] == [(o["kind"], o["metadata"]["name"]) for o in objs]
    for before, after in zip(objs, waved):
        notes = dict(after["metadata"]["annotations"])
        assert notes.pop(ANNOTATION) in {str(w) for w in range(len(STAGES))}
        assert {**after, "metadata": {**after["metadata"], "annotations": notes}} == before


def test_an_unknown_component_has_no_wave():
    with pytest.raises(ValueError, match="no Argo CD sync wave for Deployment/x"):
        stage_of({"kind": "Deployment", "metadata": {"name": "x", "labels": {}}})


def test_the_render_option_adds_waves_and_defaults_to_none():
    from manifesto.render.k8s import objects

    model, cluster = REPO_ROOT / "models/qwen/qwen3-0.6b-pd.yaml", REPO_ROOT / "clusters/example-gb200.yaml"
    plain, _, _ = plan_of(model, cluster)
    waved, _, _ = plan_of(model, cluster, argocd_sync_waves=True)
    assert plain.sync_waves is False and waved.sync_waves is True
    assert objects(waved) == with_waves(objects(plain))
    assert objects(msgspec.structs.replace(waved, sync_waves=False)) == objects(plain)


def test_diff_base_classes_a_wave_only_change_as_in_place():
    from manifesto.review import semdiff

    common = ("deepseek-v4/1P-EP8-1D-EP8", "--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
    rc, before, err = cli_in_process("render", "manifest", *common)
    assert rc == 0, err
    rc, after, err = cli_in_process("render", "manifest", *common, "--argocd-sync-waves")
    assert rc == 0, err
    result = semdiff.diff_builds("base", {"deploy/x.yaml": before}, {"deploy/x.yaml": after})
    (artifact,) = result.artifacts
    assert artifact.objects and all(o.impact is semdiff.Impact.IN_PLACE for o in artifact.objects)
    assert result.impact is semdiff.Impact.IN_PLACE and artifact.roles == ()
    assert {o.kind for o in artifact.objects} >= {"LeaderWorkerSet", "InferencePool", "ConfigMap"}
    assert {o.why for o in artifact.objects if o.kind in ("Deployment", "LeaderWorkerSet")} == {
        "no pod template change"}
    assert json.loads(json.dumps(msgspec.to_builtins(result)))["impact"] == "in place"


# ---------------------------------------------------------------- fleets that prune


def _git(repo: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


FLEET = """\
targets:
  - kind: cluster
    path: clusters
    sources: ["*.yaml"]
  - kind: model
    path: models
    sources: ["*.yaml"]
    options: {user: ci, namespace: mon}
  - kind: deployment
    name: small
    model: //models:qwen3-0.6b
    cluster: gb
    namespace: demo
    user: alice
    context: gb-admin
"""
SECOND = """\
  - kind: deployment
    name: pd
    model: //models:qwen3-0.6b-pd
    cluster: gb
    namespace: demo2
    user: alice
    context: gb-admin
"""
REST = """\
  - kind: monitoring
    name: gb-monitoring
    cluster: gb
    user: ci
    namespace: mon
  - kind: gitops
    name: fleet
    repo_url: https://git.example.com/llms.git
    revision: main
"""


@pytest.mark.integration  # git
def test_removing_a_deployment_target_prunes_its_application_and_diff_says_so(tmp_path, monkeypatch):
    repo = tmp_path / "ws"
    (repo / "models").mkdir(parents=True)
    (repo / "clusters").mkdir()
    (repo / "clusters" / "gb.yaml").write_text((REPO_ROOT / "clusters" / "example-gb200.yaml").read_text())
    for name in ("qwen3-0.6b.yaml", "qwen3-0.6b-pd.yaml"):
        (repo / "models" / name).write_text((REPO_ROOT / "models" / "qwen" / name).read_text())
    (repo / "BUILD.yaml").write_text(FLEET + SECOND + REST)
    monkeypatch.chdir(repo)
    _git(repo, "init", "-q")
    built = cli_in_process("build", "-q")
    assert built.returncode == 0, built.stderr
    apps = {a["metadata"]["name"]: a for a in _docs(repo / "out/gitops/fleet.yaml") if a["kind"] == "Application"}
    assert set(apps) == {"fleet", "small", "pd", "gb-monitoring"}
    assert apps["gb-monitoring"]["spec"]["destination"] == {"name": "gb-admin", "namespace": "mon"}
    validate_manifests((repo / "out/gitops/fleet.yaml").read_text())
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")

    (repo / "BUILD.yaml").write_text(FLEET + REST)
    built = cli_in_process("build", "-q")
    assert built.returncode == 0, built.stderr
    apps = {a["metadata"]["name"] for a in _docs(repo / "out/gitops/fleet.yaml") if a["kind"] == "Application"}
    assert apps == {"fleet", "small", "gb-monitoring"}
    report = cli_in_process("diff", "--base", "HEAD", "//:fleet")
    assert report.returncode == 0, report.stderr
    assert "  Application/pd: removed, recreate (Argo CD deletes out/deploy/pd.yaml with it; its model servers " \
           "stop)" in report.stdout.splitlines()
    assert report.stdout.splitlines()[0] == "gitops/fleet.yaml: changed, recreate"
    assert cli_in_process("diff", "--base", "HEAD", "//:fleet", "--fail-on-recreate").returncode == 3


def test_diff_base_says_what_removing_each_kind_of_application_does():
    from manifesto.review import semdiff

    text = (OUT / "gitops" / "argocd.yaml").read_text()
    docs = text.split("\n---\n")

    def without(name: str) -> str:
        return "\n---\n".join(d for d in docs if f"kind: Application\nmetadata:\n  name: {name}\n" not in d)

    def change(after: str) -> tuple:
        result = semdiff.diff_builds("base", {"gitops/argocd.yaml": text}, {"gitops/argocd.yaml": after})
        (artifact,) = result.artifacts
        (obj,) = artifact.objects
        return obj.kind, obj.name, obj.change, obj.impact, obj.why

    assert change(without("qwen-demo")) == ("Application", "qwen-demo", "removed", semdiff.Impact.RECREATE,
                                            "Argo CD deletes out/deploy/qwen-demo.yaml with it; its model servers stop")
    assert change(without("example-gb200")) == ("Application", "example-gb200", "removed", semdiff.Impact.IN_PLACE,
                                                "Argo CD deletes out/monitoring/example-gb200.yaml with it")
    # Without the finalizer (an Application written by hand or by an older build), nothing is deleted.
    bare = "\n---\n".join(d.replace("  finalizers:\n  - resources-finalizer.argocd.argoproj.io\n", "") for d in docs)
    result = semdiff.diff_builds("base", {"gitops/argocd.yaml": bare},
                                 {"gitops/argocd.yaml": "\n---\n".join(
                                     d for d in bare.split("\n---\n")
                                     if "kind: Application\nmetadata:\n  name: qwen-demo\n" not in d)})
    (obj,) = result.artifacts[0].objects
    assert (obj.change, obj.impact) == ("removed", semdiff.Impact.IN_PLACE) and "stays running" in obj.why
