"""The hostile-input corpus, second round (issue 19), I/O side: same ``Case`` and tree as ``io_cases``.

Classes: 1 writes that a planted symlink would carry out of the workspace (a committed
``out/``, an ``init`` target); 2 FIFOs, sockets, directories and plain files where the
other kind belongs; 4 non-ASCII digits where a grammar means ASCII, invisible characters
in names; 5 data from outside (catalog file names, pod labels, squeue and sbatch output)
that must reach the terminal escaped, and tool output bounded; 7 inputs too large to
parse quickly, numbers too large for their type.

``stdout`` (when not None) is the exact standard output. Every case also runs under the
checks of ``test_hostile_io``: no traceback, nothing written outside, and no character
that is not printable (but line feed and tab) on stdout or stderr.
"""

from __future__ import annotations

from pathlib import Path

from io_cases import BUILD_YAML, MANIFEST, QWEN, RENDER, SERVERS, Case, _workspace

# The bundled model names `config list` shows (base files, only ever extended, are hidden).
_MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
BUNDLED_MODELS = sorted(str(p.relative_to(_MODELS_DIR).with_suffix("")) for p in _MODELS_DIR.rglob("*.yaml")
                        if not p.stem.endswith("-base"))

#: the bundled cluster profiles' names, as `config list clusters` prints them
BUNDLED_CLUSTERS = sorted(p.stem for p in (_MODELS_DIR.parent / "clusters").glob("*.yaml"))

__all__ = ["CASES"]

#: A workspace with a deployment target ``//:demo`` (built into out/deploy/demo.yaml).
DEPLOY_BUILD = BUILD_YAML + """\
  - {kind: deployment, name: demo, model: "//models:m", cluster: gpu, namespace: ns, user: u}
"""


def _deploy_ws(**extra) -> dict:
    return _workspace(**{"ws/BUILD.yaml": DEPLOY_BUILD, **extra})


def _exe(text: str) -> tuple:
    return ("exec", "#!/bin/sh\n" + text)


SLURM = ("--cluster", "example-slurm")
DRY = ("deploy", "//:demo", "--dry-run")
INIT = ("init", "--user", "u", "--context", "ctx")
OUT_LINK = "refusing to go through it; remove it"
ESC = "\x1b]0;pwned\x07\x1b[2J"
REFUSE_DEPLOY = "remove it and run `manifesto build //:demo`"


def _pod(instance: str, owner: str = "u") -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "x-decode", "namespace": "ns",
        "labels": {"app.kubernetes.io/managed-by": "manifesto", "app.kubernetes.io/instance": instance,
                   "llm-d.ai/owner": owner}}}


CASES: list[Case] = [
    # -- class 1: writes through a symlink planted in the tree ---------------------------------
    Case("w-build-out-deploy-symlink", ("build",), "error: //:demo @ gpu: cannot store the result: out/deploy "
         f"is a symlink (to ../../outside); {OUT_LINK}",
         files=_deploy_ws(**{"ws/out/deploy": ("symlink", "../../outside")})),
    Case("w-build-out-cache-symlink", ("build",), "error: out/.cache is a symlink (to ../../outside/cache); "
         f"{OUT_LINK} (or run `manifesto clean`)",
         files=_workspace(**{"ws/out/.cache": ("symlink", "../../outside/cache"), "outside/cache": ("dir",)})),
    Case("w-build-out-symlink", ("build",), f"error: out is a symlink (to ../outside); {OUT_LINK}",
         files=_workspace(**{"ws/out": ("symlink", "../outside")})),
    Case("w-build-lock-symlink", ("build",), "error: out/.lock is a symlink (to ../../outside/lock); "
         f"{OUT_LINK}", files=_workspace(**{"ws/out/.lock": ("symlink", "../../outside/lock")})),
    Case("w-build-cluster-dir-symlink", ("build",), "error: //models:m @ gpu: cannot store the result: out/gpu is a "
         f"symlink (to ../../outside); {OUT_LINK}", files=_workspace(**{"ws/out/gpu": ("symlink", "../../outside")})),
    Case("w-build-artifact-symlink", ("build",), "error: //models:m @ gpu: cannot store the result: out/gpu/m.yaml "
         f"is a symlink (to ../../../outside/sentinel); {OUT_LINK}",
         files=_workspace(**{"ws/out/gpu/m.yaml": ("symlink", "../../../outside/sentinel")})),
    Case("w-build-tasks-symlink", ("build",), "error: //models:m @ gpu: cannot store the result: out/.cache/tasks "
         f"is a symlink (to ../../../outside); {OUT_LINK}",
         files=_workspace(**{"ws/out/.cache/tasks": ("symlink", "../../../outside")})),
    Case("w-build-state-symlink", ("build",), "error: out/.cache/state is a symlink (to ../../../outside/sentinel); "
         f"{OUT_LINK} (or run `manifesto clean`)",
         files=_workspace(**{"ws/out/.cache/state": ("symlink", "../../../outside/sentinel")})),
    Case("w-build-check-out-symlink", ("build", "--check"), f"error: out is a symlink (to ../outside); {OUT_LINK}",
         files=_workspace(**{"ws/out": ("symlink", "../outside"), "outside/gpu/old.yaml": "kind: x\n"})),
    Case("w-clean-all-out-symlink", ("clean", "--all"), f"error: out is a symlink (to ../outside); {OUT_LINK}",
         files=_workspace(**{"ws/out": ("symlink", "../outside"), "outside/gpu/old.yaml": "kind: x\n"})),
    Case("w-deploy-dry-run-deploy-dir-symlink", DRY, "error: out/deploy is a symlink (to ../../outside); refusing to "
         f"go through it; {REFUSE_DEPLOY}", files=_deploy_ws(**{"ws/out/deploy": ("symlink", "../../outside"),
                                                               "outside/demo.yaml": "kind: x\n"})),
    Case("w-init-models-symlink", (*INIT, "new"), "error: new/models is a symlink (to ../../outside); refusing to "
         "write through it; nothing was written", files={"ws/new/models": ("symlink", "../../outside")}),
    Case("w-init-github-symlink", (*INIT, "new"), "error: new/.github is a symlink (to ../../outside); refusing to "
         "write through it; nothing was written", files={"ws/new/.github": ("symlink", "../../outside")}),
    Case("w-init-workflows-symlink", INIT, "error: .github/workflows is a symlink (to ../../outside); refusing to "
         "write through it; nothing was written", files={"ws/.github/workflows": ("symlink", "../../outside")}),
    Case("w-init-dangling-file-symlink", (*INIT, "new"), "error: new: .gitignore already exist(s); `manifesto init` "
         "only writes new files", files={"ws/new/.gitignore": ("symlink", "../../outside/gitignore")}),

    # -- class 2: special files and the wrong kind of file -------------------------------------
    Case("s-deploy-dry-run-artifact-fifo", DRY, f"error: out/deploy/demo.yaml is a FIFO, expected a file; "
         f"{REFUSE_DEPLOY}", files=_deploy_ws(**{"ws/out/deploy/demo.yaml": ("fifo",)})),
    Case("s-deploy-dry-run-artifact-socket", DRY, f"error: out/deploy/demo.yaml is a socket, expected a file; "
         f"{REFUSE_DEPLOY}", files=_deploy_ws(**{"ws/out/deploy/demo.yaml": ("socket",)})),
    Case("s-deploy-dry-run-artifact-directory", DRY, f"error: out/deploy/demo.yaml is a directory, expected a "
         f"file; {REFUSE_DEPLOY}", files=_deploy_ws(**{"ws/out/deploy/demo.yaml": ("dir",)})),
    Case("s-deploy-dry-run-deploy-is-file", DRY, f"error: out/deploy is a file, expected a directory; "
         f"{REFUSE_DEPLOY}", files=_deploy_ws(**{"ws/out/deploy": "x\n"})),
    Case("s-build-artifact-fifo", ("build",), "error: //models:m @ gpu: cannot store the result: out/gpu/m.yaml is a "
         "FIFO, expected a file; remove it", files=_workspace(**{"ws/out/gpu/m.yaml": ("fifo",)})),
    Case("s-build-artifact-socket", ("build",), "error: //models:m @ gpu: cannot store the result: out/gpu/m.yaml is "
         "a socket, expected a file; remove it", files=_workspace(**{"ws/out/gpu/m.yaml": ("socket",)})),
    Case("s-build-state-fifo", ("build",), "error: out/.cache/state is a FIFO, expected a file; remove it (or run "
         "`manifesto clean`)", files=_workspace(**{"ws/out/.cache/state": ("fifo",)})),
    Case("s-build-lock-fifo", ("build",), "error: out/.lock is a FIFO, expected a file; remove it",
         files=_workspace(**{"ws/out/.lock": ("fifo",)})),
    Case("s-build-cache-fifo", ("build",), "error: out/.cache is a FIFO, expected a directory; remove it (or run "
         "`manifesto clean`)", files=_workspace(**{"ws/out/.cache": ("fifo",)})),
    Case("s-build-out-socket", ("build",), "error: out is a socket, expected a directory; remove it",
         files=_workspace(**{"ws/out": ("socket",)})),
    Case("s-init-into-file", (*INIT, "f"), "error: f is a file, expected a directory; nothing was written",
         files={"ws/f": "x\n"}),
    Case("s-init-github-is-file", INIT, "error: .github is a file, expected a directory; nothing was written",
         files={"ws/.github": "x\n"}),
    Case("s-init-into-fifo", (*INIT, "p"), "error: p is a FIFO, expected a directory; nothing was written",
         files={"ws/p": ("fifo",)}),
    Case("s-init-clusters-is-fifo", (*INIT, "new"), "error: new/clusters is a FIFO, expected a directory; nothing "
         "was written", files={"ws/new/clusters": ("fifo",)}),
    Case("s-file-diff-fifo", ("file", "diff", "pipe", "-n", "ns"), "error: pipe: is a FIFO, expected a regular "
         "manifest file", files={"ws/pipe": ("fifo",)}),
    Case("s-file-apply-directory", ("file", "apply", "d", "-n", "ns"), "error: d: is a directory, expected a "
         "manifest file", files={"ws/d": ("dir",)}),

    Case("s-buildfile-fifo", ("build",), "error: BUILD.yaml is a FIFO, expected a file",
         files={"ws/BUILD.yaml": ("fifo",)}),
    Case("s-buildfile-directory", ("list", "//::"), "error: BUILD.yaml is a directory, expected a file",
         files={"ws/BUILD.yaml": ("dir",)}),
    Case("s-buildfile-broken-link", ("build",), "error: BUILD.yaml is a broken symlink (to ../outside/gone.yaml)",
         files={"ws/BUILD.yaml": ("symlink", "../outside/gone.yaml")}),
    Case("s-dotenv-fifo", RENDER, "error: .env: is a FIFO, expected a settings file of NAME=value lines; remove it",
         files={"ws/.env": ("fifo",)}),
    Case("s-dotenv-socket", RENDER, "error: .env: is a socket, expected a settings file of NAME=value lines; remove "
         "it", files={"ws/.env": ("socket",)}),
    Case("s-user-dotenv-fifo", RENDER, "error: {tmp}/config/.env: is a FIFO, expected a settings file of NAME=value "
         "lines; remove it", files={"config/.env": ("fifo",)}),

    # -- class 4: Unicode digits and invisible characters at the I/O edge ----------------------
    Case("u-slurm-stop-arabic-digits", ("slurm", "stop", "١٢", *SLURM), "error: '١٢' is not a Slurm job ID "
         "(expected N, N_I for one array element, or N+C)"),
    Case("u-slurm-stop-superscript", ("slurm", "stop", "²³", *SLURM), "error: '²³' is not a Slurm job ID "
         "(expected N, N_I for one array element, or N+C)"),
    Case("u-slurm-stop-fullwidth", ("slurm", "stop", "１２_３", *SLURM), "error: '１２_３' is not a Slurm job ID "
         "(expected N, N_I for one array element, or N+C)"),
    Case("u-sbatch-superscript-job-id", ("slurm", "submit", "qwen/qwen3-0.6b", *SLURM, "--user", "u"),
         "error: sbatch printed no job ID: '²³'", files={"bin/sbatch": _exe("cat >/dev/null; echo '²³'\n")}),
    Case("u-sbatch-arabic-job-id", ("slurm", "submit", "qwen/qwen3-0.6b", *SLURM, "--user", "u"),
         "error: sbatch printed no job ID: '٤٢;cluster'",
         files={"bin/sbatch": _exe("cat >/dev/null; echo '٤٢;cluster'\n")}),
    Case("u-ready-timeout-arabic", ("ready", *QWEN, "--timeout", "١٢"), "manifesto ready: error: argument "
         "--timeout: expected a number of seconds from 0 to 2073600, got '١٢'", rc=2),
    Case("u-kubectl-retries-superscript", SERVERS, "error: MANIFESTO_KUBECTL_RETRIES='²': expected a whole number "
         "of retries from 0 to 100", env={"MANIFESTO_KUBECTL_RETRIES": "²"}),
    Case("u-man-source-date-epoch-superscript", ("man",), None, rc=0, env={"SOURCE_DATE_EPOCH": "²"}),
    Case("u-catalog-zero-width-look-alike", ("render", "manifest", "qwen/qwen3-0.6b\u200b", "--cluster",
                                            "example-gb200", "-n", "ns", "--user", "u"),
         "error: catalog name 'qwen/qwen3-0.6b\\u200b' is refused: its name holds the invisible or control "
         "character U+200B (did you mean 'qwen/qwen3-0.6b'?)", files={"config/models/qwen/qwen3-0.6b\u200b.yaml": "release: evil\n"}),
    Case("u-config-list-hides-look-alike", ("config", "list", "models", "-o", "name"), None, rc=0,
         files={"config/models/qwen/qwen3-0.6b\u200b.yaml": "release: evil\n"},
         stdout="".join(f"{name}\n" for name in BUNDLED_MODELS)),

    # -- class 5: data from outside, printed ---------------------------------------------------
    Case("o-config-list-name-newline", ("config", "list", "clusters", "-o", "name"), None, rc=0,
         files={"config/clusters/evil\nexample-gb200.yaml": "name: x\n"},
         stdout="".join(f"{name}\n" for name in BUNDLED_CLUSTERS)),
    Case("o-config-list-escape-in-name", ("config", "list", "clusters"), None, rc=0,
         files={f"config/clusters/a{ESC}.yaml": "name: x\n"},
         stdout="".join(f"{name:<24}bundled\n" for name in BUNDLED_CLUSTERS)),
    Case("o-config-list-bidi-name", ("config", "list", "clusters", "-o", "json"), None, rc=0,
         files={"config/clusters/gpu\u202eyaml.txt.yaml": "name: x\n"}),
    Case("o-servers-label-escape", SERVERS, None, rc=0, kube={"objects": [_pod(f"x{ESC}")]},
         stdout="INSTANCE                  OWNER  RESOURCES\nx\\x1b]0;pwned\\x07\\x1b[2J  u      1 Deployment\n"),
    Case("o-servers-name-newline", (*SERVERS, "-o", "name"), None, rc=0,
         kube={"objects": [_pod("a\nb-forged")]}, stdout="a\\x0ab-forged\n"),
    Case("o-servers-owner-bidi", SERVERS, None, rc=0, kube={"objects": [_pod("x", "u\u202etoor")]},
         stdout="INSTANCE  OWNER        RESOURCES\nx         u\\u202etoor  1 Deployment\n"),
    Case("o-servers-yaml-escapes", (*SERVERS, "-o", "yaml"), None, rc=0, kube={"objects": [_pod(f"x{ESC}\u202e")]}),
    Case("o-slurm-servers-job-name-escape", ("slurm", "servers", *SLURM), None, rc=0,
         files={"bin/squeue": _exe(f"printf '7|manifesto-red{ESC}|RUNNING|n1|None\\n'\n")},
         stdout="7              red\\x1b]0;pwned\\x07\\x1b[2J       RUNNING    n1\n"),
    Case("o-slurm-servers-forged-id", ("slurm", "servers", *SLURM, "-o", "name"), None, rc=0,
         files={"bin/squeue": _exe("printf '7\\033[2J|manifesto-a|RUNNING|n1|None\\n8|manifesto-b|PENDING||x\\n'\n")},
         stdout="8\n"),
    Case("o-sbatch-huge-error", ("slurm", "submit", "qwen/qwen3-0.6b", *SLURM, "--user", "u"),
         "error: sbatch failed: [3999000 characters cut] ..." + "x" * 1000,
         files={"bin/sbatch": _exe("cat >/dev/null; head -c 4000000 /dev/zero | tr '\\0' x >&2; exit 1\n")}),
    Case("o-sbatch-error-escape", ("slurm", "submit", "qwen/qwen3-0.6b", *SLURM, "--user", "u"),
         "error: sbatch failed: bad\\x1b[2J | second line",
         files={"bin/sbatch": _exe("cat >/dev/null; printf 'bad\\033[2J\\nsecond line\\n' >&2; exit 1\n")}),
    Case("o-scancel-error-escape", ("slurm", "stop", "12", *SLURM), "error: could not cancel Slurm job 12: "
         "gone\\x1b]0;x\\x07 (it may have finished already; `manifesto slurm servers` lists your jobs)",
         files={"bin/scancel": _exe("printf 'scancel: error: Kill job error on job id 12: gone\\033]0;x\\007\\n' >&2\n")}),
    Case("o-sbatch-test-only-escape", ("slurm", "submit", "qwen/qwen3-0.6b", *SLURM, "--user", "u", "--test-only"),
         None, rc=0, files={"bin/sbatch": _exe("cat >/dev/null; printf 'ok\\033[2J to start\\n' >&2\n")}),
    Case("o-kubectl-huge-stderr", SERVERS, "error: `kubectl -n ns get deployments.apps -l "
         "app.kubernetes.io/managed-by=manifesto -o json` failed: [1999000 characters cut] ..." + "e" * 1000,
         env={"MANIFESTO_KUBECTL_RETRIES": "0"},
         kube={"config": {"fail": {"get deployments.apps": {"times": 9, "stderr": "e" * 2_000_000, "rc": 1}}}}),
    Case("o-kubectl-stderr-escape", SERVERS, "error: `kubectl -n ns get deployments.apps -l "
         "app.kubernetes.io/managed-by=manifesto -o json` failed: denied\\x1b[31m\\u202e",
         env={"MANIFESTO_KUBECTL_RETRIES": "0"},
         kube={"config": {"fail": {"get deployments.apps": {"times": 9, "stderr": "denied\x1b[31m\u202e", "rc": 1}}}}),

    # stop refuses another owner's instance, naming the owner from the cluster: escaped
    Case("o-stop-foreign-owner-escape", ("stop", "--instance", "x", "-n", "ns", "--user", "u"),
         "error: instance x in namespace ns belongs to v\\x1b]0;pwned\\x07\\x1b[2J, not u; pass --take-over to stop "
         "it anyway", rc=1, kube={"objects": [_pod("x", owner=f"v{ESC}")], "config": {}}),
    Case("o-stop-kubectl-output-escape", ("stop", "--instance", "x", "-n", "ns", "--user", "u"), None, rc=0,
         kube={"objects": [_pod("x")], "config": {"stdout": {"delete": f"deleted {ESC}\n"}}},
         stdout="deleted \\x1b]0;pwned\\x07\\x1b[2J\n" * 2),
    Case("o-complete-instance-newline", ("__complete", "zsh", "--", "stop", "-n", "ns", "--instance", ""), None,
         rc=0,
         kube={"objects": [_pod("good"), _pod("evil\nrm -rf ~"), _pod(f"esc{ESC}")]}, stdout="good\tlive in ns\n"),

    Case("o-file-diff-output-escape", ("file", "diff", "m.yaml", "-n", "ns"), None, rc=0,
         files={"ws/m.yaml": MANIFEST}, kube={"config": {"stdout": {"diff": f"-  a: {ESC}\u202e\n+  a: b\n"}}},
         stdout="-  a: \\x1b]0;pwned\\x07\\x1b[2J\\u202e\n+  a: b\n"),

    # -- class 7: too large to parse quickly, too large for the type ---------------------------
    Case("b-import-200k-env", ("config", "import", "models", "big.yaml", "--name", "big"),
         "error: big.yaml: holds 200004 lines and ','-separated items; a YAML input holds at most 20000 (a spec or "
         "a profile is a few hundred lines)", files={"ws/big.yaml": "release: demo\nmodel: {id: m}\nroles:\n"
                                                    "  - name: decode\n    env:\n" + "      V: x\n" * 199_999}),
    Case("b-explain-flow-list", ("explain", "big.yaml", "--cluster", "example-gb200", "-n", "ns", "--user", "u"),
         "error: big.yaml: holds 30000 lines and ','-separated items; a YAML input holds at most 20000 (a spec or "
         "a profile is a few hundred lines)", files={"ws/big.yaml": "release: [" + "a, " * 30000 + "]"}),
    Case("b-cluster-flow-map", ("explain", "qwen/aggregated", "--cluster", "c.yaml", "-n", "ns"),
         "error: c.yaml: holds 25001 lines and ','-separated items; a YAML input holds at most 20000 (a spec or a "
         "profile is a few hundred lines)",
         files={"ws/c.yaml": "name: c\nx: {" + ", ".join(f"k{i}: v" for i in range(25001)) + "}"}),
    Case("b-buildfile-huge", ("build",), "error: BUILD.yaml: holds 20006 lines and ','-separated items; a YAML input "
         "holds at most 20000 (a spec or a profile is a few hundred lines)",
         files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML + "#\n" * 19996})),
]
