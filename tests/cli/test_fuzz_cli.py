"""Mutate valid bundled specs and check the CLI never crashes.

Hypothesis drops and renames keys, changes a value's type, swaps numbers for strings or
negatives, nests garbage, and splices junk lines into the YAML text. ``manifesto explain``
must then exit 0, or exit 1 with one line per error, each starting with ``error: ``; every
line after the first is another error of the same file, and there is never a traceback.

Most runs are in-process (``manifesto.cli.main``) for speed; a few go through a real
subprocess. Nesting stays under 25 levels: deeper input hits a known RecursionError
(``test_load_errors.py::test_deeply_nested_yaml_no_traceback``).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kit
from kit import cli_in_process

REPO = kit.REPO_ROOT
MODELS = sorted(p for p in (REPO / "models").rglob("*.yaml") if not p.name.endswith("-base.yaml"))
CLUSTERS = sorted((REPO / "clusters").glob("*.yaml"))


def _merged(path: Path):
    from manifesto.load.inputs import load_model_data

    return load_model_data(path).data


BASES = {p.relative_to(REPO / "models").as_posix(): _merged(p) for p in MODELS}


# ---- mutations ------------------------------------------------------------------------------


SCALARS = st.one_of(
    st.integers(-(2 ** 40), 2 ** 40), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
    st.text(alphabet="abcdefgh-_./: 0123456789{}", max_size=12),
)
KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-.0123456789", min_size=1, max_size=12)
GARBAGE = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8)
JUNK_LINE = st.text(alphabet="abc:-[]{}&*!|>'\"#%@`,? \t0123", max_size=20)


def _nest(value, depth: int, kinds: list[bool]):
    for as_list in kinds[:depth]:
        value = [value] if as_list else {"x": value}
    return value


@st.composite
def mutated(draw):
    """(model name, cluster path, YAML text, description)."""
    name = draw(st.sampled_from(sorted(BASES)))
    doc = copy.deepcopy(BASES[name])
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        paths = list(kit.value_paths(doc))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = kit.parent_of(doc, path), path[-1]
        kind = draw(st.sampled_from(["drop", "rename", "retype", "junk-key", "number", "nest"]))
        if kind == "drop":
            del parent[key]
        elif kind == "rename" and isinstance(parent, dict):
            new = draw(st.one_of(KEYS, st.just(str(key)[:-1] or "x"), st.just(str(key) + "s"),
                                 st.just(str(key).upper())))
            parent[new] = parent.pop(key)
        elif kind == "retype":
            parent[key] = draw(GARBAGE)
        elif kind == "junk-key":
            target = parent if isinstance(parent, dict) else doc
            target[draw(KEYS)] = draw(GARBAGE)
        elif kind == "number":
            value = parent[key]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                parent[key] = draw(st.sampled_from([str(value), -value, 0, -1, float(value) + 0.5, 2 ** 63]))
            else:
                parent[key] = draw(st.sampled_from(["8", "-1", "0", "1e3", 0, -4]))
        elif kind == "nest":
            depth = draw(st.integers(2, 20))
            parent[key] = _nest(parent[key], depth, draw(st.lists(st.booleans(), min_size=depth, max_size=depth)))
        steps.append(f"{kind} {path}")
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    if draw(st.booleans()):
        lines = text.splitlines()
        where = draw(st.integers(0, len(lines)))
        lines.insert(where, draw(JUNK_LINE))
        text = "\n".join(lines) + "\n"
        steps.append(f"junk line at {where + 1}")
    cluster = draw(st.sampled_from(CLUSTERS))
    return name, cluster, text, "; ".join(steps)


# ---- checks ---------------------------------------------------------------------------------

ERROR_LINE = re.compile(r"\S.*")


def check_output(rc: int, out: str, err: str, spec_display: str) -> None:
    assert "Traceback" not in err, err
    assert rc in (0, 1), (rc, err)
    if rc == 0:
        assert err == ""
        assert out
        return
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n"), err
    lines = err[:-1].split("\n")
    assert all(ERROR_LINE.fullmatch(line) for line in lines), err
    assert all(line.startswith("error: ") for line in lines), err
    for line in lines[1:]:  # further errors of one file: `error: file:line:col: path: message`
        assert line.startswith(f"error: {spec_display}:"), err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_mutated_specs_never_crash(case, tmp_path_factory):
    name, cluster, text, steps = case
    path = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    rc, out, err = cli_in_process("explain", str(path), "--cluster", str(cluster), "--user", "u",
                                  "--namespace", "ns")
    try:
        check_output(rc, out, err, str(path))
    except AssertionError:
        print(f"model {name}, cluster {cluster.name}, mutations: {steps}\n--- spec ---\n{text}")
        raise


def test_unmutated_specs_pass_the_same_check(tmp_path):
    for name, doc in BASES.items():
        path = tmp_path / name.replace("/", "-")
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        for cluster in CLUSTERS:
            rc, out, err = cli_in_process("explain", str(path), "--cluster", str(cluster), "--user", "u",
                                          "--namespace", "ns")
            check_output(rc, out, err, str(path))


# ---- a few through a real process -----------------------------------------------------------

SUBPROCESS_CASES = {
    "drop-model": lambda d: d.pop("model"),
    "tp-as-string": lambda d: d["roles"][0]["parallelism"].update(tp="2"),
    "negative-replicas-and-junk-key": lambda d: (d["roles"][0]["lws"].update(replicas=-3),
                                                 d["roles"][0].update(speling=1)),
    "nested-garbage": lambda d: d["roles"][0].update(vllm=_nest({"a": [1, {"b": None}]}, 20, [True, False] * 10)),
}


@pytest.mark.integration
@pytest.mark.parametrize("mutation", list(SUBPROCESS_CASES))
def test_subprocess_mutations(tmp_path, mutation):
    doc = copy.deepcopy(BASES["deepseek-v4/1P-EP8-1D-EP8.yaml"])
    SUBPROCESS_CASES[mutation](doc)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = kit.run_cli("explain", "spec.yaml", "--cluster", str(REPO / "clusters/example-gb200.yaml"),
                       "--user", "u", "--namespace", "ns", cwd=tmp_path,
                       env={"MANIFESTO_CONFIG_HOME": str(tmp_path), "MANIFESTO_ROUTING_PROFILE": ""})
    check_output(proc.returncode, proc.stdout, proc.stderr, "spec.yaml")
    if mutation != "nested-garbage":
        assert proc.returncode == 1
