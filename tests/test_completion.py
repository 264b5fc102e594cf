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


def bash(env: dict, line: str, cwd=REPO_ROOT) -> list[str]:
    words = _bash_words(line)
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    probe = (f'source "$TMP/c.bash" && [[ $(complete -p manifesto) == *"-F _manifesto"* ]] || exit 9; '
             f'COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; '
             f"COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; "
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
    assert set(complete("manifesto servers -o ")) == {"text", "json", "yaml", "name"}


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
    return {**env, "PATH": f"{bindir}:{env['PATH']}", "FAKE_KUBE_DIR": str(state)}


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
