"""The reviewer's diff (``manifesto diff --base REV``): each kind of change, rendered before and
after an edit, gets the impact a running deployment would see."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

import pytest
import yaml

from kit import REPO_ROOT, cli_in_process
from manifesto.review import semdiff
from manifesto.review.semdiff import Impact, Totals, classify, diff_artifacts
from manifesto.cluster import load_cluster
from manifesto.render import render
from manifesto.spec import load_spec

GB200 = REPO_ROOT / "clusters" / "example-gb200.yaml"
SLURM = REPO_ROOT / "clusters" / "example-slurm.yaml"
DRA = REPO_ROOT / "tests" / "golden" / "dra-cluster" / "cluster.yaml"

DENSE = {
    "release": "review", "topology": "aggregated",
    "model": {"id": "Qwen/Qwen3-0.6B", "label": "Qwen3-0.6B", "image_ref": "vllm.standard"},
    "routing": {"kind": "disabled"}, "runtime": {"sidecars": []},
    "roles": [{"name": "decode", "lws": {"size": 1, "replicas": 1}, "parallelism": {"tp": 1, "dp": False, "ep": False},
               "vllm": {"max_model_len": 8192}}],
}
MOE = {
    "release": "review-moe", "topology": "aggregated",
    "model": {"id": "Qwen/Qwen3-30B-A3B-Instruct-2507", "label": "Qwen3-30B-A3B", "image_ref": "vllm.standard"},
    "routing": {"kind": "disabled"}, "runtime": {"sidecars": []},
    "roles": [{"name": "decode", "lws": {"size": 1, "replicas": 1}, "parallelism": {"tp": 4, "dp": False, "ep": False},
               "vllm": {"max_model_len": 8192}}],
}
ROUTED = copy.deepcopy(MOE) | {"release": "review-routed", "routing": {"kind": "load_aware", "target_role": "decode"}}
PD = {
    "release": "review-pd", "topology": "pd",
    "model": {"id": "Qwen/Qwen3-0.6B", "label": "Qwen3-0.6B", "image_ref": "vllm.standard"},
    "routing": {"kind": "pd", "target_role": "decode"}, "runtime": {"sidecars": []},
    "roles": [{"name": n, "lws": {"size": 1}, "parallelism": {"tp": 1, "dp": False, "ep": False},
               "kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
               "vllm": {"max_model_len": 8192}} for n in ("prefill", "decode")],
}


def _render(tmp_path: Path, spec: dict, cluster: Path, name: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    c = load_cluster(str(cluster))
    return render(load_spec(str(path), c), user="tester", namespace="demo")


def _role(spec: dict, name: str = "decode") -> dict:
    return next(r for r in spec["roles"] if r["name"] == name)


def _edit(base: dict, change) -> dict:
    spec = copy.deepcopy(base)
    change(spec)
    return spec


def _set(path: str, value):
    """An edit setting ``path`` (dotted, ``decode.`` for the decode role) to ``value``."""
    def change(spec):
        keys = path.split(".")
        node = _role(spec, keys[0][1:]) if keys[0].startswith("@") else spec
        keys = keys[1:] if keys[0].startswith("@") else keys
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        if value is _DROP:
            node.pop(keys[-1])
        else:
            node[keys[-1]] = value
    return change


_DROP = object()

# (id, base spec, cluster, edit, expected artifact impact, a line the role summary must hold)
CASES = [
    ("max-model-len", DENSE, GB200, _set("@decode.vllm.max_model_len", 16384), Impact.ROLLING,
     "decode: args: --max-model-len 8192\u219216384"),
    ("add-arg", DENSE, GB200, _set("@decode.vllm.enforce_eager", True), Impact.ROLLING, "decode: args: +--enforce-eager"),
    ("remove-arg", _edit(DENSE, _set("@decode.vllm.max_num_seqs", 64)), GB200, _set("@decode.vllm.max_num_seqs", _DROP),
     Impact.ROLLING, "decode: args: \u2212--max-num-seqs 64"),
    ("image", DENSE, GB200, _set("model", {"id": "Qwen/Qwen3-0.6B", "image": "registry.example.com/vllm-openai:v0.33.0"}),
     Impact.ROLLING,
     "decode: image vllm/vllm-openai:v0.33.0\u2192registry.example.com/vllm-openai:v0.33.0"),
    ("replicas-up", DENSE, GB200, _set("@decode.lws.replicas", 3), Impact.IN_PLACE, "decode: +2 pods; +2 GPUs"),
    ("replicas-down", _edit(DENSE, _set("@decode.lws.replicas", 3)), GB200, _set("@decode.lws.replicas", 1),
     Impact.IN_PLACE, "decode: -2 pods; -2 GPUs"),
    ("tp-within-node", DENSE, GB200, _set("@decode.parallelism.tp", 2), Impact.ROLLING, "decode: TP 1\u21922; +1 GPUs"),
    ("tp-across-nodes", MOE, GB200, lambda s: _role(s).update(parallelism={"tp": 8}, lws={"size": 2}),
     Impact.RECREATE, "decode: TP 4\u21928; +1 pods; +1 nodes; +4 GPUs"),
    ("group-size", _edit(MOE, lambda s: _role(s).update(parallelism={"tp": 8}, lws={"size": 2})), GB200,
     lambda s: _role(s).update(parallelism={"tp": 16}, lws={"size": 4}),
     Impact.RECREATE, "decode: TP 8\u219216; +2 pods; +2 nodes; +8 GPUs"),
    ("dp-on", _edit(MOE, _set("@decode.parallelism.tp", 1)), GB200, _set("@decode.parallelism.dp", 4),
     Impact.ROLLING, "decode: DP 1\u21924; +3 GPUs"),
    # The cluster's expert-parallel fabric profile computes NVSHMEM_QP_DEPTH from max_concurrency.
    ("ep-on", _edit(MOE, lambda s: (_role(s).update(parallelism={"tp": 1, "dp": 4}),
                                    s.update(vars={"max_concurrency": 64}))), GB200, _set("@decode.parallelism.ep", True),
     Impact.ROLLING, "decode: EP on"),
    ("dra-rename", _edit(DENSE, _set("@decode.parallelism.tp", 2)), DRA, _set("@decode.parallelism.tp", 4),
     Impact.RECREATE, "decode: TP 2\u21924; +2 GPUs"),
    ("dra-args-only", DENSE, DRA, _set("@decode.vllm.max_model_len", 4096), Impact.ROLLING,
     "decode: args: --max-model-len 8192\u21924096"),
    ("epp-policy", ROUTED, GB200, _set("routing.plugin_config", {
        "apiVersion": "llm-d.ai/v1alpha1", "kind": "EndpointPickerConfig",
        "plugins": [{"type": "queue-scorer"}, {"type": "max-score-picker"}],
        "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "queue-scorer", "weight": 1},
                                                               {"pluginRef": "max-score-picker"}]}]}),
     Impact.IN_PLACE, "EPP: +max-score-picker, \u2212active-request-scorer, \u2212weighted-random-picker"),
    ("routed-args", ROUTED, GB200, _set("@decode.vllm.max_num_seqs", 32), Impact.ROLLING, "decode: args: +--max-num-seqs 32"),
    ("routing-off", ROUTED, GB200, _set("routing", {"kind": "disabled"}), Impact.ROLLING, None),
    ("remove-role", PD, GB200, lambda s: s.update(topology="aggregated", routing={"kind": "disabled"},
                                                  roles=[_role(s)]), Impact.RECREATE, "prefill: removed (was 1 pods, 1 nodes, 1 GPUs, TP 1, image vllm/vllm-openai:v0.33.0)"),
    ("pd-decode-tp", PD, GB200, _set("@decode.parallelism.tp", 2), Impact.ROLLING, "decode: TP 1\u21922; +1 GPUs"),
    ("pd-prefill-replicas", PD, GB200, _set("@prefill.lws.replicas", 2), Impact.IN_PLACE, "prefill: +1 pods; +1 GPUs"),
    ("resources", DENSE, GB200, _set("@decode.resources", {"cpu": "12", "memory": "64Gi"}), Impact.ROLLING,
     "decode: resources: limits memory 128Gi\u219264Gi, requests cpu 8\u219212, requests memory 128Gi\u219264Gi"),
    ("env", DENSE, GB200, _set("@decode.env", {"VLLM_LOGGING_LEVEL": "DEBUG"}), Impact.ROLLING,
     "decode: env: +VLLM_LOGGING_LEVEL"),
    ("slurm-arg", DENSE, SLURM, _set("@decode.vllm.max_model_len", 4096), Impact.RECREATE,
     "job: args: --max-model-len 8192\u21924096"),
    ("slurm-tp", DENSE, SLURM, _set("@decode.parallelism.tp", 2), Impact.RECREATE, "job: TP 1\u21922; +1 GPUs"),
]


@pytest.mark.parametrize("base,cluster,edit,impact,line", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_kind_of_change_gets_its_impact(tmp_path, base, cluster, edit, impact, line):
    old = _render(tmp_path, base, cluster, "before")
    new = _render(tmp_path, _edit(base, edit), cluster, "after")
    suffix = ".sbatch" if cluster == SLURM else ".yaml"
    d = diff_artifacts(f"c/m{suffix}", old, new)
    assert d is not None and d.status == "changed"
    assert d.impact is impact, [(o.kind, o.name, o.impact, o.why) for o in d.objects]
    if line is not None:  # the role's line starts with the summary (env or resources may follow)
        assert any(r == line or r.startswith(line + "; ") for r in d.roles), d.roles


def test_an_unchanged_artifact_is_no_change(tmp_path):
    text = _render(tmp_path, DENSE, GB200, "same")
    assert diff_artifacts("c/m.yaml", text, text) is None


def test_only_the_artifact_digest_changing_is_no_change(tmp_path):
    text = _render(tmp_path, DENSE, GB200, "digest")
    digest = next(line for line in text.splitlines() if semdiff.DIGEST_ANNOTATION in line)
    other = text.replace(digest, digest.rsplit(":", 1)[0] + ":" + "0" * 32)
    assert other != text and diff_artifacts("c/m.yaml", text, other) is None


def test_added_and_removed_artifacts(tmp_path):
    text = _render(tmp_path, MOE, GB200, "moe")
    added = diff_artifacts("c/m.yaml", None, text)
    removed = diff_artifacts("c/m.yaml", text, None)
    assert (added.status, added.impact, added.before, added.after) == (
        "added", Impact.IN_PLACE, Totals(), Totals(gpus=4, nodes=1, pods=1, hourly_cost=None))
    assert (removed.status, removed.impact, removed.before.gpus, removed.after) == (
        "removed", Impact.RECREATE, 4, Totals())
    assert added.roles == ("decode: 1 pods, 1 nodes, 4 GPUs, TP 4, image vllm/vllm-openai:v0.33.0",)


@pytest.mark.parametrize("kind,old,new,impact", [
    ("Deployment", {"spec": {"selector": {"a": 1}}}, {"spec": {"selector": {"a": 2}}}, Impact.RECREATE),
    ("Deployment", {"spec": {"replicas": 1}}, {"spec": {"replicas": 0}}, Impact.IN_PLACE),
    ("Job", {"spec": {"template": {}}}, {"spec": {"template": {"x": 1}}}, Impact.RECREATE),
    ("Service", {"spec": {"ports": [1]}}, {"spec": {"ports": [2]}}, Impact.IN_PLACE),
    ("LeaderWorkerSet", {"spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2}}},
     {"spec": {"replicas": 3, "leaderWorkerTemplate": {"size": 2}}}, Impact.IN_PLACE),
], ids=["selector", "deployment-replicas", "job", "service", "lws-replicas"])
def test_classify_objects(kind, old, new, impact):
    assert classify(kind, old, new)[0] is impact


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


@pytest.mark.integration
def test_diff_base_against_a_git_history(tmp_path, monkeypatch):
    """The CLI reads out/ at a revision and the working tree: text, JSON, markdown and
    --fail-on-recreate; an address limits the report to its artifacts."""
    repo = tmp_path / "ws"
    (repo / "models").mkdir(parents=True)
    (repo / "clusters").mkdir()
    (repo / "clusters" / "gb.yaml").write_text(GB200.read_text())
    (repo / "models" / "dense.yaml").write_text(yaml.safe_dump(DENSE, sort_keys=False))
    (repo / "models" / "moe.yaml").write_text(yaml.safe_dump(MOE, sort_keys=False))
    (repo / "BUILD.yaml").write_text(
        "targets:\n  - kind: cluster\n    path: clusters\n    sources: ['*.yaml']\n"
        "  - kind: model\n    path: models\n    sources: ['*.yaml']\n"
        "    options: {user: tester, namespace: demo}\n")
    monkeypatch.chdir(repo)
    _git(repo, "init", "-q")
    assert cli_in_process("build", "-q").returncode == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    (repo / "models" / "moe.yaml").write_text(yaml.safe_dump(
        _edit(MOE, lambda s: _role(s).update(parallelism={"tp": 8}, lws={"size": 2})), sort_keys=False))
    (repo / "models" / "dense.yaml").write_text(yaml.safe_dump(_edit(DENSE, _set("@decode.lws.replicas", 2)),
                                                               sort_keys=False))
    assert cli_in_process("build", "-q").returncode == 0

    text = cli_in_process("diff", "--base", "HEAD")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines() == [
        "gb/dense.yaml: changed, in place",
        "  decode: +1 pods; +1 GPUs",
        "  Deployment/review-decode: changed, in place (no pod template change)",
        "  Deployment/review-idle-shutdown: changed, in place (the idle-shutdown controller restarts; "
        "serving is not interrupted)",
        "gb/moe.yaml: changed, recreate",
        "  decode: TP 4\u21928; +1 pods; +1 nodes; +4 GPUs; env: ~CUDA_CACHE_PATH, ~CUTE_DSL_CACHE_DIR, "
        "~FLASHINFER_WORKSPACE_BASE, ~FLASH_ATTENTION_CUTE_DSL_CACHE_DIR, ~HOME, ~TILELANG_CACHE_DIR, "
        "~TORCHINDUCTOR_CACHE_DIR, ~TRITON_CACHE_DIR, ~VLLM_CACHE_ROOT, ~XDG_CACHE_HOME",
        "  Deployment/review-moe-decode: removed, recreate (its model servers stop)",
        "  Deployment/review-moe-idle-shutdown: changed, in place (the idle-shutdown controller restarts; "
        "serving is not interrupted)",
        "  LeaderWorkerSet/review-moe-decode: added, in place (created beside the running objects)",
        "  Role/review-moe-idle-shutdown: changed, in place (applied in place)",
        "  Service/review-moe-decode-http: changed, in place (applied in place)",
        "per cluster: gb GPUs 5\u219210, nodes 2\u21923, pods 2\u21924",
        "overall: recreate",
    ]
    assert cli_in_process("diff", "--base", "HEAD", "--fail-on-recreate").returncode == 3
    only = cli_in_process("diff", "--base", "HEAD", "//models:dense", "--fail-on-recreate", "-o", "json")
    assert only.returncode == 0, only.stderr
    import json

    data = json.loads(only.stdout)
    assert [a["path"] for a in data["artifacts"]] == ["gb/dense.yaml"] and data["impact"] == "in place"
    md = cli_in_process("diff", "--base", "HEAD", "-o", "markdown").stdout
    # spec-derived text sits in code spans (tests/edge/test_edge_diff.py shows it renders inert)
    assert "| `gb/moe.yaml` | `decode: TP 4\u21928; +1 pods; +1 nodes; +4 GPUs; env: ~CUDA_CACHE_PATH" in md
    bad = cli_in_process("diff", "--base", "no-such-rev")
    assert (bad.returncode, bad.stderr.strip()) == (1, "error: --base: unknown git revision 'no-such-rev'")


def test_a_priced_cluster_gives_the_cost_of_a_change(tmp_path):
    """With an hourly price per GPU in the cluster profile (read from the artifact's header),
    roles and totals carry the cost."""
    priced = tmp_path / "priced.yaml"
    text = GB200.read_text()
    assert "      gpu_arch: gb200\n" in text
    priced.write_text(text.replace("      gpu_arch: gb200\n", "      gpu_arch: gb200\n      hourly_price: 2.5\n", 1))
    old = _render(tmp_path, DENSE, priced, "before")
    new = _render(tmp_path, _edit(DENSE, _set("@decode.parallelism.tp", 4)), priced, "after")
    d = diff_artifacts("c/m.yaml", old, new)
    assert len(d.roles) == 1 and d.roles[0].startswith("decode: TP 1\u21924; +3 GPUs; +7.5/h; resources: ")
    assert (d.before.hourly_cost, d.after.hourly_cost) == (2.5, 10.0)
    build = semdiff.diff_builds("HEAD", {"c/m.yaml": old}, {"c/m.yaml": new})
    assert semdiff.format_text(build).splitlines()[-2] == (
        "per cluster: c GPUs 1\u21924, nodes 1\u21921, pods 1\u21921, cost 2.5\u219210 per hour")
    assert "| `c` | 1 \u2192 4 | 1 \u2192 1 | 1 \u2192 1 | 2.5 \u2192 10 |" in semdiff.format_markdown(build)


def test_a_clean_tree_is_not_read_for_a_report_without_totals(monkeypatch):
    """Equal bytes at the base and in the tree: text and markdown show no totals, so nothing is
    parsed; JSON always has the totals, so every artifact is read (once for both sides), and
    an unchanged one only for its totals (artifact_totals); a changed one in full, each side."""
    texts = {p.relative_to(REPO_ROOT / "out").as_posix(): p.read_text()
             for p in sorted((REPO_ROOT / "out" / "example-h200").rglob("*.yaml"))}
    assert texts
    read: list[str] = []
    counted: list[str] = []
    real, totals = semdiff.artifact_facts, semdiff.artifact_totals
    monkeypatch.setattr(semdiff, "artifact_facts", lambda path, *rest: read.append(path) or real(path, *rest))
    monkeypatch.setattr(semdiff, "artifact_totals", lambda path, *rest: counted.append(path) or totals(path, *rest))
    quiet = semdiff.diff_builds("HEAD", texts, dict(texts), totals_when_unchanged=False)
    assert (quiet.artifacts, quiet.impact, quiet.totals, read, counted) == ((), Impact.NONE, {}, [], [])
    full = semdiff.diff_builds("HEAD", texts, dict(texts))
    assert semdiff.format_text(quiet) == semdiff.format_text(full)
    assert semdiff.format_markdown(quiet) == semdiff.format_markdown(full)
    assert read == [] and sorted(counted) == sorted(texts)
    assert full.totals["example-h200"][0] == full.totals["example-h200"][1]
    assert full.totals["example-h200"][0].gpus > 0
    counted.clear()
    first = next(iter(texts))
    changed = {**texts, first: texts[first].replace("32768", "16384")}
    assert semdiff.diff_builds("HEAD", texts, changed, totals_when_unchanged=False).totals  # a change: totals
    assert read == [first, first] and sorted(counted) == sorted(set(texts) - {first})


# -- totals of an unchanged artifact (issue 41: `diff -o json` reads only what they take) --------

def _out_artifacts() -> list[Path]:
    return sorted(p for p in (REPO_ROOT / "out").rglob("*") if p.suffix in (".yaml", ".sbatch")
                  and ".cache" not in p.parts)


@pytest.mark.parametrize("path", _out_artifacts(), ids=lambda p: str(p.relative_to(REPO_ROOT / "out")))
def test_an_unchanged_artifacts_totals_are_its_facts_totals(path):
    rel, text = str(path.relative_to(REPO_ROOT / "out")), path.read_text()
    facts = semdiff.artifact_facts(rel, text)
    assert semdiff.artifact_totals(rel, text) == (semdiff.totals_of(facts), facts.cluster)


def test_a_dra_pd_and_slurm_artifacts_totals_are_its_facts_totals(tmp_path):
    for cluster_path, spec in ((DRA, MOE), (GB200, PD), (SLURM, DENSE)):
        text = _render(tmp_path, spec, cluster_path, spec["release"])
        rel = "c/x.sbatch" if cluster_path == SLURM else "c/x.yaml"
        facts = semdiff.artifact_facts(rel, text)
        assert semdiff.artifact_totals(rel, text) == (semdiff.totals_of(facts), facts.cluster)
        assert semdiff.totals_of(facts).gpus > 0


@pytest.mark.parametrize("chunk, parsed", [
    ("kind: ConfigMap\nmetadata: {name: x}\n", False),
    ("kind: Deployment\nspec: {}\n", True),
    ("kind: ResourceClaimTemplate\n", True),
    ("metadata: {name: x}\n", True),                                   # no kind line: parsed
    ("kind: ConfigMap\nkind: Deployment\n", True),                      # two: parsed (the loader refuses it)
    ("kind: ConfigMap\n\"kind\": Deployment\n", True),                  # a quoted key could be the kind
    ("{kind: Deployment}\nkind: ConfigMap\n", True),                     # a flow mapping as the document
    ("data:\n  x: |\n    kind: ConfigMap\nkind: Deployment\n", True),
    ("kind: 'ConfigMap'\n", True),                                        # not as the renderers write it
])
def test_a_document_is_skipped_only_when_its_text_names_one_other_kind(chunk, parsed):
    assert semdiff._may_be(chunk, semdiff._TOTAL_KINDS) is parsed


def test_a_hidden_workload_is_counted_as_the_facts_count_it():
    """A document whose `kind:` line says ConfigMap but whose YAML is a Deployment (a quoted
    key later) is parsed, and the loader refuses the duplicate key, as for the full facts."""
    text = ("kind: ConfigMap\nmetadata: {name: a}\n\"kind\": Deployment\n")
    with pytest.raises(Exception) as full:
        semdiff.artifact_facts("c/x.yaml", text)
    with pytest.raises(type(full.value)) as totals:
        semdiff.artifact_totals("c/x.yaml", text)
    assert str(totals.value) == str(full.value)
