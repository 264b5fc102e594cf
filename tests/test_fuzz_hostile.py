"""Hypothesis: bundled specs and clusters with hostile strings and numbers spliced in.

A mutation replaces a value (or renames a key) anywhere in a merged bundled spec or in a
bundled cluster profile with something an attacker or a careless user might write: control
characters, line breaks, shell syntax, path escapes, over-long or badly cased names,
NaN, infinities, negatives, 2**31 and beyond. ``render manifest`` must then either exit 1
with only ``error: ...`` lines (no traceback, no raw control character), or print an
artifact that is valid:

* Kubernetes: the YAML reads back (PyYAML, independently of our writer) to objects that
  pass the post-render check again, so nothing the writer emitted changed on the way;
* Slurm: ``bash -n`` accepts the batch script and every script it embeds.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kit

pytestmark = pytest.mark.integration  # Slurm outputs go through bash -n

REPO = kit.REPO_ROOT
SPECS = ["qwen/qwen3-0.6b", "qwen/qwen3-0.6b-pd", "deepseek-v4/1P-EP8-1D-EP8"]
CLUSTERS = ["example-gb200", "example-stateless-b200", "example-slurm"]

HOSTILE_STRINGS = [
    "", " ", "a\nb", "x\n#SBATCH --wrap=touch /tmp/fuzz-pwned", "tab\there", "nul\x00", "esc\x1b[2J", "del\x7f",
    "nel\x85", "ls\u2028", "\ufeffbom", "$(touch /tmp/fuzz-pwned)", "`id`", "a;b", "a'b", 'a"b', "a\\", "a b",
    "../..", "/etc/passwd", "a/b", "..", "UPPER", "1digit", "-dash", "x" * 70, "é", "a=b", "a:b,c", "#x",
    "{user}", "{unknown", "*", "a|b", "a&b", ">x", "(x)",
    # issue 19: invisible and bidi characters, non-ASCII digits, numbers too large for their type
    "qwen\u200b", "a\u202eb", "\u2066x\u2069", "soft\u00adhyphen", "\ud800", "٠٤:00:00", "²", "١٢Gi", "9" * 400,
    "99999999999Ei", "x" * 300_000,
]
HOSTILE_NUMBERS = [-1, 0, 2**31, 2**63, 1.5, -0.5, float("nan"), float("inf"), float("-inf"), 10**30, 10**400, 1e-05,
                   5e-324]


def _merged(name: str) -> dict:
    from manifesto.load.inputs import load_model_data

    return load_model_data(REPO / "models" / f"{name}.yaml").data


def _cluster(name: str) -> dict:
    from manifesto.load.yamlio import load_yaml

    return load_yaml(REPO / "clusters" / f"{name}.yaml")[0]


BASE_SPECS = {name: _merged(name) for name in SPECS}
BASE_CLUSTERS = {name: _cluster(name) for name in CLUSTERS}


VALUES = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.sampled_from(HOSTILE_NUMBERS),
                   st.text(alphabet="aZ09-_./:;$`'\"\\ \n\t\x00\x1b{}()|&<>#=é", max_size=12))


@st.composite
def mutated(draw):
    """(spec name, cluster name, spec doc, cluster doc, description)."""
    spec_name, cluster_name = draw(st.sampled_from(SPECS)), draw(st.sampled_from(CLUSTERS))
    docs = {"spec": copy.deepcopy(BASE_SPECS[spec_name]), "cluster": copy.deepcopy(BASE_CLUSTERS[cluster_name])}
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        which = draw(st.sampled_from(["spec", "cluster"]))
        path = draw(st.sampled_from(list(kit.value_paths(docs[which]))))
        parent, key = kit.parent_of(docs[which], path), path[-1]
        if isinstance(parent, dict) and draw(st.booleans()):
            new = draw(st.sampled_from([s for s in HOSTILE_STRINGS if s]))
            parent[new] = parent.pop(key)
            steps.append(f"{which}: rename {path} -> {new!r}")
        else:
            parent[key] = draw(VALUES)
            steps.append(f"{which}: {path} = {parent[key]!r}")
    return spec_name, cluster_name, docs["spec"], docs["cluster"], "; ".join(steps)


_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def check_error(out: str, err: str) -> None:
    assert out == ""
    assert err.endswith("\n") and err.strip(), err
    for line in err[:-1].split("\n"):
        assert line.startswith("error: "), err
    assert not _RAW_CONTROL.search(err), err
    assert all(c.isprintable() for c in err[:-1].replace("\n", "")), err  # bidi, zero-width: escaped too


def check_kubernetes(text: str) -> None:
    from manifesto.render.k8s.validity import check_objects

    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert docs and all(isinstance(d, dict) and d.get("kind") for d in docs)
    check_objects(docs)


def check_slurm(text: str, work: Path) -> None:
    from test_slurm_render import BASH_PARTS, heredocs

    for i, script in enumerate([text] + [body for tag, body in heredocs(text) if tag in BASH_PARTS]):
        path = work / f"script-{i}.sh"
        path.write_text(script, encoding="utf-8")
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr + "\n" + script


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith("MANIFESTO_") and name != "MANIFESTO_SHARED_DIR":
                mp.delenv(name)
        mp.setenv("MANIFESTO_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
        mp.setenv("MANIFESTO_NO_CACHE", "1")
        yield


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=mutated())
def test_hostile_mutations_are_refused_or_valid(case, isolated, tmp_path_factory):
    spec_name, cluster_name, spec_doc, cluster_doc, steps = case
    work = tmp_path_factory.mktemp("hostile")
    (work / "spec.yaml").write_text(yaml.safe_dump(spec_doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (work / "cluster.yaml").write_text(yaml.safe_dump(cluster_doc, sort_keys=False, allow_unicode=True),
                                       encoding="utf-8")
    rc, out, err = kit.cli_in_process("render", "manifest", str(work / "spec.yaml"), "--cluster", str(work / "cluster.yaml"),
                                "--user", "u", "--namespace", "ns")
    try:
        assert "Traceback" not in err and rc in (0, 1), err
        if rc == 1:
            check_error(out, err)
        elif cluster_doc.get("platform") == "slurm":
            check_slurm(out, work)
        else:
            check_kubernetes(out)
    except AssertionError:
        print(f"spec {spec_name}, cluster {cluster_name}: {steps}")
        raise


def test_unmutated_pairs_render_valid(isolated, tmp_path):
    """The checks above accept the bundled pairs as they are (so a failure means the mutation)."""
    for spec_name, spec_doc in BASE_SPECS.items():
        for cluster_name, cluster_doc in BASE_CLUSTERS.items():
            rc, out, err = kit.cli_in_process("render", "manifest", spec_name, "--cluster", cluster_name, "--user", "u",
                                        "--namespace", "ns")
            if rc == 1:  # a pair the bundled examples do not support (e.g. an accelerator the cluster lacks)
                check_error(out, err)
                continue
            assert rc == 0, err
            if cluster_doc.get("platform") == "slurm":
                check_slurm(out, tmp_path)
            else:
                check_kubernetes(out)
