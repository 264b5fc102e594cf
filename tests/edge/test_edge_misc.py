"""The edge's leftovers (issue 25): temporary names within NAME_MAX, catalog import names,
``init`` validating the cluster profile first, a missing kubectl named as such, and
``matrix --shards`` agreeing with ``build --shard``."""

from __future__ import annotations

import os

import pytest

from manifesto.edge import fs as fsutil


# -- temporary names ------------------------------------------------------------------------

@pytest.mark.parametrize("size", [245, 250, 255])
@pytest.mark.parametrize("confined", [False, True])
def test_a_long_legal_name_gets_a_legal_temporary_name(tmp_path, size, confined):
    name = "m" * (size - 5) + ".yaml"
    target = tmp_path / "out" / name
    fsutil.write_atomic(target, "x: 1\n", root=tmp_path if confined else None, suffix=".tmp~")
    assert target.read_text() == "x: 1\n"
    assert os.listdir(target.parent) == [name]  # no temporary file left behind


def test_a_long_multibyte_name_is_cut_at_a_character(tmp_path):
    name = "é" * 127  # 254 bytes
    target = tmp_path / name
    fsutil.write_atomic(target, b"ok")
    assert target.read_bytes() == b"ok"
    tmp = fsutil.temp_name(name, ".tmp~", "ab" * 6)
    assert len(tmp.encode()) <= fsutil.NAME_MAX and tmp.startswith(".é") and tmp.endswith(".abababababab.tmp~")
    tmp.encode("utf-8")  # whole characters only


def test_temporary_names_keep_what_cleaners_look_for():
    for name in ("a", "x" * 255, "ü" * 127):
        for suffix in ("", ".tmp", ".tmp~"):
            tmp = fsutil.temp_name(name, suffix, "0" * 12)
            assert tmp.startswith(".") and tmp.endswith("0" * 12 + suffix)
            assert len(tmp.encode()) <= fsutil.NAME_MAX
    assert fsutil.temp_name("short.yaml", ".tmp", "f" * 12) == ".short.yaml.ffffffffffff.tmp"


@pytest.mark.integration  # the render asks kubectl for the context's namespace
def test_render_file_writes_a_245_character_spec_name(tmp_path, monkeypatch):
    from kit import REPO_ROOT, cli_in_process

    name = "q" * 240 + ".yaml"
    (tmp_path / name).write_text((REPO_ROOT / "models" / "qwen" / "qwen3-0.6b.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    for out in (name[:-5] + ".out", "o" * 255):
        res = cli_in_process("render", "file", name, "--cluster", "example-gb200", "-o", str(tmp_path / out))
        assert res.returncode == 0, res.stderr
        assert (tmp_path / out).read_text().startswith("#")
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]


# -- catalog names ----------------------------------------------------------------------------

# zero-width space and joiner, bidi override and isolate, line breaks, ESC, TAB, soft hyphen,
# a no-break space and the line separator: each could forge or hide an entry name.
HIDDEN = ["\u200b", "\u200d", "\u202e", "\u2066", "\n", "\r", "\x1b[31m", "\t", "\u00ad", "\u00a0", "\u2028",
          "\x00", "\ufeff"]


@pytest.mark.parametrize("char", HIDDEN, ids=lambda c: f"U+{ord(c[0]):04X}")
def test_import_refuses_an_invisible_or_control_character_in_the_name(isolated_env, char, tmp_path, monkeypatch):
    from kit import REPO_ROOT, cli_in_process

    monkeypatch.chdir(tmp_path)
    src = REPO_ROOT / "clusters" / "example-gb200.yaml"
    res = cli_in_process("config", "import", "clusters", str(src), "--name", f"team/acme{char}-h100")
    assert res.returncode == 1 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "is refused" in lines[0] and f"U+{ord(char[0]):04X}" in lines[0], res.stderr
    assert lines[0].isprintable() and "\x1b" not in res.stderr
    assert not list(isolated_env.config_home.rglob("*"))  # nothing written


@pytest.mark.parametrize("char", ["\u202e", "\n", "\u200b"], ids=lambda c: f"U+{ord(c):04X}")
def test_edit_refuses_such_a_name_before_starting_an_editor(isolated_env, char, tmp_path, monkeypatch):
    from kit import cli_in_process

    canary = tmp_path / "editor-ran"
    monkeypatch.setenv("EDITOR", f"touch {canary}")
    res = cli_in_process("config", "edit", "models", f"exp/new{char}model")
    assert res.returncode == 1 and len(res.stderr.splitlines()) == 1 and "is refused" in res.stderr
    assert not canary.exists() and not list(isolated_env.config_home.rglob("*"))


def test_a_lookup_by_such_a_name_is_refused_on_one_line():
    from manifesto.load.catalog import find
    from manifesto.errors import CatalogError

    with pytest.raises(CatalogError) as err:
        find("models", "qwen/aggre\ngated")
    assert "U+000A" in err.value.format() and "\n" not in err.value.format()


def test_plain_names_are_still_imported(isolated_env, tmp_path, monkeypatch):
    from kit import REPO_ROOT, cli_in_process

    src = REPO_ROOT / "clusters" / "example-gb200.yaml"
    res = cli_in_process("config", "import", "clusters", str(src), "--name", "team/acme h100.v2")
    assert res.returncode == 0, res.stderr
    assert (isolated_env.config_home / "clusters" / "team" / "acme h100.v2.yaml").is_file()


# -- init validates the cluster profile before it writes ---------------------------------------

def _gb200() -> str:
    from kit import REPO_ROOT

    return (REPO_ROOT / "clusters" / "example-gb200.yaml").read_text()


BAD_PROFILES = {
    "unknown-field": lambda: _gb200() + "gpus_everywhere: true\n",
    "wrong-type": lambda: _gb200().replace("gpus_per_node: 4", "gpus_per_node: four", 1),
    "bad-default": lambda: _gb200().replace("default: gb200", "default: h900", 1),
    "bad-yaml": lambda: "name: x\n  platform: : kubernetes\n",
    "not-a-mapping": lambda: "- just\n- a list\n",
    "empty": lambda: "",
    "not-utf8": lambda: b"name: \xff\xfe\n",
    "deep": lambda: "a: " + "[" * 5000 + "]" * 5000 + "\n",
}


@pytest.mark.parametrize("case", sorted(BAD_PROFILES))
def test_init_refuses_a_bad_cluster_profile_and_writes_nothing(tmp_path, case, monkeypatch):
    from kit import cli_in_process

    body = BAD_PROFILES[case]()
    profile = tmp_path / "acme.yaml"
    profile.write_bytes(body if isinstance(body, bytes) else body.encode())
    monkeypatch.chdir(tmp_path)
    res = cli_in_process("init", "ws", "--cluster", str(profile), "--context", "acme")
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.startswith("error: ") and "acme.yaml" in res.stderr, res.stderr
    assert "wrote" not in res.stderr and not (tmp_path / "ws").exists()


def test_init_still_copies_a_valid_profile_byte_for_byte(tmp_path, monkeypatch):
    from kit import cli_in_process

    profile = tmp_path / "acme.yaml"
    profile.write_text("# our own profile\n" + _gb200())
    monkeypatch.chdir(tmp_path)
    res = cli_in_process("init", "ws", "--cluster", str(profile), "--context", "acme")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "ws" / "clusters" / "acme.yaml").read_text() == profile.read_text()


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_init_refuses_a_profile_that_is_no_regular_file(tmp_path, kind, monkeypatch):
    from kit import cli_in_process

    profile = tmp_path / "acme.yaml"
    os.mkfifo(profile) if kind == "fifo" else profile.mkdir()
    monkeypatch.chdir(tmp_path)
    res = cli_in_process("init", "ws", "--cluster", str(profile), "--context", "acme")
    assert res.returncode == 1 and "Traceback" not in res.stderr and not (tmp_path / "ws").exists(), res.stderr


# -- a missing kubectl --------------------------------------------------------------------------

CLUSTER_COMMANDS = [
    ["deploy", "qwen/aggregated"],
    ["deploy", "qwen/aggregated", "--context", "lab"],
    ["deploy", "routing", "qwen/qwen3-0.6b-pd"],
    ["deploy", "bootstrap"],
    ["deploy", "//:qwen-demo"],
    ["ready", "qwen/aggregated"],
    ["stop", "qwen/aggregated"],
    ["stop", "--instance", "x"],
    ["servers"],
    ["servers", "//:qwen-demo"],
    ["status", "//:qwen-demo"],
    ["diff", "//:qwen-demo"],
    ["test", "e2e", "qwen/aggregated"],
    ["file", "apply", "out/deploy/qwen-demo.yaml"],
    ["file", "diff", "out/deploy/qwen-demo.yaml"],
]


@pytest.mark.integration  # the commands try to start kubectl (and fail): that counts as starting a process
@pytest.mark.parametrize("argv", CLUSTER_COMMANDS, ids=" ".join)
def test_a_missing_kubectl_is_named_first_by_every_cluster_command(argv, tmp_path, monkeypatch, bundled_workspace):
    from kit import cli_in_process

    monkeypatch.chdir(bundled_workspace)  # for //:qwen-demo and out/deploy/
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    res = cli_in_process(*argv)
    assert res.returncode == 1, res.stderr
    assert res.stderr.startswith("error: kubectl not found on PATH; install kubectl to use cluster commands"), res.stderr
    assert len(res.stderr.splitlines()) == 1 and "context is current" not in res.stderr


def test_kubectl_found_follows_the_path_kubectl_would_run_with(tmp_path, monkeypatch):
    from manifesto.ops import kubectl

    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "kubectl"
    exe.write_text("#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    assert not kubectl.found()
    assert kubectl.found((("PATH", str(tmp_path / "bin")),)) is False  # not executable
    exe.chmod(0o755)
    assert kubectl.found((("PATH", str(tmp_path / "bin")),))
    with pytest.raises(Exception, match="kubectl not found on PATH"):
        kubectl.require()


# -- shards -------------------------------------------------------------------------------------

def test_one_split_deals_every_pair_once_and_evenly():
    from manifesto.build_graph.shard import MAX_SHARDS, parse_shard, pick, split

    pairs = [(f"models/m{k % 13}.yaml", f"c{k % 5}") for k in range(61)]
    for n in (1, 2, 7, 61, 62, MAX_SHARDS):
        parts = split(pairs, n)
        assert len(parts) == n and sorted(p for part in parts for p in part) == sorted(pairs)
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
        for i in (1, n):
            assert pick(pairs, parse_shard(f"{i}/{n}")) == parts[i - 1]


def test_renderable_pairs_are_dealt_first_and_no_pair_is_lost_to_a_wrong_guess():
    import random

    from manifesto.build_graph.shard import split

    pairs = [(f"models/m{k}.yaml", f"c{k % 3}") for k in range(40)]
    skipped = {p for p in pairs if p[1] == "c0"}  # 14 skipped, 26 renderable
    parts = split(pairs, 4, lambda p: p not in skipped)
    assert sorted(p for part in parts for p in part) == sorted(pairs)
    work = [sum(p not in skipped for p in part) for part in parts]
    assert max(work) - min(work) <= 1 and sum(work) == 26
    assert all(part == sorted(part) for part in parts)
    rng = random.Random(7)
    for _ in range(20):  # any guess, however wrong, still deals every pair exactly once
        guess = {p: rng.random() < 0.5 for p in pairs}
        parts = split(pairs, rng.randint(1, 9), guess.__getitem__)
        assert sorted(p for part in parts for p in part) == sorted(pairs)


@pytest.mark.parametrize("text", ["0", "-1", "257", "1000000000", "9" * 40, "9" * 5000, "0x3", "", " ", "٣", "1e3"])
def test_shard_counts_out_of_range_are_refused_at_once(text):
    from manifesto.build_graph.shard import parse_count
    from manifesto.errors import BuildError

    with pytest.raises(BuildError) as err:
        parse_count(text)
    message = err.value.format()
    assert "256" in message and len(message) < 300


@pytest.mark.parametrize("text", ["1/257", "1/1000000", "0/3", "4/3", "1/" + "9" * 5000, "1/\x1b[2J3"])
def test_build_refuses_the_same_shards(text):
    from manifesto.build_graph.shard import parse_shard
    from manifesto.errors import BuildError

    with pytest.raises(BuildError) as err:
        parse_shard(text)
    assert "\x1b" not in err.value.format() and len(err.value.format()) < 300


@pytest.mark.integration  # the plan renders with a worker pool
def test_every_shard_the_matrix_prints_is_one_the_build_takes(monkeypatch, bundled_workspace):
    import json

    from kit import cli_in_process
    from manifesto.build_graph.shard import parse_shard

    monkeypatch.chdir(bundled_workspace)
    every = json.loads(cli_in_process("matrix").stdout)
    renderable = sum(r["status"] == "ok" for r in every)
    assert renderable < len(every)  # the bundled pairs include skipped ones
    for n in (1, 3, 40, 256):
        res = cli_in_process("matrix", "--format", "github", "--shards", str(n))
        assert res.returncode == 0, res.stderr
        shards = json.loads(res.stdout)["include"]
        assert [parse_shard(s["shard"])[1] for s in shards] == [n] * len(shards)
        assert sum(s["pairs"] for s in shards) == renderable  # skipped pairs are not counted
        work = [s["pairs"] for s in shards] + [0] * (min(n, renderable) - len(shards))
        assert max(work) - min(work) <= 1, work  # and do not take a renderable pair's turn
        as_json = json.loads(cli_in_process("matrix", "--shards", str(n)).stdout)
        assert as_json == shards
    res = cli_in_process("matrix", "--format", "github", "--shards", "100000000000")
    assert res.returncode == 2 and "at most 256" in res.stderr and res.stdout == ""


# -- completion output leaves through the edge ---------------------------------------------------

def _complete_output(monkeypatch, capsys, shell, words, found):
    from manifesto.cli import complete

    monkeypatch.setattr(complete, "candidates", lambda _words: (found, False))
    assert complete.main([shell, "--", *words]) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_get_plain_values_and_escaped_descriptions(monkeypatch, capsys, shell):
    found = [("job-1", "evil\x1b]0;title\x07 running"), ("bad\x1b[2J", "x"), ("two\nlines", ""),
             ("$(touch x)", "from\u202ekubectl"), ("plain", "")]
    out = _complete_output(monkeypatch, capsys, shell, ["slurm", "stop", ""], found)
    assert out == ["job-1\tevil\\x1b]0;title\\x07 running", "$(touch x)\tfrom\\u202ekubectl", "plain"]


def test_bash_gets_shell_words(monkeypatch, capsys):
    found = [("$(touch x)", "d"), ("a b", ""), ("it's", ""), ("plain/name:1", ""), ("bad\x1b", "")]
    out = _complete_output(monkeypatch, capsys, "bash", ["manifesto render manifest "], found)
    assert out == ["'$(touch x)'", "'a b'", "'it'\"'\"'s'", "plain/name:1"]


def test_bash_words_inside_an_open_quote():
    from manifesto.cli.complete import _bash_words, bash_word

    assert _bash_words("manifesto render manifest 'evil/it") == (["render", "manifest", "evil/it"], "'")
    assert _bash_words('manifesto render manifest "a b') == (["render", "manifest", "a b"], '"')
    assert _bash_words("manifesto render ") == (["render", ""], "")
    assert _bash_words("manifesto render manifest 'evil/a ") == (["render", "manifest", "evil/a "], "'")
    assert bash_word("it's", "'") == "it'\\''s"
    assert bash_word('$(x) `y` "z" \\', '"') == '\\$(x) \\`y\\` \\"z\\" \\\\'
    assert bash_word("wow!", '"') is None  # history expansion: not offered inside double quotes
