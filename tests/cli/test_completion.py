"""Shell completion driven through real bash, zsh and fish, with ``manifesto`` on PATH.

Each shell sources the script ``manifesto completion SHELL`` prints, then completes a
command line the way the shell itself would call the completion: bash through its
completion function with COMP_LINE/COMP_WORDS set, zsh through the widget function with
``compadd`` captured (and once for real, typing TAB into an interactive zsh in a zpty),
fish through ``complete -C``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kit import REPO_ROOT, run_cli, unavailable

pytestmark = pytest.mark.integration  # every test here drives a shell or the CLI as a process

BIN = Path(sys.executable).parent
SHELLS = ("bash", "zsh", "fish")


def _shell(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        unavailable(f"{name} is not installed (.ci/run installs it)")
    return path


@pytest.fixture
def env(tmp_path):
    if not (BIN / "manifesto").exists():
        unavailable(f"no manifesto console script in {BIN} (run uv sync)")
    for shell in SHELLS:
        (tmp_path / f"c.{shell}").write_text(run_cli("completion", shell).stdout)
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "TMP": str(tmp_path)}


def _bash_words(line: str) -> list[str]:
    """COMP_WORDS as bash builds them: split at blanks, with '=' and ':' as words of their own."""
    words: list[str] = []
    for blank_word in line.split(" "):
        parts = [p for p in re.split(r"([=:]+)", blank_word) if p]
        words.extend(parts or [""])
    return words


def _sq(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def bash(env: dict, line: str, cwd=REPO_ROOT) -> list[str]:
    words = _bash_words(line)
    quoted = " ".join(_sq(w) for w in words)
    probe = (f'source "$TMP/c.bash" && [[ $(complete -p manifesto) == *"-F _manifesto"* ]] || exit 9; '
             f'COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; '
             f"COMP_LINE={_sq(line)}; COMP_POINT=${{#COMP_LINE}}; "
             '_manifesto manifesto; printf "%s\\n" "${COMPREPLY[@]}"')
    proc = subprocess.run([_shell("bash"), "--norc", "-c", probe], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


# A real interactive zsh in a zpty: TAB after the line, with compadd recording every match it
# is given (calls that only filter, -O/-A/-D, pass through) and _files recording its prefix.
_ZSH_DRIVER = r"""
zmodload zsh/zpty
zpty -b z 'zsh -f -i'
local out="" chunk
integer i
expect() {
  for (( i = 0; i < 600; i++ )); do
    while zpty -r -t z chunk; do out+=$chunk; done
    [[ $out == *$1* ]] && return 0
    sleep 0.05
  done
  print -u2 -r -- "never saw $1: ${out[-600,-1]}"; exit 7
}
zpty -w z 'PS1="> "; setopt no_beep no_auto_list no_list_ambiguous no_auto_menu no_menu_complete'
zpty -w z "$SETUP"
zpty -w z 'compadd() { if [[ " ${(j: :)@[1,(i)(-|--)]} " == *" -"[OAD]" "* ]]; then builtin compadd "$@"; return; fi; local -a __m; builtin compadd -O __m "$@"; (( ${#__m} )) && print -rl -- "${IPREFIX}"${^__m} >> "$MATCHES"; builtin compadd "$@"; }'
zpty -w z '_files() { print -r -- "<files:$IPREFIX$PREFIX>" >> "$MATCHES"; }'
zpty -w z 'print -r -- __RE""ADY__'
expect __READY__
out=""
zpty -w -n z "$LINE"$'\t'
sleep 0.2
zpty -w -n z $'\x15'
zpty -w z 'print -r -- __DO""NE__'
expect __DONE__
zpty -d z
[[ $out != *"can only be called"* ]] || { print -u2 -r -- "$out"; exit 6 }
"""

_SOURCED = 'autoload -Uz compinit; compinit -u -D; source "$TMP/c.zsh"'


def zsh(env: dict, line: str, cwd=REPO_ROOT, setup: str = _SOURCED) -> list[str]:
    matches = Path(env["TMP"]) / f"zsh-matches-{uuid.uuid4().hex}"
    proc = subprocess.run([_shell("zsh"), "-f", "-c", _ZSH_DRIVER], capture_output=True, text=True,
                          env={**env, "SETUP": setup, "LINE": line, "MATCHES": str(matches)}, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = matches.read_text().splitlines() if matches.exists() else []
    return list(dict.fromkeys(w for w in found if w))


def fish(env: dict, line: str, cwd=REPO_ROOT) -> list[str]:
    probe = f'source $TMP/c.fish; complete -C "{line}"'
    proc = subprocess.run([_shell("fish"), "--no-config", "-c", probe], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [w.split("\t", 1)[0] for w in proc.stdout.splitlines() if w]


DRIVERS = {"bash": bash, "zsh": zsh, "fish": fish}


@pytest.fixture(params=SHELLS)
def complete(request, env):
    drive = DRIVERS[request.param]
    return lambda line, cwd=REPO_ROOT: drive(env, line, cwd)


def test_commands_and_subcommands(complete):
    assert "render" in complete("manifesto ren")
    assert set(complete("manifesto render ")) >= {"manifest", "file", "routing", "bootstrap", "workload"}
    assert complete("manifesto sl") == ["slurm"]


def test_flags_of_the_command_on_the_line(complete):
    found = complete("manifesto render manifest qwen/aggregated --clu")
    assert "--cluster" in found and "--check" not in found
    assert "--check" in complete("manifesto build --ch")
    assert "--output" in complete("manifesto servers --out")


def test_choices_of_a_flag(complete):
    assert set(complete("manifesto servers -o ")) == {"text", "json", "yaml", "name", "table"}  # table: the reference's spelling


def test_catalog_names(complete):
    found = complete("manifesto render manifest qwen/qw")
    assert {"qwen/qwen3-0.6b", "qwen/qwen3-0.6b-pd"} <= set(found)
    assert "deepseek-v4/wide-ep-base" not in complete("manifesto explain deepseek")


def test_cluster_names_after_a_separate_flag_and_after_equals(request, complete):
    assert "example-gb200" in complete("manifesto render manifest qwen/aggregated --cluster example-g")
    found = complete("manifesto render manifest qwen/aggregated --cluster=example-g")
    # bash replaces only the text after '='; zsh and fish replace the whole word
    expected = "example-gb200" if "bash" in request.node.name else "--cluster=example-gb200"
    assert expected in found, found


def test_accelerator_names_of_the_cluster_on_the_line(complete):
    line = "manifesto render manifest qwen/aggregated --cluster example-gb200 --accelerator "
    assert set(complete(line)) == {"gb200", "b200"}
    assert complete("manifesto explain qwen/aggregated -c example-h200 --accelerator h") == ["h200"]
    # --gpu, the reference implementation's spelling, completes the same names.
    assert set(complete(line.replace("--accelerator", "--gpu"))) == {"gb200", "b200"}
    assert "--gpu" in complete("manifesto render manifest qwen/aggregated --cluster example-gb200 --gp")


def test_build_addresses(request, complete):
    found = complete("manifesto build //models/qwen:qwen3")
    # bash completes after its last ':' (COMP_WORDBREAKS); the others see the whole address
    full = "bash" not in request.node.name
    assert ("//models/qwen:qwen3-0.6b" if full else "qwen3-0.6b") in found, found
    dirs = complete("manifesto list //models/q")
    assert "//models/qwen:" in dirs and "//models/qwen::" in dirs
    # Pants-style, without the leading //
    assert ("models/qwen:aggregated" if full else "aggregated") in complete("manifesto deps models/qwen:agg")


def test_paths_for_file_arguments(tmp_path, request, complete):
    target = tmp_path / "somewhere"
    target.mkdir()
    (target / "rendered.yaml").write_text("x")
    found = complete(f"manifesto render file qwen/aggregated -o {target}/ren")
    if "zsh" in request.node.name:  # the widget hands paths to _files with the typed prefix
        assert f"<files:{target}/ren>" in found
    else:
        assert f"{target}/rendered.yaml" in found, found
    found = complete(f"manifesto file diff {target}/ren")
    assert any(f.endswith("rendered.yaml") or f == f"<files:{target}/ren>" for f in found), found


def _fake_cluster(tmp_path: Path, env: dict) -> dict:
    from kubefake import fake_kubectl

    bindir, state = fake_kubectl(tmp_path, bin_name="kbin")
    labels = {"app.kubernetes.io/managed-by": "manifesto"}
    objects = [{"kind": "ConfigMap", "metadata": {"name": f"{inst}-cm", "namespace": ns,
                                                  "labels": {**labels, "app.kubernetes.io/instance": inst}}}
               for inst, ns in (("in-demo", "demo"), ("in-other", "other"))]
    (state / "state.json").write_text(json.dumps({"objects": objects, "config": {}}))
    # the stand-in kubectl is a Python program: on a loaded machine it may start slower than a
    # TAB's default wait for live names
    return {**env, "PATH": f"{bindir}:{env['PATH']}", "FAKE_KUBE_DIR": str(state), "MANIFESTO_COMPLETE_TIMEOUT": "20"}


def test_live_instance_ids_follow_the_namespace_on_the_line(tmp_path, env, request):
    kube_env = _fake_cluster(tmp_path, env)
    for shell, drive in DRIVERS.items():
        assert drive(kube_env, "manifesto stop -n demo --instance ") == ["in-demo"], shell
        assert drive(kube_env, "manifesto stop --namespace=other --instance in") == ["in-other"], shell


def test_instance_lookup_is_one_unretried_read_per_type(tmp_path, env):
    kube_env = _fake_cluster(tmp_path, env)
    state = Path(kube_env["FAKE_KUBE_DIR"])
    config = {"fail": {"get": {"times": 100, "stderr": "Unable to connect to the server: i/o timeout"}}}
    (state / "state.json").write_text(json.dumps({"objects": [], "config": config}))
    assert bash(kube_env, "manifesto stop -n demo --instance ") == []
    calls = [json.loads(line)["argv"] for line in (state / "calls.jsonl").read_text().splitlines()]
    gets = [c for c in calls if "get" in c]
    from manifesto.ops.discovery import TYPES

    assert len(gets) == len(TYPES)  # a transient failure is not retried at the prompt


def test_zsh_script_works_from_fpath(tmp_path, env):
    """Installed as _manifesto in $fpath, compinit autoloads it and the first TAB completes."""
    fdir = tmp_path / "zfunc"
    fdir.mkdir()
    (fdir / "_manifesto").write_text(run_cli("completion", "zsh").stdout)
    found = zsh(env, "manifesto ren", setup=f"fpath=({fdir} $fpath); autoload -Uz compinit; compinit -u -D")
    assert "render" in found, found


def test_complete_never_prints_a_traceback():
    proc = run_cli("__complete", "zsh", "--", "render", "manifest", "--cluster=", cwd="/")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    proc = run_cli("__complete", "bash", "--", "manifesto build '//models", cwd="/")
    assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr


def test_scripts_pass_their_shells_syntax_checks(env, tmp_path):
    checks = {"bash": [_shell("shellcheck"), "-s", "bash"], "zsh": [_shell("zsh"), "-n"], "fish": [_shell("fish"), "-n"]}
    for shell, argv in checks.items():
        proc = subprocess.run([*argv, str(tmp_path / f"c.{shell}")], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout + proc.stderr == "", shell + proc.stdout + proc.stderr


_ZPTY = r"""
zmodload zsh/zpty
zpty -b z 'zsh -f -i'
zpty -w z 'PS1="> "; autoload -Uz compinit; compinit -u -D; source "$TMP/c.zsh"'
zpty -w -n z $'manifesto render manifest qwen/qw\t'
local out="" chunk
integer i
for (( i = 0; i < 600; i++ )); do
  while zpty -r -t z chunk; do out+=$chunk; done
  [[ $out == *"manifest qwen/qwen3-0.6b"* ]] && break
  sleep 0.1
done
zpty -d z
print -r -- "$out"
"""


def test_zsh_interactive_tab_after_compinit(env):
    """A real interactive zsh (in a zpty): source after compinit, type, press TAB."""
    proc = subprocess.run([_shell("zsh"), "-f", "-c", _ZPTY], capture_output=True, text=True, env=env,
                          cwd=REPO_ROOT, timeout=120)
    out = proc.stdout.replace("\r", "")
    assert "manifest qwen/qwen3-0.6b" in out, out[-800:] + proc.stderr
    assert "can only be called from completion function" not in out


@pytest.mark.parametrize("command", ["deploy", "status", "diff", "stop", "ready", "servers", "slurm stop",
                                     "slurm submit"])
def test_deployment_addresses_after_commands_that_take_a_target(request, complete, command):
    found = complete(f"manifesto {command} //:qwen")
    # bash completes after its last ':' (COMP_WORDBREAKS); the others see the whole address
    assert ("qwen-demo" if "bash" in request.node.name else "//:qwen-demo") in found, found
    assert "//models/qwen:aggregated" not in complete(f"manifesto {command} //")


def test_workspace_cluster_profiles_after_cluster(tmp_path, complete):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert run_cli("init", cwd=ws).returncode == 0
    (ws / "clusters" / "acme-h100.yaml").write_text((ws / "clusters" / "example-gb200.yaml").read_text())
    found = complete("manifesto render manifest models/qwen3-0.6b.yaml --cluster ac", ws)
    assert [f for f in found if not f.startswith("<files:")] == ["acme-h100"], found
    assert "acme-h100" not in complete("manifesto render manifest qwen/qwen3-0.6b --cluster ac")  # outside it


def test_live_lookups_are_bounded_below_a_second(monkeypatch):
    """A hung API server costs a TAB at most LIVE_TIMEOUT: one unretried attempt per type."""
    from manifesto.cli import complete as comp
    from manifesto.ops import discovery

    seen = []
    monkeypatch.setattr(discovery, "discover", lambda kube, *a, **k: seen.append((kube.timeout, kube.retries)) or [])
    state = comp._State(None)
    state.values = {"namespace": "demo"}
    assert comp._instances(state) == []
    assert seen == [(comp.LIVE_TIMEOUT, 0)] and comp.LIVE_TIMEOUT <= 1.0


_IMPORTED = ("import runpy, sys\n"
             "sys.argv = ['manifesto', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('manifesto', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print('HEAVY=' + ','.join(sorted(m for m in ('shtab', 'pydantic', 'pydantic_core', 'ruamel') if m in sys.modules)),"
             " file=sys.stderr)\n")


@pytest.mark.parametrize("argv, heavy", [
    (["__complete", "bash", "--", "manifesto render manifest qw"], ""),
    (["__complete", "zsh", "--", "render", "--"], ""),
    (["--help"], ""),
    (["completion", "bash"], "shtab"),
])
def test_shtab_is_imported_only_to_write_a_script(argv, heavy):
    proc = subprocess.run([sys.executable, "-c", _IMPORTED, *argv], capture_output=True, text=True, cwd=REPO_ROOT,
                          timeout=120)
    assert proc.stderr.strip().splitlines()[-1] == f"HEAVY={heavy}", proc.stderr


# -- every argument that names something has a completer (issue 27) ----------------------------

# Arguments that take a catalog name, an address or a path, found by what they say of
# themselves: their help, metavar or dest. Not the completer table (manifesto.cli.hints.BY_DEST):
# a new argument named differently must still be caught.
_NAMES_SOMETHING = re.compile(r"\b(paths?|files?|director(y|ies)|folder|worktree|catalog name|address(es)?"
                              r"|model spec|cluster profile|routing profile|deployment target|spec)\b", re.I)
_NAMING_METAVARS = {"FILE", "DIR", "PATH", "SPEC", "ADDR", "JOB|ADDR", "C", "NAME"}
_NAMING_DESTS = re.compile(r"(^|_)(file|filename|dir|directory|path|root|env|spec|specs|cluster|model|name|address"
                           r"|addresses|profile|output|accelerator|instance|job)$")
# Arguments whose words say "path" or "file" although they take no name: what they take instead.
_NOT_NAMES = {
    "user": "a user name (its help mentions the paths it goes into)",
    "context": "a kube context, which kubectl names",
    "namespace": "a Kubernetes namespace",
    "changed_since": "a git revision",
    "base": "a git revision",
    "remote_cache": "a URL",
    "image": "a container image reference",
    "package": "a pip requirement",
    "pre_launch": "a shell command",
    "slurm_host": "the host name of a Slurm login node",
    "gitops_repo": "a git repository URL",
    "gitops_revision": "a git revision",
}


def _arguments(parser, path=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _arguments(sub, (*path, name))
        elif action.nargs != 0 and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield " ".join(path), action


def _names_something(action) -> bool:
    import argparse

    text = action.help if action.help not in (None, argparse.SUPPRESS) else ""
    return bool(_NAMES_SOMETHING.search(text) or action.metavar in _NAMING_METAVARS
                or _NAMING_DESTS.search(action.dest))


def test_every_argument_that_names_something_has_a_completer():
    from manifesto.cli.completion import _hooked_parser

    parser = _hooked_parser()
    missing, seen = [], 0
    for command, action in _arguments(parser):
        if action.choices or action.dest in _NOT_NAMES or not _names_something(action):
            continue
        seen += 1
        if not getattr(action, "complete", None):
            missing.append(f"{command} {'/'.join(action.option_strings) or action.dest}")
    assert seen > 100  # the walk reached the whole tree
    assert not missing, "arguments without a completer: " + ", ".join(missing)


def test_the_walk_would_catch_an_argument_without_a_completer():
    import argparse

    from manifesto.cli.hints import fill

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers().add_parser("x")
    sub.add_argument("--weights-dir", help="where the weights are")
    sub.add_argument("--lora", metavar="PATH")
    sub.add_argument("--count", help="how many")
    fill(parser)
    flagged = [a.dest for _, a in _arguments(parser) if _names_something(a) and not getattr(a, "complete", None)]
    assert flagged == ["weights_dir", "lora"]


def test_catalog_names_below_a_folder_after_config_commands(complete):
    for command in ("resolve", "edit", "export"):
        found = complete(f"manifesto config {command} models deepseek-v4/")
        assert "deepseek-v4/1P-EP8-1D-EP8" in found, (command, found)
        assert not [f for f in found if f.startswith("qwen/")], found
    assert "example-gb200" in complete("manifesto config resolve clusters example-g")


def test_cluster_files_after_render_bootstrap_cluster(tmp_path, complete):
    (tmp_path / "local-h100.yaml").write_text("name: local-h100\n")
    for command in ("render bootstrap", "render manifest qwen/aggregated", "stop", "servers", "file apply"):
        found = complete(f"manifesto {command} --cluster local-", tmp_path)
        assert "local-h100.yaml" in found or "<files:local->" in found, (command, found)
    assert "example-gb200" in complete("manifesto render bootstrap --cluster example-g")


def test_deploy_offers_its_subcommand_words(complete):
    assert "routing" in complete("manifesto deploy r")
    assert "bootstrap" in complete("manifesto deploy b")
    assert "qwen/qwen3-0.6b-pd" in complete("manifesto deploy routing qwen/qwen3-0.6b-p")


# -- hostile names are offered quoted, and descriptions escaped (issue 25) ---------------------

HOSTILE = ["$(touch CANARY)", "`touch CANARY`", "a b", "it's", "back\\slash", "semi;touch CANARY", "tilde~x",
           "star*", "$HOME"]


@pytest.fixture
def hostile(tmp_path, env):
    """A user catalog whose model names are shell code, and a working directory for the canary."""
    home = tmp_path / "catalog"
    (home / "models" / "evil").mkdir(parents=True)
    spec = (REPO_ROOT / "models/qwen/qwen3-0.6b.yaml").read_text()
    for name in HOSTILE + ["esc\x1b[31m", "bidi\u202e"]:
        (home / "models" / "evil" / f"{name}.yaml").write_text(spec)
    for i, name in enumerate(HOSTILE):  # one entry a folder: TAB after the folder completes it
        (home / "models" / f"solo{i}").mkdir()
        (home / "models" / f"solo{i}" / f"{name}.yaml").write_text(spec)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return {**env, "MANIFESTO_CONFIG_HOME": str(home)}, cwd


def _eval_bash(words: list[str], cwd) -> list[str]:
    """What bash reads back from each completed word, the way Enter would run it."""
    script = "for w in " + " ".join(words) + '; do printf "%s\\n" "$w"; done'
    proc = subprocess.run([_shell("bash"), "--norc", "-c", script], capture_output=True, text=True, cwd=cwd,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_bash_offers_hostile_names_as_shell_words(hostile):
    env, cwd = hostile
    found = bash(env, "manifesto render manifest evil/", cwd=cwd)
    expected = sorted(f"evil/{n}" for n in HOSTILE)
    assert sorted(_eval_bash(found, cwd)) == expected, found
    assert not (cwd / "CANARY").exists()
    assert not [w for w in found if not w.isprintable()]  # the ESC and bidi names are not offered
    # typed inside an open quote: the rest of the word, quoted for that quote
    inside = bash(env, "manifesto render manifest 'evil/it", cwd=cwd)
    assert inside == ["evil/it'\\''s"], inside
    inside = bash(env, 'manifesto render manifest "evil/$(to', cwd=cwd)
    assert inside == ["evil/\\$(touch CANARY)"], inside
    assert _eval_bash(['"' + inside[0] + '"', "'" + bash(env, "manifesto render manifest 'evil/it", cwd=cwd)[0] + "'"],
                      cwd) == ["evil/$(touch CANARY)", "evil/it's"]
    assert not (cwd / "CANARY").exists()


def test_zsh_inserts_hostile_names_quoted(hostile, tmp_path):
    """A real zsh in a zpty: TAB completes a unique hostile name; the line, run, prints it literally."""
    env, cwd = hostile
    buffer = tmp_path / "buffer"
    setup = (_SOURCED + f"; _dump() {{ print -r -- \"$BUFFER\" > {buffer} }}; zle -N _dump; bindkey '^X^D' _dump")
    for i, name in enumerate(HOSTILE):
        _zsh_keys(env, f"manifesto render manifest solo{i}/", setup, cwd)
        line = buffer.read_text().rstrip("\n")
        assert line != f"manifesto render manifest solo{i}/", line  # it completed
        proc = subprocess.run([_shell("zsh"), "-f", "-c", "print -rl -- " + line.removeprefix("manifesto ")],
                              capture_output=True, text=True, cwd=cwd, timeout=60)
        assert proc.stdout.splitlines()[-1] == f"solo{i}/{name}", (line, proc.stdout)
        assert not (cwd / "CANARY").exists()


def _zsh_keys(env, line, setup, cwd):
    driver = _ZSH_DRIVER.replace("zpty -w -n z \"$LINE\"$'\\t'", "zpty -w -n z \"$LINE\"$'\\t\\x18\\x04'")
    assert driver != _ZSH_DRIVER
    matches = Path(env["TMP"]) / f"zsh-matches-{uuid.uuid4().hex}"
    proc = subprocess.run([_shell("zsh"), "-f", "-c", driver], capture_output=True, text=True,
                          env={**env, "SETUP": setup, "LINE": line, "MATCHES": str(matches)}, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_fish_inserts_hostile_names_escaped(hostile):
    env, cwd = hostile
    probe = 'source $TMP/c.fish; complete -C --escape "manifesto render manifest evil/"'
    proc = subprocess.run([_shell("fish"), "--no-config", "-c", probe], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)
    words = [w.split("\t", 1)[0] for w in proc.stdout.splitlines() if w.startswith("evil/")]
    back = subprocess.run([_shell("fish"), "--no-config", "-c", "printf '%s\\n' " + " ".join(words)],
                          capture_output=True, text=True, cwd=cwd, timeout=60)
    assert sorted(back.stdout.splitlines()) == sorted(f"evil/{n}" for n in HOSTILE), (words, back.stderr)
    assert not (cwd / "CANARY").exists()


def test_fish_reads_the_typed_word_by_its_own_quoting_rules(hostile):
    """Inside fish's single quotes a backslash escapes \\ and ': the prefix is unescaped so."""
    env, cwd = hostile
    assert fish(env, "manifesto render manifest 'evil/back\\\\sl", cwd=cwd) == ["evil/back\\slash"]
    assert fish(env, "manifesto render manifest 'evil/it\\'", cwd=cwd) == ["evil/it's"]
    assert fish(env, "manifesto render manifest evil/a\\ ", cwd=cwd) == ["evil/a b"]


def _fake_squeue(tmp_path: Path, env: dict) -> dict:
    bindir = tmp_path / "slurm-bin"
    bindir.mkdir()
    rows = ["101|manifesto-evil\x1b]0;owned\x07|RUNNING|node1|None",
            "102|manifesto-plain|PENDING\x1b[2J|node2|None",
            "10\x1b[31m3|manifesto-x|RUNNING|n|None"]
    script = bindir / "squeue"
    script.write_text("#!/bin/sh\nprintf '%s\\n' " + " ".join("'" + r + "'" for r in rows) + "\n")
    script.chmod(0o755)
    return {**env, "PATH": f"{bindir}:{env['PATH']}"}


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_descriptions_from_squeue_are_escaped(tmp_path, env, shell):
    slurm_env = _fake_squeue(tmp_path, env)
    line = ["slurm", "stop", "--cluster", "example-slurm", ""]
    proc = subprocess.run([str(BIN / "manifesto"), "__complete", shell, "--", *line], capture_output=True,
                          text=True, env=slurm_env, cwd=REPO_ROOT, timeout=120)
    out = proc.stdout
    assert "\x1b" not in out and "\x07" not in out, repr(out)
    rows = dict(r.split("\t", 1) for r in out.splitlines() if "\t" in r)
    assert rows["101"] == "evil\\x1b]0;owned\\x07 running" and rows["102"] == "plain pending\\x1b[2j", rows
    assert not [r for r in out.splitlines() if r.startswith("10\x1b")]
    # and through the real shell
    if shell == "zsh":
        found = zsh(slurm_env, "manifesto slurm stop --cluster example-slurm 10")
    else:
        found = fish(slurm_env, "manifesto slurm stop --cluster example-slurm 10")
    assert {"101", "102"} <= set(found) and not [f for f in found if "\x1b" in f], found


def test_bash_quotes_local_paths_and_marks_directories(hostile):
    env, cwd = hostile
    for name in ("$(touch CANARY).yaml", "a b.yaml", "it's.yaml"):
        (cwd / name).write_text("x")
    (cwd / "my dir").mkdir()
    found = bash(env, "manifesto render file qwen/aggregated -o ", cwd=cwd)
    assert "my\\ dir/" in found, found
    back = _eval_bash([f for f in found if not f.endswith("/")], cwd)
    assert sorted(back) == ["$(touch CANARY).yaml", "a b.yaml", "it's.yaml"], found
    assert not (cwd / "CANARY").exists()


def test_the_live_lookup_timeout_is_bounded(monkeypatch):
    from manifesto.cli import complete

    assert complete._live_timeout({}) == complete.LIVE_TIMEOUT
    assert complete._live_timeout({"MANIFESTO_COMPLETE_TIMEOUT": "5"}) == 5.0
    for bad in ("0", "-1", "nan", "inf", "31", "soon"):
        assert complete._live_timeout({"MANIFESTO_COMPLETE_TIMEOUT": bad}) == complete.LIVE_TIMEOUT, bad


def test_completing_build_addresses_loads_the_graph_without_the_engine(bundled_workspace):
    """A TAB on a build address reads the workspace's graph only: neither the engine nor the
    planning, saving or job modules of a build are imported for it (a few milliseconds of the
    completion's budget)."""
    import subprocess
    import sys

    program = ("import sys\nfrom manifesto.cli import main\nmain(['__complete', 'bash', '--', 'manifesto build //models/q'])\n"
               "print(' '.join(sorted(m for m in sys.modules if m.startswith('manifesto.build_graph.'))), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=bundled_workspace)
    assert "//models/qwen:" in done.stdout.split(), done.stdout
    loaded = set(done.stderr.split())
    assert "manifesto.build_graph.sources" in loaded
    assert not loaded & {"manifesto.build_graph.engine", "manifesto.build_graph.saving", "manifesto.build_graph.jobs",
                         "manifesto.build_graph.executor"}, loaded
