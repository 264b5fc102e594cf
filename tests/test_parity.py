"""Reference-parity items of issue 18 that are not monitoring: gateway sizing, the provenance
commit, reference-format keys."""

from __future__ import annotations

import yaml

import kit
from kit import plan_of

GOLDEN = kit.REPO_ROOT / "tests/golden"


def _gateway_patch(cluster_text: str | None = None, tmp_path=None) -> dict:
    from manifesto.render.k8s import objects

    cluster = GOLDEN / "load-aware-gateway/cluster.yaml"
    if cluster_text is not None:
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(cluster_text)
    plan, _, _ = plan_of(GOLDEN / "load-aware-gateway/model.yaml", cluster)
    (cm,) = [o for o in objects(plan) if o["metadata"]["name"].endswith("-gateway-options")]
    return yaml.safe_load(cm["data"]["deployment"])["spec"]["template"]["spec"]["containers"][0]


def test_gateway_proxy_is_production_sized_and_guaranteed_by_default():
    proxy = _gateway_patch()
    assert proxy == {"name": "istio-proxy", "resources": {"requests": {"cpu": "8", "memory": "64Gi"},
                                                         "limits": {"cpu": "8", "memory": "64Gi"}}}


def test_gateway_proxy_size_comes_from_the_cluster_profile(tmp_path):
    text = (GOLDEN / "load-aware-gateway/cluster.yaml").read_text()
    assert "sizing" not in text
    data = yaml.safe_load(text)
    data.setdefault("llm_d", {})["sizing"] = {"gateway_proxy": {"cpu": "2", "memory": "4Gi"}}
    proxy = _gateway_patch(yaml.safe_dump(data), tmp_path)
    assert proxy["resources"] == {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}}


# --------------------------------------------------------------------------- reference-format keys

import pytest  # noqa: E402

from kit import cli_in_process  # noqa: E402

REPO = kit.REPO_ROOT
QWEN_PD = REPO / "models/qwen/qwen3-0.6b-pd.yaml"


def _validate(spec, cluster="example-gb200"):
    return cli_in_process("config", "validate", str(spec), "--cluster", str(cluster), "--user", "u",
                          "--namespace", "ns")


def test_reference_spellings_map_with_a_warning_naming_ours(tmp_path):
    spec = tmp_path / "ref.yaml"
    spec.write_text(f"extends: {QWEN_PD}\nmodel:\n  served_name: qwen-small\nruntime:\n  env: {{FOO: '1'}}\n"
                    "roles:\n  decode:\n    vllm_args: {max_model_len: 4096}\n    routing_proxy: true\n"
                    "    profiling: {profiler: torch, trace_dir: /tmp/traces}\n")
    rc, out, err = _validate(spec)
    assert rc == 0, err
    name = str(spec)
    assert err.splitlines() == [
        f"manifesto: warning: {name}:3:3: model.served_name is the reference's spelling; it is read as "
        "vllm.served_model_name",
        f"manifesto: warning: {name}:5:3: runtime.env is the reference's spelling; it is read as env",
        f"manifesto: warning: {name}:8:5: roles.decode.vllm_args is the reference's spelling; it is read as "
        "roles.decode.vllm",
        f"manifesto: warning: {name}:10:34: roles.decode.profiling.trace_dir is the reference's spelling; it is "
        "read as roles.decode.profiling.torch_profiler_dir",
        f"manifesto: warning: {name}:9:5: roles[1].routing_proxy is ignored: it restates what is derived: the P/D "
        "sidecar fronts the target role of a pd topology",
    ]
    from manifesto.cluster import load_cluster
    from manifesto.render import render_kubernetes
    from manifesto.spec import load_spec

    text = str(render_kubernetes(load_spec(str(spec), load_cluster("example-gb200")), user="u", namespace="ns"))
    assert "--served-model-name qwen-small" in text and '"torch_profiler_dir":"/tmp/traces"' in text
    assert "'name': 'FOO', 'value': '1'" in text


@pytest.mark.parametrize(("body", "error"), [
    ("routing:\n  epp_image: ghcr.io/x/epp:1\n", "3:3: routing.epp_image: the picker image is set per cluster here: "
     "llm_d.images.epp in the cluster profile (or llm_d.release, which picks the picker and the P/D sidecar of one "
     "router release from the image catalog); remove it from the spec. What changes: every spec rendered for that "
     "cluster runs that picker, and the sidecar stays on its release"),
    ("routing:\n  replicas: 2\n", "3:3: routing.replicas: one endpoint picker per instance is rendered; several "
     "replicas would each keep their own view of endpoint load, so it is not offered"),
    ("roles:\n  decode:\n    dp_load_balancing: external\n", "4:5: roles[1].dp_load_balancing: derived as "
     "'internal' here (it follows from routing.kind (llm-d routing balances DP ranks externally, direct serving "
     "internally)), not 'external'; remove it"),
])
def test_reference_keys_without_an_equivalent_are_refused_with_the_reason(tmp_path, body, error):
    spec = tmp_path / "ref.yaml"
    spec.write_text(f"extends: {QWEN_PD}\n{body}")
    rc, out, err = _validate(spec)
    assert (rc, out) == (1, "")
    assert err == f"error: {spec}:{error}\n"


def _cluster(tmp_path, pod_defaults: str, base: str = "clusters/example-gb200.yaml") -> str:
    import yaml as pyyaml

    data = pyyaml.safe_load((REPO / base).read_text())
    data["pod_defaults"] = {**data.get("pod_defaults", {}), **pyyaml.safe_load(pod_defaults)}
    path = tmp_path / "cluster.yaml"
    path.write_text(pyyaml.safe_dump(data, sort_keys=False))
    return str(path)


EXTRA = """\
extra_volumes:
  - {name: datasets, nfs: {server: nfs.example.com, path: /exports/datasets}}
  - {name: licence, secret: {secretName: vendor-licence}}
extra_volume_mounts:
  - {name: datasets, mountPath: /datasets, readOnly: true}
  - {name: licence, mountPath: /etc/licence/key.lic, subPath: key.lic, readOnly: true}
"""


@pytest.mark.integration
def test_extra_volumes_are_mounted_into_every_model_pod(tmp_path):
    from manifesto.cluster import load_cluster
    from manifesto.render import render_kubernetes, render_to_yaml
    from manifesto.spec import load_spec

    cluster = load_cluster(_cluster(tmp_path, EXTRA))
    objs = render_kubernetes(load_spec(str(QWEN_PD), cluster), user="u", namespace="ns")
    kit.validate_manifests(render_to_yaml(objs))
    pods = [o["spec"]["template"]["spec"] for o in objs if o["kind"] == "Deployment"
            and o["metadata"]["labels"].get("app.kubernetes.io/component") == "model-server"]
    assert len(pods) == 2
    for pod in pods:
        vols = {v["name"]: v for v in pod["volumes"]}
        assert vols["datasets"] == {"name": "datasets", "nfs": {"server": "nfs.example.com",
                                                                "path": "/exports/datasets"}}
        assert vols["licence"] == {"name": "licence", "secret": {"secretName": "vendor-licence"}}
        (vllm,) = [c for c in pod["containers"] if c["name"] == "vllm"]
        mounts = {m["name"]: m for m in vllm["volumeMounts"]}
        assert mounts["datasets"] == {"name": "datasets", "mountPath": "/datasets", "readOnly": True}
        assert mounts["licence"] == {"name": "licence", "mountPath": "/etc/licence/key.lic", "readOnly": True,
                                     "subPath": "key.lic"}


@pytest.mark.parametrize(("pod_defaults", "error"), [
    ("extra_volumes: [{name: shared, emptyDir: {}}]",
     "extra_volumes[0].name: volume name 'shared' is one the model pods already use"),
    ("extra_volumes: [{name: data, emptyDir: {}}]\nextra_volume_mounts: [{name: dat, mountPath: /data}]",
     "extra_volume_mounts[0].name: no extra volume is named 'dat' (did you mean 'data'?); declare it in "
     "pod_defaults.extra_volumes"),
    ("extra_volumes: [{name: data, emptyDir: {}}]\nextra_volume_mounts: [{name: data, mountPath: /mnt/shared}]",
     "extra_volume_mounts[0].mountPath: /mnt/shared is already a mount of the model pods"),
    ("extra_volumes: [{name: data, emptyDir: {}, hostPath: {path: /x}}]",
     "extra_volumes[0]: volume 'data' needs exactly one source (hostPath, persistentVolumeClaim, nfs, ...), got 2"),
    ("extra_volumes: [{name: data, hostpath: {path: /x}}]",
     "extra_volumes[0].hostpath: unknown volume source 'hostpath' (did you mean 'hostPath'?)"),
    ("extra_volumes: [{name: data, emptyDir: {}}]\nextra_volume_mounts: [{name: data, mountPath: /d, subPath: ../x}]",
     "extra_volume_mounts[0].subPath: '../x' must be a relative path inside the volume (no leading '/' or '..')"),
])
def test_extra_volume_errors_name_the_field(tmp_path, pod_defaults, error):
    rc, out, err = _validate(QWEN_PD, _cluster(tmp_path, pod_defaults))
    assert (rc, out) == (1, "")
    assert err.startswith("error: ") and f": pod_defaults.{error}" in err and err.count("\n") == 1, err


def test_extra_volumes_are_refused_on_slurm(tmp_path):
    cluster = _cluster(tmp_path, EXTRA, "clusters/example-slurm.yaml")
    rc, out, err = _validate(REPO / "models/qwen/qwen3-0.6b.yaml", cluster)
    assert (rc, out) == (1, "")
    assert err.endswith(": pod_defaults.extra_volumes: pod_defaults.extra_volumes are Kubernetes volumes, which "
                        "Slurm cluster 'example-slurm' cannot mount; bind host paths into the containers with "
                        "slurm.binds instead\n"), err


def test_imex_template_maps_onto_every_accelerator(tmp_path):
    import yaml as pyyaml

    data = pyyaml.safe_load((REPO / "clusters/example-h200.yaml").read_text())
    data.setdefault("fabric", {})["imex_resource_claim_template"] = "imex-channel"
    path = tmp_path / "cluster.yaml"
    path.write_text(pyyaml.safe_dump(data, sort_keys=False))
    from manifesto.cluster import load_cluster

    cluster = load_cluster(str(path))
    assert {name: p.compute_domain.resource_claim_template_name
            for name, p in cluster.profile.accelerators.profiles.items()} == {"h200": "imex-channel"}


# --------------------------------------------------------------------------- manifesto migrate

REF_CLUSTER = """\
# A reference-format cluster profile
name: ref-h200
accelerators:
  default: h200
  profiles:
    h200:
      resource_name: nvidia.com/gpu   # the older shape
      presence_label: nvidia.com/gpu.present
      gpu_arch: h200
      torch_cuda_arch_list: 9.0+PTX
gpus_per_node: 8
storage:
  shared_volume: {persistentVolumeClaim: {claimName: cache}}
  shared_mount_path: /mnt/shared
  shared_claim: {storage_class_name: fast, access_modes: [ReadWriteMany], size: 10Ti}
fabric:
  ucx_net_devices: all
  # one IMEX channel for every pod
  imex_resource_claim_template: imex-channel
  profiles: {standard: {}}
"""


def test_migrate_rewrites_a_reference_cluster_keeping_comments(tmp_path):
    src = tmp_path / "ref.yaml"
    src.write_text(REF_CLUSTER)
    out = tmp_path / "ours.yaml"
    rc, stdout, err = cli_in_process("migrate", str(src), "-o", str(out))
    assert (rc, stdout) == (0, "")
    assert err == (
        "mapped: fabric.imex_resource_claim_template is the reference's spelling; it is read as "
        "accelerators.profiles.<each>.compute_domain.resource_claim_template_name\n"
        "mapped: storage.shared_claim.storage_class_name is the reference's spelling; it is read as "
        "storage.shared_claim.storage_class\n")
    text = out.read_text()
    assert text.startswith("# A reference-format cluster profile\n")
    assert "resource_name: nvidia.com/gpu   # the older shape\n" in text
    assert "storage_class: fast" in text and "imex_resource_claim_template" not in text
    assert "      compute_domain:\n        resource_claim_template_name: imex-channel\n" in text
    rc, _, err = _validate(REPO / "models/qwen/h200-aggregated.yaml", out)
    assert (rc, err) == (0, "")


def test_migrate_reports_what_it_could_not_map(tmp_path):
    src = tmp_path / "ref.yaml"
    src.write_text("release: x\nrouting: {replicas: 3}  # where\nmodel: {id: a/b, served_name: b}\nroles:\n"
                   "  - name: decode\n    vllm_args: {max_model_len: 1024}\n")
    rc, out, err = cli_in_process("migrate", str(src))
    assert rc == 1
    assert out == ("release: x\nrouting: {replicas: 3}  # where\nmodel: {id: a/b}\nroles:\n  - name: decode\n"
                   "    vllm: {max_model_len: 1024}\nvllm:\n  served_model_name: b\n")
    assert err == (
        "mapped: model.served_name is the reference's spelling; it is read as vllm.served_model_name\n"
        "mapped: roles[0].vllm_args is the reference's spelling; it is read as roles[0].vllm\n"
        "could not map: routing.replicas: one endpoint picker per instance is rendered; several replicas would "
        "each keep their own view of endpoint load, so it is not offered\n"
        f"{src}: 1 key(s) could not be mapped; they are left as they were\n")


def test_migrate_leaves_a_file_in_our_format_unchanged(tmp_path):
    for path in (REPO / "clusters/example-gb200.yaml", REPO / "models/deepseek-v4/wide-ep-base.yaml"):
        rc, out, err = cli_in_process("migrate", str(path))
        assert (rc, err) == (0, "")
        assert out == path.read_text(), path


def test_profiling_takes_every_vllm_profiler_config_field(tmp_path):
    spec = tmp_path / "prof.yaml"
    spec.write_text(f"extends: {QWEN_PD}\nroles:\n  decode:\n    profiling:\n      profiler: torch\n"
                    "      torch_profiler_dir: /t\n      torch_profiler_record_shapes: true\n"
                    "      torch_profiler_with_memory: true\n      torch_profiler_with_flops: true\n"
                    "      capture_torch_profiler: true\n      detailed_trace_annotation: true\n"
                    "      warmup_iterations: 1\n      active_iterations: 3\n      wait_iterations: 2\n")
    plan, _, _ = plan_of(spec, REPO / "clusters/example-gb200.yaml")
    (decode,) = [r for r in plan.roles if r.name == "decode"]
    (arg,) = [a for a in decode.args if a.flag == "--profiler-config"]
    import json

    assert json.loads(arg.value) == {
        "profiler": "torch", "torch_profiler_dir": "/t", "torch_profiler_record_shapes": True,
        "torch_profiler_with_memory": True, "torch_profiler_with_flops": True, "capture_torch_profiler": True,
        "detailed_trace_annotation": True, "warmup_iterations": 1, "active_iterations": 3, "wait_iterations": 2}


# --------------------------------------------------------------------------- class-A parity

UPSTREAM = "reference/upstream-examples"


def _upstream_pairs():
    root = kit.shared_dir() / UPSTREAM
    if not root.is_dir():
        return [pytest.param(None, None, id="upstream-missing")]
    models = sorted(p for p in (root / "models").rglob("*") if p.is_file() and not p.name.endswith("-base.yaml"))
    clusters = sorted(p for p in (root / "clusters").glob("*.yaml") if "slurm" not in p.name)
    return [pytest.param(m, c, id=f"{m.relative_to(root / 'models')}@{c.stem}") for m in models for c in clusters]


def _flag_words(name: str) -> set[str]:
    head, dot, tail = name.partition(".")
    bare = head.replace("_", "-") + dot + tail  # `a_b.c_d: v` renders as --a-b.c_d=v
    return {f"--{bare}", f"--{bare.removeprefix('no-')}", f"--no-{bare}"}


@pytest.mark.parametrize(("model", "cluster"), _upstream_pairs())
def test_every_field_an_upstream_spec_sets_reaches_the_render(model, cluster):
    """Class A of the side-by-side: no vLLM argument, env variable, resource or LWS setting that a
    reference spec sets may vanish from our render (the spec renders, or is refused only for an
    accelerator the cluster lacks, which test_upstream_examples checks)."""
    from manifesto.cluster import load_cluster
    from manifesto.errors import IncompatiblePairError
    from manifesto.load.inputs import load_model_data
    from manifesto.render import render_kubernetes
    from manifesto.spec import load_spec

    if model is None:
        kit.require_shared(UPSTREAM)
    c = load_cluster(str(cluster))
    try:
        objs = render_kubernetes(load_spec(str(model), c), user="u", namespace="ns")
    except IncompatiblePairError as exc:  # refused for the accelerator alone, naming what the cluster offers
        assert ("is not offered by cluster" in str(exc) and "it offers:" in str(exc)) or kit.fit_refusal(str(exc)), \
            str(exc)
        return
    text = str(objs)
    data = load_model_data(model).data
    for role in data["roles"]:
        for key, value in {**data.get("vllm", {}), **(role.get("vllm") or {})}.items():
            if value is False or value is None:
                continue  # a false flag is left out, by design (docs/decisions.md)
            assert any(w in text for w in _flag_words(key)), (role["name"], key)
        for name, value in {**data.get("env", {}), **(role.get("env") or {})}.items():
            assert f"'name': '{name}'" in text or f"{name}=" in text, (role["name"], name)
        for key in ("cpu", "memory", "ephemeral_storage"):
            value = (role.get("resources") or {}).get(key)
            if value is not None:
                assert f"'{value}'" in text, (role["name"], key, value)
        lws = role.get("lws") or {}
        if lws.get("same_topology_key"):
            assert lws["same_topology_key"] in text
        if role.get("profiling"):
            assert "--profiler-config" in text
    if data.get("model", {}).get("revision"):
        assert "--revision" in text


# --------------------------------------------------------------------------- source commit


def _fake_checkout(tmp_path, layout: str):
    """A package folder inside a fake checkout whose HEAD resolves to SHA through ``layout``."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    root = tmp_path / "checkout"
    (root / "manifesto").mkdir(parents=True)
    git = root / ".git"
    if layout == "worktree":
        common = tmp_path / "main.git"
        git = common / "worktrees" / "wt"
        git.mkdir(parents=True)
        (root / ".git").write_text(f"gitdir: {git}\n")
        (git / "commondir").write_text("../..\n")
        (git / "HEAD").write_text("ref: refs/heads/topic\n")
        (common / "packed-refs").write_text(f"# pack-refs with: peeled\n{sha} refs/heads/topic\n")
    else:
        (git / "refs" / "heads").mkdir(parents=True)
        if layout == "detached":
            (git / "HEAD").write_text(sha + "\n")
        else:
            (git / "HEAD").write_text("ref: refs/heads/main\n")
            (git / "refs" / "heads" / "main").write_text(sha + "\n")
    return root / "manifesto", sha


@pytest.mark.parametrize("layout", ["branch", "detached", "worktree"])
def test_source_commit_is_read_from_the_checkout(tmp_path, layout):
    from manifesto.cli.provenance import source_commit

    package, sha = _fake_checkout(tmp_path, layout)
    assert source_commit(package) == sha


def test_no_source_commit_outside_a_checkout(tmp_path):
    from manifesto.cli.provenance import source_commit

    (tmp_path / "site-packages" / "manifesto").mkdir(parents=True)
    assert source_commit(tmp_path / "site-packages" / "manifesto") is None


@pytest.mark.integration
def test_single_renders_name_the_commit_and_builds_never_do(monkeypatch, tmp_path):
    import subprocess

    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    monkeypatch.setenv("MANIFESTO_SOURCE_COMMIT", "auto")
    common = ("qwen/qwen3-0.6b", "--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
    line = (f"# Source: llm-manifesto {__import__('manifesto').__version__} (checkout at git commit "
            f"{head.stdout.strip()}; any uncommitted changes are not recorded here)\n")
    for argv in (("render", "manifest", *common), ("render", "routing", "qwen/qwen3-0.6b-pd", *common[1:]),
                 ("render", "monitoring", *common)):
        rc, out, err = cli_in_process(*argv)
        assert (rc, err) == (0, ""), err
        assert line in out, argv
    rc, out, _ = cli_in_process("render", "file", *common, "-o", str(tmp_path / "x.yaml"))
    assert rc == 0 and line in (tmp_path / "x.yaml").read_text()
    monkeypatch.setenv("MANIFESTO_SOURCE_COMMIT", "off")
    rc, out, _ = cli_in_process("render", "manifest", *common)
    assert "git commit" not in out
    # Committed build artifacts carry no commit: they would change with every commit.
    for path in (REPO / "out").rglob("*"):
        if path.is_file() and ".cache" not in path.parts:
            assert "git commit" not in path.read_text(), path


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _replaced(value, path, new):
    import copy

    out = copy.deepcopy(value)
    if not path:
        return new
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


@pytest.mark.parametrize("which", ["spec", "cluster"])
def test_reference_rules_never_crash_on_malformed_input(which):
    """Any value of any shape at any place: the rules map, drop or refuse, or leave it to the schema."""
    import yaml as pyyaml

    from manifesto.load.spellings import migrate_cluster, migrate_spec

    text = REF_CLUSTER if which == "cluster" else (
        "release: x\nnamespace: n\ntopology: pd\nmodel: {id: a/b, served_name: b, hf_home: /h}\n"
        "runtime: {env: {A: '1'}}\nenv: {B: '2'}\ncache: {cuda: cu13}\n"
        "routing: {kind: pd, epp_image: i, replicas: 1, epp: {image: i, replicas: 2, plugin_configs: {a: {}}}}\n"
        "roles:\n  - {name: decode, vllm_args: {a: 1}, shm_size: 1Gi, parallelism: {gpus: 1, dp: 2}, vars: {v: 1},\n"
        "     dp_load_balancing: external, routing_proxy: true, serving_port_base: 8000, backend_port_base: 8200,\n"
        "     profiling: {trace_dir: /t}, resources: {cpu: '1'}}\n")
    base = pyyaml.safe_load(text)
    rules = migrate_cluster if which == "cluster" else migrate_spec
    for path in list(_paths(base)):
        for new in (None, "x", 7, [1, {"a": 1}], {}, {"z": [None]}):
            rules(_replaced(base, path, new))
