"""The resolved Plan: msgpack round trip, determinism, purity, JSON output, derived values."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import msgspec
import pytest

import kit
from kit import cli_in_process, plan_of

REPO = kit.REPO_ROOT
CLUSTERS = REPO / "clusters"
UPSTREAM = kit.shared_dir() / "reference/upstream-examples"


def _models(root: Path) -> list[Path]:
    return sorted(p for p in (root / "models").rglob("*")
                  if p.is_file() and not p.name.startswith(".") and not p.name.endswith("-base.yaml"))


def _params(root: Path, prefix: str) -> list:
    """One param per model: (model, every cluster of the same tree)."""
    clusters = tuple(sorted((root / "clusters").glob("*.yaml")))
    return [pytest.param(m, clusters, id=f"{prefix}{m.relative_to(root / 'models').as_posix()}")
            for m in _models(root)]


def _plan(model, cluster, **options):
    return plan_of(model, cluster, **options)[0]


BUNDLED = _params(REPO, "")
MODELS = BUNDLED + (_params(UPSTREAM, "upstream/") if UPSTREAM.is_dir() else [])


def _resolving(model, clusters):
    """(cluster, Plan) for every cluster that offers the spec's accelerator (at least one)."""
    from manifesto.errors import IncompatiblePairError

    out, too_big = [], False
    for cluster in clusters:
        try:
            out.append((cluster, _plan(model, cluster)))
        except IncompatiblePairError as exc:
            too_big = too_big or kit.fit_refusal(str(exc))
            continue
    # A reference layout the memory-fit check refuses everywhere (Kimi K3 TP1/EP16) is skipped.
    assert out or (too_big and UPSTREAM in model.parents), f"{model} resolves against none of {[c.name for c in clusters]}"
    return out


@pytest.mark.parametrize(("model", "clusters"), MODELS)
def test_msgpack_round_trip_is_byte_identical(model, clusters):
    from manifesto.resolve.plan import Plan, decode, encode

    for cluster, plan in _resolving(model, clusters):
        data = encode(plan)
        back = decode(data)
        assert isinstance(back, Plan)
        assert back == plan, cluster.name
        assert encode(back) == data, cluster.name


@pytest.mark.parametrize(("model", "clusters"), MODELS)
def test_resolving_twice_gives_identical_bytes(model, clusters):
    from manifesto.resolve.plan import encode

    for cluster, plan in _resolving(model, clusters):
        # freshly loaded files, freshly resolved
        assert encode(_plan(model, cluster)) == encode(plan), cluster.name


def test_resolution_ignores_the_environment(monkeypatch):
    """Resolution is pure: the Plan depends on its inputs and Options, never on os.environ."""
    from manifesto.resolve.plan import encode

    model, cluster = REPO / "models/deepseek-v4/1P-EP8-1D-EP8.yaml", CLUSTERS / "example-gb200.yaml"
    before = encode(_plan(model, cluster))
    for name, value in {"USER": "someone-else", "HOME": "/nonexistent", "HF_TOKEN": "x", "MANIFESTO_CLUSTER": "y",
                        "MANIFESTO_NAMESPACE": "z", "MANIFESTO_ROUTING_PROFILE": "kv-aware",
                        "VLLM_USE_V1": "0"}.items():
        monkeypatch.setenv(name, value)
    assert encode(_plan(model, cluster)) == before


def test_plan_is_frozen():
    plan = _plan(REPO / "models/qwen/qwen3-0.6b-pd.yaml", CLUSTERS / "example-stateless-b200.yaml")
    with pytest.raises(AttributeError):
        plan.release = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        plan.roles[0].layout.tp = 8  # type: ignore[misc]


def test_decode_rejects_unknown_fields():
    from manifesto.resolve.plan import decode, encode

    plan = _plan(REPO / "models/qwen/qwen3-0.6b.yaml", CLUSTERS / "example-gb200.yaml")
    raw = msgspec.msgpack.decode(encode(plan))
    raw["surprise"] = 1
    with pytest.raises(msgspec.ValidationError):
        decode(msgspec.msgpack.encode(raw))


# ---- explain --output json ----------------------------------------------------------------


@pytest.mark.parametrize(("model", "clusters"), BUNDLED)
def test_explain_json_is_the_plan(model, clusters):
    from manifesto.resolve.plan import Plan, to_builtins

    for cluster, plan in _resolving(model, clusters):
        rc, out, err = cli_in_process("explain", str(model), "--cluster", str(cluster), "--user", "u",
                                      "--namespace", "ns", "--output", "json")
        assert (rc, err) == (0, "")
        data = json.loads(out)
        for role, resolved in zip(data["roles"], plan.roles):
            if resolved.fit.note.startswith("no architecture for "):
                # explain also looks in the Hugging Face cache (render never does) and says so.
                assert role["fit"]["note"] == resolved.fit.note + " (nor is it in the Hugging Face cache)"
                role["fit"]["note"] = resolved.fit.note
        assert data == json.loads(json.dumps(to_builtins(plan)))
        assert msgspec.convert(data, Plan) == plan  # the JSON converts back into the same Plan


@pytest.mark.integration
def test_explain_json_subprocess():
    proc = kit.run_cli("explain", "models/deepseek-v4/3P-EP8-1D-EP16.yaml", "--cluster", "clusters/example-gb200.yaml",
                       "--user", "u", "--namespace", "ns", "--output", "json", cwd=REPO,
                       env={"MANIFESTO_ROUTING_PROFILE": ""})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["instance"] == "dsv4-3p-ep8-1d-ep16"
    assert [r["name"] for r in data["roles"]] == ["decode", "prefill"]


def test_explain_text_names_every_role_and_layer():
    rc, out, err = cli_in_process("explain", str(REPO / "models/deepseek-v4/1P-EP8-1D-EP8.yaml"), "--cluster",
                                  str(CLUSTERS / "example-gb200.yaml"), "--user", "u", "--namespace", "ns")
    assert (rc, err) == (0, "")
    assert "role decode: LeaderWorkerSet dsv4-decode-ep8" in out
    assert "role prefill: LeaderWorkerSet dsv4-prefill-ep8" in out
    for source in ("[manifesto default]", "[fabric profile deepep_decode computed]", "[role decode computed]",
                   "[cluster fabric.default_env]", "[feature kv-connector (NIXL)]", "[role decode env]"):
        assert source in out, source


# ---- derived values -----------------------------------------------------------------------


def _spec(tmp_path, body: str, name="spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("tp", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("explicit", [{}, {"cpu": "3"}, {"memory": "7Gi"}, {"cpu": "500m", "memory": "1Ti"}],
                         ids=["defaults", "cpu", "memory", "both"])
def test_resource_defaults_follow_gpus_per_pod(tmp_path, tp, explicit):
    resources = ", ".join(f"{k}: {v}" for k, v in explicit.items())
    path = _spec(tmp_path, f"""\
        release: demo
        model: {{id: org/model}}
        roles:
          - name: decode
            parallelism: {{tp: {tp}}}
            resources: {{{resources}}}
        """)
    res = _plan(path, CLUSTERS / "example-stateless-b200.yaml").roles[0].resources
    assert res.gpus == tp
    assert res.cpu == explicit.get("cpu", str(6 + 2 * tp))
    assert res.memory == explicit.get("memory", f"{max(64 * tp, 128)}Gi")


def test_revision_becomes_an_argument_of_every_role(tmp_path):
    path = _spec(tmp_path, """\
        extends: {base}
        model: {{id: Qwen/Qwen3-0.6B, revision: abc123}}
        """.format(base=REPO / "models/qwen/qwen3-0.6b-pd.yaml"))
    plan = _plan(path, CLUSTERS / "example-stateless-b200.yaml")
    assert plan.revision == "abc123"
    for role in plan.roles:
        assert [(a.flag, a.value) for a in role.args if a.flag == "--revision"] == [("--revision", "abc123")]


def test_instance_identity_and_selectors(tmp_path):
    model = REPO / "models/qwen/qwen3-0.6b-pd.yaml"
    plain = _plan(model, CLUSTERS / "example-stateless-b200.yaml", user="Alice.Smith")
    assert plain.instance == "qwen3-0-6b-pd"
    cluster = tmp_path / "prefixed.yaml"
    cluster.write_text((CLUSTERS / "example-stateless-b200.yaml").read_text() + "naming: {user_prefix: true}\n")
    prefixed = _plan(model, cluster, user="Alice.Smith")
    assert prefixed.instance == "alice-smith-qwen3-0-6b-pd"
    for plan in (plain, prefixed):
        assert plan.labels["app.kubernetes.io/instance"] == plan.instance
        assert plan.labels["llm-d.ai/owner"] == "Alice.Smith"
        for role in plan.roles:
            assert role.selector["app.kubernetes.io/instance"] == plan.instance
            assert role.selector.items() <= role.labels.items()
        assert len({tuple(sorted(r.selector.items())) for r in plan.roles}) == len(plan.roles)


def test_the_user_prefix_covers_workload_names(tmp_path):
    """With naming.user_prefix, a role's workload_name (every bundled DeepSeek spec sets one) is
    prefixed too: two users' renders share no object name."""
    from manifesto.render import k8s_objects
    from manifesto.cluster import load_cluster
    from manifesto.spec import load_spec

    cluster = tmp_path / "prefixed.yaml"
    cluster.write_text((CLUSTERS / "example-gb200.yaml").read_text() + "naming: {user_prefix: true}\n")
    model = REPO / "models/deepseek-v4/1P-EP8-1D-EP8.yaml"
    names = {}
    for user in ("alice", "bob"):
        plan = _plan(model, cluster, user=user)
        assert [r.workload_name for r in plan.roles] == [f"{user}-dsv4-decode-ep8", f"{user}-dsv4-prefill-ep8"]
        c = load_cluster(str(cluster))
        objs = k8s_objects(plan, load_spec(str(model), c))
        names[user] = {(o["kind"], o["metadata"]["name"]) for o in objs}
        assert all(name.startswith(f"{user}-") for _, name in names[user])
    assert not names["alice"] & names["bob"]
    assert ("LeaderWorkerSet", "bob-dsv4-decode-ep8") in names["bob"]


def test_env_provenance_layers(tmp_path):
    """Later layers win: cluster default env < fabric profile < spec env < role env < computed."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(textwrap.dedent("""\
        name: layers
        accelerators:
          default: b200
          profiles:
            b200:
              gpus_per_node: 8
              allocation: {extended_resource: {resource_name: nvidia.com/gpu}}
        fabric:
          default_profile: fast
          default_env: {A: cluster, B: cluster, C: cluster, D: cluster, E: cluster}
          profiles:
            fast:
              env: {B: fabric, C: fabric, D: fabric, E: fabric}
              computed_env: {DEPTH: n * 2 + 2}
        """))
    path = _spec(tmp_path, """\
        release: demo
        model: {id: org/model}
        vars: {n: 10}
        env: {C: spec, D: spec, E: spec}
        roles:
          - name: decode
            env: {D: role, E: role}
            computed:
              env: {E: n * 3}
        """)
    env = {v.name: (v.value, v.source) for v in _plan(path, cluster).roles[0].env}
    assert env["A"] == ("cluster", "cluster fabric.default_env")
    assert env["B"] == ("fabric", "fabric profile fast")
    assert env["C"] == ("spec", "spec env")
    assert env["D"] == ("role", "role decode env")
    assert env["E"] == ("30", "role decode computed")
    assert env["DEPTH"] == ("22", "fabric profile fast computed")
