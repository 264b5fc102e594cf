"""``-q`` means data and errors only, for every command: each subcommand of the CLI is run
with -q in a workspace with a stand-in kubectl and stand-in Slurm tools, and prints nothing on
stderr; its stdout is the same data it prints without -q, or nothing for a command whose output
is progress (deploy, stop, file apply: kubectl's "created" and "deleted" lines, notes).

The table names every leaf command of the parser, so a new command without a case fails."""

from __future__ import annotations

import argparse
import stat
from pathlib import Path

import pytest

from manifesto.cli import main
from manifesto.cli.parser import get_parser

from kubefake import FAKE, FakeCluster, install

pytestmark = pytest.mark.integration  # the stand-ins run as processes

ROOT = Path(__file__).resolve().parents[2]
BUILD = """\
options:
  default: {user: ci, namespace: ci}
targets:
  - kind: cluster
    path: clusters
    sources: ["*.yaml"]
  - kind: model
    path: models
    sources: ["**/*.yaml"]
  - kind: deployment
    name: qwen-demo
    model: //models/qwen:qwen3-0.6b
    cluster: lab
    namespace: demo
    user: alice
    context: lab-admin
"""
# Stand-ins for the Slurm tools: what sbatch, squeue and scancel answer for one job, 4242.
SLURM_TOOLS = {
    "sbatch": "#!/bin/sh\ncat >/dev/null\ncase \" $* \" in *' --test-only '*) "
              "echo 'sbatch: Job 4242 to start at 2026-01-01T00:00:00 using 1 processors' >&2;; "
              "*) echo 4242;; esac\n",
    "squeue": "#!/bin/sh\necho '4242|manifesto-qwen3-0-6b|RUNNING|node1|None'\n",
    "scancel": "#!/bin/sh\necho 'scancel: Terminating job 4242' >&2\n",
}
PAIR = ("--cluster", "lab", "--user", "alice", "--namespace", "demo")
SLURM = ("--cluster", "example-slurm", "--user", "alice", "--namespace", "demo")
REFERENCE_SPEC = "model:\n  name: Qwen/Qwen3-0.6B\n"


def leaf_commands() -> set[str]:
    found: set[str] = set()

    def walk(parser, prefix: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found.add(" ".join(prefix))
            return
        for name, sub in subs[0].choices.items():
            walk(sub, (*prefix, name))

    walk(get_parser(), ())
    return found


@pytest.fixture
def ws(tmp_path, monkeypatch, capsys) -> tuple[FakeCluster, Path]:
    fake = FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)
    bin_dir = tmp_path / "bin"
    for name, script in SLURM_TOOLS.items():
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755 | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.setenv("MANIFESTO_NAMESPACE", "demo")
    root = tmp_path / "ws"
    (root / "models/qwen").mkdir(parents=True)
    (root / "clusters").mkdir()
    (root / "BUILD.yaml").write_text(BUILD)
    (root / "models/qwen/qwen3-0.6b.yaml").write_text((ROOT / "models/qwen/qwen3-0.6b.yaml").read_text())
    (root / "clusters/lab.yaml").write_text((ROOT / "clusters/example-gb200.yaml").read_text()
                                            .replace("name: example-gb200", "name: lab"))
    (root / "reference.yaml").write_text(REFERENCE_SPEC)
    monkeypatch.chdir(root)
    fake.configure(current_context="lab-admin")
    return fake, root


# (command, argv, what -q leaves on stdout: "data" (what the command prints without -q) or
# "nothing"). In this order: deploy before status, stop last, a file rendered before it is applied.
CASES = [
    ("build", ("build", "//:qwen-demo"), "data"),
    ("list", ("list", "//models/qwen:"), "data"),
    ("deps", ("deps", "//models/qwen:qwen3-0.6b", "--cluster", "lab"), "data"),
    ("dependents", ("dependents", "clusters/lab.yaml"), "data"),
    ("matrix", ("matrix", "//models/qwen:qwen3-0.6b"), "data"),
    ("explain", ("explain", "qwen/qwen3-0.6b", *PAIR), "data"),
    ("plan", ("plan", "Qwen/Qwen3-0.6B", "--cluster", "example-gb200"), "data"),
    ("render manifest", ("render", "manifest", "qwen/qwen3-0.6b", *PAIR), "data"),
    ("render file", ("render", "file", "qwen/qwen3-0.6b", *PAIR, "-o", "rendered.yaml"), "nothing"),
    ("render slurm", ("render", "slurm", "qwen/qwen3-0.6b", *SLURM), "data"),
    ("render routing", ("render", "routing", "qwen/qwen3-0.6b-pd", *PAIR), "data"),
    ("render bootstrap", ("render", "bootstrap", "--cluster", "lab", "--namespace", "demo"), "data"),
    ("render workload", ("render", "workload", str(ROOT / "examples/non-indexed-job.yaml"), "--cluster", "lab"),
     "data"),
    ("render monitoring", ("render", "monitoring", "qwen/qwen3-0.6b", *PAIR), "data"),
    ("config validate", ("config", "validate", "qwen/qwen3-0.6b", *PAIR), "data"),
    ("config home", ("config", "home"), "data"),
    ("config list", ("config", "list", "models"), "data"),
    ("config resolve", ("config", "resolve", "clusters", "example-gb200"), "data"),
    ("config export", ("config", "export", "clusters", "example-gb200", "-o", "exported.yaml"), "nothing"),
    ("config import", ("config", "import", "clusters", "exported.yaml", "--name", "imported"), "nothing"),
    ("config edit", ("config", "edit", "clusters", "imported"), "nothing"),
    ("migrate", ("migrate", "reference.yaml"), "data"),
    ("completion", ("completion", "bash"), "data"),
    ("man", ("man",), "data"),
    ("regen", ("regen", "rendered.yaml"), "nothing"),
    ("file apply", ("file", "apply", "rendered.yaml"), "nothing"),
    ("file diff", ("file", "diff", "rendered.yaml"), "data"),
    ("file delete", ("file", "delete", "rendered.yaml"), "nothing"),
    ("deploy", ("deploy", "//:qwen-demo"), "nothing"),
    ("ready", ("ready", "//:qwen-demo", "--interval", "0"), "nothing"),
    ("status", ("status", "//:qwen-demo"), "data"),
    ("diff", ("diff", "//:qwen-demo"), "data"),
    ("servers", ("servers", "--context", "lab-admin"), "data"),
    ("stop", ("stop", "//:qwen-demo"), "nothing"),
    ("test e2e", ("test", "e2e", "qwen/qwen3-0.6b", "--cluster", "lab", "--user", "alice", "--namespace", "e2e",
                  "--interval", "0"), "nothing"),
    ("slurm submit", ("slurm", "submit", "qwen/qwen3-0.6b", *SLURM, "--log-root", "{tmp}/logs"), "data"),
    ("slurm servers", ("slurm", "servers", "--cluster", "example-slurm"), "data"),
    ("slurm stop", ("slurm", "stop", "4242", "--cluster", "example-slurm"), "nothing"),
    ("init", ("init", "{tmp}/new-ws", "--cluster", "example-gb200", "--context", "lab-admin", "--user", "u"),
     "nothing"),
    ("clean", ("clean",), "data"),
]
# Run once, without -q first, only where a second run finds a different world.
ONCE = {"config export", "config import", "file apply", "file delete", "deploy", "stop", "test e2e", "init", "clean", "slurm submit",
        "slurm stop"}
# Data that a second run changes (the build's counts: rendered, then up to date).
CHANGES = {"build"}
# Data that is empty here: the cluster matches the file and the target.
EMPTY = {"file diff", "diff"}


def test_the_table_covers_every_command():
    assert {name for name, _, _ in CASES} == leaf_commands()


def test_every_command_with_q_prints_only_data(ws, tmp_path):
    fake, _ = ws
    loud_said = {}
    for name, argv, leaves in CASES:
        argv = tuple(a.replace("{tmp}", str(tmp_path)) for a in argv)
        loud = None
        if name not in ONCE:
            loud = fake.run(*argv)
            assert loud[0] == 0, (name, loud[2])
            loud_said[name] = loud[2]
        rc, out, err = fake.run("-q", *argv)
        assert rc == 0, (name, err)
        assert err == "", (name, err)
        if leaves == "nothing":
            assert out == "", (name, out[:300])
        else:
            assert bool(out) is (name not in EMPTY), (name, out[:300])
            if loud is not None and name not in CHANGES:
                assert out == loud[1], name
    # Without -q the same commands do have notes to leave out: the test can fail.
    assert loud_said["render file"].startswith("wrote ") and loud_said["ready"] and loud_said["regen"]


def test_deploy_and_stop_without_q_show_kubectls_lines(ws):
    fake, _ = ws
    assert fake.run("build", "//:qwen-demo")[0] == 0
    rc, out, err = fake.run("deploy", "//:qwen-demo")
    assert rc == 0 and "created" in out, (out, err)
    rc, out, err = fake.run("stop", "//:qwen-demo")
    assert rc == 0 and "deleted" in out and "manifesto: stopped" in err, (out, err)
