"""Conventions every command follows: -o/--output, global -q/-v, help and version, typo hints,
build addresses without the leading //, and the empty GitHub matrix."""

from __future__ import annotations

import json

import pytest
import yaml

from kit import REPO_ROOT, copy_bundled_workspace, run_cli

pytestmark = pytest.mark.integration  # every test here runs the CLI as a process

PAIR = ("qwen/qwen3-0.6b", "--cluster", "example-gb200", "--user", "u", "--namespace", "demo")

# Every command that prints data and needs no cluster, with the arguments it needs.
DATA_COMMANDS = {
    "explain": ("explain", *PAIR),
    "config validate": ("config", "validate", *PAIR),
    "config home": ("config", "home"),
    "config list": ("config", "list", "models"),
    "config resolve": ("config", "resolve", "clusters", "example-gb200"),
    "build": ("build", "--check", "//models/qwen:qwen3-0.6b"),
    "list": ("list", "//models/qwen:"),
    "deps": ("deps", "//models/qwen:qwen3-0.6b", "--cluster", "example-gb200"),
    "dependents": ("dependents", "clusters/example-h200.yaml"),
    "matrix": ("matrix", "//models/qwen:qwen3-0.6b"),
}


_WORKSPACE: list = []  # the module's copy of the bundled workspace, where _cli runs by default


@pytest.fixture(scope="module", autouse=True)
def _workspace(tmp_path_factory):
    """The build-graph commands here run on a copy of the bundled workspace, not the checkout."""
    _WORKSPACE[:] = [copy_bundled_workspace(tmp_path_factory.mktemp("conventions") / "bundled")]
    yield
    _WORKSPACE.clear()


def _cli(*args: str, **kw):
    return run_cli(*args, env={"MANIFESTO_NO_CACHE": "1", **kw.pop("env", {})}, cwd=kw.pop("cwd", _WORKSPACE[0]),
                   **kw)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("command", list(DATA_COMMANDS))
def test_every_data_command_prints_json_and_yaml(command, fmt):
    proc = _cli(*DATA_COMMANDS[command], "-o", fmt)
    assert proc.returncode == 0, proc.stderr
    value = json.loads(proc.stdout) if fmt == "json" else yaml.safe_load(proc.stdout)
    assert value not in (None, "", [], {}), proc.stdout


def test_json_and_yaml_carry_the_same_value():
    as_json = json.loads(_cli("config", "list", "clusters", "-o", "json").stdout)
    as_yaml = yaml.safe_load(_cli("config", "list", "clusters", "--output", "yaml").stdout)
    assert as_json == as_yaml and {"name": "example-gb200", "source": "bundled"}.items() <= as_json[0].items()


def test_name_output_is_one_identifier_per_line():
    assert _cli("list", "//models/qwen:", "-o", "name").stdout.split() == [
        "//models/qwen:aggregated", "//models/qwen:h200-aggregated", "//models/qwen:qwen3-0.6b",
        "//models/qwen:qwen3-0.6b-pd"]
    assert _cli("explain", *PAIR, "-o", "name").stdout == "qwen3-0-6b\n"


def test_config_list_leaves_out_base_files_but_resolve_finds_them():
    names = _cli("config", "list", "models", "-o", "name").stdout.split()
    assert "deepseek-v4/1P-EP8-1D-EP8" in names and not any(n.endswith("-base") for n in names)
    proc = _cli("config", "resolve", "models", "deepseek-v4/wide-ep-base")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("models/deepseek-v4/wide-ep-base.yaml")


def test_bare_command_prints_help_and_succeeds():
    proc = _cli()
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("usage: manifesto") and "render" in proc.stdout and "required" not in proc.stdout


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag):
    from manifesto import __version__

    proc = _cli(flag)
    assert proc.returncode == 0 and proc.stdout == f"manifesto {__version__}\n"


@pytest.mark.parametrize("argv, message", [
    (("rendr",), "manifesto: error: unknown command 'rendr' (did you mean 'render'?)"),
    (("render", "manifst"), "manifesto render: error: unknown command 'manifst' (did you mean 'manifest'?)"),
    (("build", "--chek"), "manifesto: error: unknown option '--chek' (did you mean '--check'?)"),
    (("servers", "-o", "jsn"), "manifesto servers: error: argument --output/-o: invalid choice 'jsn' "
                               "(did you mean 'json'?)"),
])
def test_typos_get_a_suggestion(argv, message):
    proc = _cli(*argv)
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1] == message


USAGE = "usage: manifesto [-h] [--version] [--quiet] [--verbose] COMMAND ...\n"


@pytest.mark.parametrize("argv, message", [
    # After '--' every word is positional: '--help' is init's DIR, the rest are extra words,
    # not an unknown option '--namespace' "(did you mean '--namespace'?)".
    (("init", "--", "--help", "--namespace", "demo"), "manifesto: error: unexpected arguments after '--': "
     "--namespace demo (after '--' every word is a positional argument, never an option)"),
    (("init", "--", "a", "b"), "manifesto: error: unexpected argument after '--': b (after '--' every word is a "
     "positional argument, never an option)"),
    (("init", "--nmespace", "x"), "manifesto: error: unknown option '--nmespace' (did you mean '--namespace'?)"),
])
def test_words_after_double_dash_are_never_called_options(tmp_path, argv, message):
    proc = run_cli(*argv, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", USAGE + message + "\n")
    assert list(tmp_path.iterdir()) == []  # nothing was scaffolded


def test_quiet_silences_notes_but_not_data(tmp_path):
    target = tmp_path / "q.yaml"
    loud = _cli("render", "file", *PAIR, "-o", str(target))
    assert loud.returncode == 0 and loud.stderr == f"wrote {target}\n"
    for argv in (("-q", "render", "file", *PAIR, "-o", str(target)),
                 ("render", "file", *PAIR, "-o", str(target), "--quiet")):
        quiet = _cli(*argv)
        assert quiet.returncode == 0 and quiet.stderr == "" and target.read_text().startswith("# Generated by")


def test_verbose_traces_kubectl_calls(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "kubectl").write_text('#!/bin/sh\necho \'{"items": []}\'\n')
    (bindir / "kubectl").chmod(0o755)
    proc = _cli("servers", "-n", "demo", "-v", "-o", "name", env={"PATH": f"{bindir}:/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    traced = [line for line in proc.stderr.splitlines() if line.startswith("trace: kubectl -n demo get ")]
    assert len(traced) >= 10, proc.stderr
    assert "trace:" not in _cli("servers", "-n", "demo", "-o", "name", env={"PATH": f"{bindir}:/usr/bin:/bin"}).stderr


def test_addresses_without_the_leading_slashes():
    assert _cli("list", "models/qwen:qwen3-0.6b").stdout == "//models/qwen:qwen3-0.6b\n"
    assert _cli("list", "models/qwen:").stdout == _cli("list", "//models/qwen:all").stdout
    assert _cli("list", "models::").stdout == _cli("list", "//models/...").stdout


def test_address_parsing_keeps_file_paths():
    from manifesto.build_graph.addresses import parse_address

    assert parse_address("models/qwen/aggregated.yaml").kind == "file"
    spec = parse_address("models/qwen:aggregated")
    assert (spec.kind, spec.dir, spec.name) == ("target", "models/qwen", "aggregated")
    assert parse_address("models/...").kind == "tree"


def test_empty_github_matrix_prints_nothing(tmp_path):
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "example-gb200.yaml").write_text((REPO_ROOT / "clusters/example-gb200.yaml").read_text())
    (tmp_path / "BUILD.yaml").write_text('targets:\n  - kind: cluster\n    path: clusters\n    sources: ["*.yaml"]\n')
    proc = _cli("matrix", "--format", "github", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == "matrix: no renderable pairs; nothing to run\n"
    full = _cli("matrix", "--format", "github", "//models/qwen:qwen3-0.6b", "--cluster", "example-gb200")
    assert json.loads(full.stdout) == {"include": [{"model": "//models/qwen:qwen3-0.6b", "cluster": "example-gb200"}]}


def test_a_double_dash_option_value_is_refused_not_a_traceback():
    # argparse hands `--output=--` to the option as an empty list; the parser says what is wrong.
    from kit import cli_in_process

    result = cli_in_process("config", "export", "models", "qwen/aggregated", "--output=--")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "manifesto config export: error: argument --output/-o: expected one value, got '--' "
        "(write ./-- for a file of that name)")


def _commands(parser, *path: str) -> dict:
    import argparse

    for word in path:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_a_render_builds_only_its_own_render_command():
    """``render manifest ...`` builds the full parser of ``render manifest`` alone; a mistyped
    word gets every name and help, so argparse and the did-you-mean read as before."""
    from manifesto.cli.parser import get_parser

    every = _commands(get_parser(), "render")
    one = _commands(get_parser("render", alone=True, then="manifest"), "render")
    assert list(one) == ["manifest"]
    assert list(_commands(get_parser("render", alone=True, then="manifest"))) == ["render"]
    assert {a.dest for a in one["manifest"]._actions} == {a.dest for a in every["manifest"]._actions}
    mistyped = _commands(get_parser("render", alone=True, then="manfest"), "render")
    assert sorted(mistyped) == sorted(every)
    assert "spec" not in {a.dest for a in mistyped["file"]._actions}
    assert sorted(_commands(get_parser("rendr", alone=True))) == sorted(_commands(get_parser()))


def test_the_command_module_tables_name_what_each_module_registers():
    """``manifesto.cli.commands`` imports a command module only for a run of one of its
    commands: the words its tables give each module are the ones the module registers."""
    import importlib

    from manifesto.cli import commands
    from manifesto.cli.common import add
    from manifesto.cli.parser import _Unused, get_parser

    class Recorder:
        def __init__(self) -> None:
            self.words: list[str] = []

        def add_parser(self, name: str, **kwargs):
            self.words.append(name)
            return _Unused()

    full = get_parser()
    for table, path in ((commands._RENDER_MODULES, ("render",)), (commands._CONFIG_MODULES, ("config",)),
                        (commands._TOP_MODULES, ())):
        for name, words in table:
            recorder = Recorder()
            importlib.import_module(f"manifesto.cli.{name}").register(recorder, add)
            assert tuple(recorder.words) == words, name
            assert set(words) <= set(_commands(full, *path)), name


def test_the_top_level_help_imports_no_command_module_and_reads_as_the_full_one():
    """``manifesto --help`` (and a bare ``manifesto``) lists every command by its one-line help
    from ``cli.summaries``, the text each module registers its command with: the listing is
    the full parser's, and no module of ``_TOP_MODULES`` (nor ``render``'s or ``config``'s)
    is imported for it."""
    import subprocess
    import sys

    from manifesto.cli import commands
    from manifesto.cli.parser import English, get_parser
    from manifesto.cli.summaries import SUMMARIES

    with English():
        assert get_parser("", alone=False).format_help() == get_parser().format_help()
    assert set(SUMMARIES) == {prefix + w for table, prefix in ((commands._TOP_MODULES, ""),
                                                               (commands._RENDER_MODULES, "render "),
                                                               (commands._CONFIG_MODULES, "config "))
                              for _, words in table for w in words}
    program = ("import sys\nfrom manifesto.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
               "print(' '.join(sorted(m for m in sys.modules if m.startswith('manifesto.cli.'))))")
    listed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    loaded = set(listed.stdout.splitlines()[-1].split())
    modules = {f"manifesto.cli.{name}" for table in (commands._TOP_MODULES, commands._RENDER_MODULES,
                                                      commands._CONFIG_MODULES) for name, _ in table}
    assert "manifesto.cli.commands" in loaded and not loaded & modules, loaded & modules


def _leaf_parsers():
    import argparse

    from manifesto.cli.parser import get_parser

    def walk(parser, prefix):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield " ".join(prefix), parser
            return
        for name, sub in subs[0].choices.items():
            yield from walk(sub, (*prefix, name))

    return dict(walk(get_parser(), ()))


def test_every_argument_of_every_command_has_help():
    import argparse

    missing = [f"{command} {action.metavar or action.dest}" for command, parser in _leaf_parsers().items()
               for action in parser._actions if not action.help and not isinstance(action, argparse._HelpAction)]
    assert missing == []


def test_slurm_only_commands_offer_no_kubernetes_only_flag():
    """render slurm and slurm submit render only for Slurm, which refuses idle shutdown and has
    no Argo CD: their help does not offer the flags."""
    parsers = _leaf_parsers()
    for command in ("render slurm", "slurm submit"):
        flags = {f for a in parsers[command]._actions for f in a.option_strings}
        assert not {f for f in flags if "idle" in f or "argocd" in f}, command
        assert {"--vllm-env", "--log-root", "--routing-profile"} <= flags
    assert {"--idle-timeout", "--argocd-sync-waves"} <= {
        f for a in parsers["render manifest"]._actions for f in a.option_strings}
