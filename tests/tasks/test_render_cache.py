"""The local render cache: hits skip the heavy path, any input change is a miss."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kit import cli_in_process
from store_kit import all_files, entry_files, read_entry, write_entry

pytestmark = pytest.mark.integration  # each render is a fresh interpreter: that is the point

REPO = Path(__file__).resolve().parents[2]

BASE = """\
release: cache-demo
model: {id: org/model, image: vllm/vllm-openai:v0.33.0}
roles:
  - name: decode
    parallelism: {tp: 1}
"""
CHILD = "extends: base.yaml\nroles:\n  decode:\n    vllm: {max_model_len: 4096}\n"
CLUSTER = """\
name: cache-cluster
accelerators:
  default: b200
  profiles:
    b200: {gpus_per_node: 8, allocation: {extended_resource: {resource_name: nvidia.com/gpu}}}
"""

PROBE = (
    "import sys, runpy; sys.argv = ['manifesto'] + sys.argv[1:]\n"
    "from manifesto.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "heavy = sorted(m for m in ('pydantic_core', 'ruamel.yaml', 'msgspec') if m in sys.modules)\n"
    "print('HEAVY=' + ','.join(heavy), file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "child.yaml").write_text(CHILD)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    return tmp_path


RENDER = ("render", "manifest", "child.yaml", "--cluster", "cluster.yaml", "--user", "u", "--namespace", "ns")


def _render(tree: Path, *extra: str, env_extra: dict | None = None):
    """A render in a fresh interpreter, with the cache in conftest's per-test folder."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *RENDER, *extra],
        cwd=tree, env={**os.environ, **(env_extra or {})}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    heavy = proc.stderr.strip().splitlines()[-1].removeprefix("HEAVY=")
    return proc.stdout, heavy


def test_second_render_is_a_hit_without_heavy_imports(tree):
    first, heavy_first = _render(tree)
    second, heavy_second = _render(tree)
    assert first == second
    assert heavy_first == "msgspec,ruamel.yaml"  # a miss parses (valid inputs need no pydantic-core)
    assert heavy_second == ""


def test_editing_an_extends_parent_is_a_miss(tree):
    first, _ = _render(tree)
    (tree / "base.yaml").write_text(BASE.replace("tp: 1", "tp: 2"))
    second, heavy = _render(tree)
    assert "ruamel.yaml" in heavy
    assert "--tensor-parallel-size 2" in second and "--tensor-parallel-size 1" in first


def test_other_options_are_other_entries(tree):
    a, _ = _render(tree)
    b, heavy = _render(tree, "--no-idle-shutdown")
    assert "ruamel.yaml" in heavy and a != b


def _entries(store: Path) -> list[Path]:
    return entry_files(store)  # the artifact texts they hold are blobs of their own


def _results(store: Path) -> list[dict]:
    entries = [read_entry(p) for p in _entries(store)]
    return [e for e in entries if e["kind"] == "result"]


@pytest.mark.parametrize("damage", [b"{not json", b"", b'{"kind": "result", "key": "x"}'])
def test_corrupt_entry_is_a_miss(tree, isolated_env, damage):
    first, _ = _render(tree)
    entries = _entries(isolated_env.render_cache)
    assert {read_entry(e)["kind"] for e in entries} == {"code", "request", "result"}
    for entry in entries:
        entry.write_bytes(damage)
    second, heavy = _render(tree)
    assert second == first and "ruamel.yaml" in heavy
    results = [read_entry(e) for e in _entries(isolated_env.render_cache)]
    assert [r["text"] for r in results if r["kind"] == "result"] == [first]


def test_a_result_whose_text_was_altered_is_a_miss(tree, isolated_env):
    first, _ = _render(tree)
    for entry in _entries(isolated_env.render_cache):
        data = read_entry(entry)
        if data["kind"] == "result":
            write_entry(entry, {**data, "text": data["text"] + "# forged\n"})
    second, heavy = _render(tree)
    assert second == first and "ruamel.yaml" in heavy


def test_config_validate_and_explain_use_the_same_store(tree, isolated_env):
    _render(tree)  # `render manifest` stored the render task's result
    proc = subprocess.run([sys.executable, "-c", PROBE, "config", "validate", *RENDER[2:]], cwd=tree,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: child.yaml renders against cache-cluster (Kubernetes manifest, ")
    assert proc.stderr.strip().splitlines()[-1] == "HEAVY="  # a hit: no schema, YAML or msgspec import
    explain = [sys.executable, "-c", PROBE, "explain", *RENDER[2:]]
    first = subprocess.run(explain, cwd=tree, capture_output=True, text=True, timeout=120)
    second = subprocess.run(explain, cwd=tree, capture_output=True, text=True, timeout=120)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout and first.stdout.startswith("instance ")
    assert "ruamel.yaml" in first.stderr.splitlines()[-1] and second.stderr.splitlines()[-1] == "HEAVY="


def test_cache_can_be_turned_off(tree):
    _render(tree)
    _, heavy = _render(tree, env_extra={"MANIFESTO_NO_CACHE": "1"})
    assert "ruamel.yaml" in heavy


def test_a_user_profile_shadowing_a_bundled_one_is_a_miss(tree):
    (tree / "base.yaml").write_text(BASE.replace("roles:", "routing: {kind: load_aware}\nroles:"))
    first, _ = _render(tree, "--routing-profile", "kv-aware")
    home = tree / "home" / "routing"
    home.mkdir(parents=True)
    bundled = (Path(__file__).resolve().parents[2] / "routing" / "kv-aware.yaml").read_text()
    (home / "kv-aware.yaml").write_text("# a user's own copy\n" + bundled)
    second, heavy = _render(tree, "--routing-profile", "kv-aware", env_extra={"MANIFESTO_CONFIG_HOME": str(tree / "home")})
    assert "ruamel.yaml" in heavy and "# a user's own copy" in second and first != second


def test_renders_see_the_isolated_environment(tree, isolated_env, monkeypatch):
    """conftest's ``isolated_env`` reaches in-process and subprocess renders alike: both read
    the user catalog from the test's own config home and store into the test's own cache."""
    assert os.environ["XDG_CACHE_HOME"] == str(isolated_env.cache)
    assert not isolated_env.render_cache.exists()
    routing = isolated_env.config_home / "routing"
    routing.mkdir()
    bundled = (REPO / "routing" / "kv-aware.yaml").read_text()
    (routing / "mine.yaml").write_text("# only in the isolated catalog\n" + bundled)
    (tree / "base.yaml").write_text(BASE.replace("roles:", "routing: {kind: load_aware}\nroles:"))
    monkeypatch.chdir(tree)

    rc, in_process, err = cli_in_process(*RENDER, "--routing-profile", "mine")
    assert (rc, err) == (0, "")
    assert "# only in the isolated catalog" in in_process
    assert len(_results(isolated_env.render_cache)) == 1

    spawned, heavy = _render(tree, "--routing-profile", "mine")
    assert spawned == in_process and heavy == ""  # the subprocess hit the in-process entry
    fresh, heavy = _render(tree, "--routing-profile", "mine", "--no-idle-shutdown")
    assert "ruamel.yaml" in heavy and "# only in the isolated catalog" in fresh
    assert len(_results(isolated_env.render_cache)) == 2


def test_the_commands_store_keeps_to_its_bound(tree, isolated_env, monkeypatch):
    """Renders past ``MANIFESTO_STORE_LIMIT`` prune the render cache (measured every
    ``PRUNE_EVERY``-th write, here every one) to ``LOW_WATER`` of it: the least recently used
    entries go, the last render's index and result stay and answer the next render."""
    from manifesto.tasks import commands

    monkeypatch.chdir(tree)
    monkeypatch.setattr(commands, "PRUNE_EVERY", 1)
    rc, first, _ = cli_in_process(*RENDER)
    one = sum(f.stat().st_size for f in all_files(isolated_env.render_cache))
    limit = int(one * 3.5)
    monkeypatch.setenv("MANIFESTO_STORE_LIMIT", str(limit))
    for i in range(8):
        rc, text, err = cli_in_process(*RENDER[:-1], f"ns{i}")
        assert (rc, err) == (0, "")
        held = sum(f.stat().st_size for f in all_files(isolated_env.render_cache))
        assert held <= limit, (i, held, limit)
    assert 9 * one > limit  # without the bound it would hold every render
    def no_task(*args):
        raise AssertionError("the last render's entries were pruned")

    monkeypatch.setattr("manifesto.tasks.runner.run", no_task)  # a hit runs no task
    rc, again, err = cli_in_process(*RENDER[:-1], "ns7")
    assert (rc, err) == (0, "") and again == text


def test_a_bad_store_limit_is_a_warning_for_a_render(tree, isolated_env, monkeypatch, capsys):
    from manifesto.tasks import commands

    monkeypatch.chdir(tree)
    monkeypatch.setattr(commands, "PRUNE_EVERY", 1)
    monkeypatch.setenv("MANIFESTO_STORE_LIMIT", "lots")
    rc, text, err = cli_in_process(*RENDER)
    assert rc == 0 and "kind: " in text
    assert "MANIFESTO_STORE_LIMIT: expected a size such as 2Gi" in err and err.count("\n") == 1
