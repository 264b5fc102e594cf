"""The hostile-input corpus, I/O side (issue 10, classes 3, 5, 6 and 7), as data.

Each ``Case`` is one command run as a user would run it, in a fresh directory tree:

    <tmp>/ws        the working directory (and, with BUILD.yaml, a build workspace)
    <tmp>/config    MANIFESTO_CONFIG_HOME: the user catalog
    <tmp>/outside   files outside all three, e.g. a credentials file; nothing may write here
    <tmp>/bin       a fake kubectl (tests/fake_kubectl.py) whose state is ``kube``

``files`` maps paths below <tmp> to text, or to ``("symlink", target)``, ``("fifo",)``,
``("socket",)``, ``("dir",)``, ``("exec", script)`` (e.g. a fake ``bin/sbatch``) or ``("bytes", b"...")``. ``expect`` is the one error line the command must print (``{tmp}`` is
the tree's root), or None for a command that must succeed without one. Anything with
"SECRET" in it must never be printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CASES", "Case", "SECRET"]

SECRET = "SECRETvalue123"


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    expect: str | None
    rc: int = 1
    files: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    kube: dict | None = None  # fake kubectl state: {"config": {...}, "objects": [...]}
    stdout: str | None = None  # the exact standard output, when given


QWEN = ("qwen/aggregated", "--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
EXPLAIN = ("explain", "spec.yaml", "--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
RENDER = ("render", "manifest", *QWEN)
SERVERS = ("servers", "-n", "ns")
READY = ("ready", *QWEN)
DNS = "must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
SEGMENT = ("must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit "
           "(no '/' or '..')")
FAST = {"MANIFESTO_KUBECTL_TIMEOUT": "1", "MANIFESTO_KUBECTL_RETRIES": "0"}

CREDENTIALS = f"[default]\naws_access_key_id = AKIA{SECRET}\naws_secret_access_key = {SECRET}\n"
NETRC = f"machine registry.example.com login bob password {SECRET}\n"
SSH_KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE{SECRET}AAAA\n-----END OPENSSH PRIVATE KEY-----\n"

_BOMB = "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['x'] * 9)}]\n"
                for p, n in zip(["", *"abcdefg"], "abcdefgh"))
_MANY_ALIASES = "s: &s x\nl: [" + ", ".join(["*s"] * 1001) + "]\n"

# A one-pair build workspace with the real renderer.
BUILD_YAML = """\
options:
  default: {user: u, namespace: ns}
targets:
  - {kind: cluster, path: clusters, sources: ["*.yaml"]}
  - {kind: model, path: models, sources: ["**/*.yaml"]}
"""


def _workspace(model: object = None, **extra) -> dict:
    from kit import REPO_ROOT

    files = {"ws/BUILD.yaml": BUILD_YAML,
             "ws/clusters/gpu.yaml": (REPO_ROOT / "clusters/example-gb200.yaml").read_text(),
             "ws/models/m.yaml": model if model is not None else (REPO_ROOT / "models/qwen/aggregated.yaml").read_text()}
    files.update(extra)
    return files


def _qwen() -> str:
    from kit import REPO_ROOT

    return (REPO_ROOT / "models/qwen/aggregated.yaml").read_text()


LIVE = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
    "name": "x-decode", "namespace": "ns",
    "labels": {"app.kubernetes.io/managed-by": "manifesto", "app.kubernetes.io/instance": "x"}}}]
MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\n"
POD_LIST = ("kubectl -n ns get pods -l app.kubernetes.io/managed-by=manifesto,app.kubernetes.io/instance=qwen3-30b "
            "-o json")


CASES: list[Case] = [
    # -- class 3: resource exhaustion ---------------------------------------------------------
    Case("alias-bomb", EXPLAIN, "error: spec.yaml:6:8: *e: with this alias, aliases expand to 141148 values; "
         "at most 100000 are allowed (an alias bomb?)", files={"ws/spec.yaml": _BOMB}),
    Case("alias-count", EXPLAIN, "error: spec.yaml:2:4005: *s: this is alias use number 1001; a file may use "
         "aliases at most 1000 times", files={"ws/spec.yaml": _MANY_ALIASES}),
    Case("int-5000-digits", EXPLAIN, "error: spec.yaml:1:10: a whole number of 5000 digits; at most 4300 are "
         "supported (quote it if it is text)", files={"ws/spec.yaml": "release: " + "9" * 5000 + "\n"}),
    Case("hex-int-too-big", EXPLAIN, "error: spec.yaml:1:1: release: a whole number of more than 4300 digits; "
         "quote it if it is text", files={"ws/spec.yaml": "release: 0x" + "f" * 4000 + "\n"}),
    Case("int-in-cluster-5000-digits", ("explain", "qwen/aggregated", "--cluster", "c.yaml", "-n", "ns"),
         "error: c.yaml:1:7: a whole number of 5000 digits; at most 4300 are supported (quote it if it is text)",
         files={"ws/c.yaml": "name: " + "1" * 5000 + "\n"}),
    Case("impossible-date", EXPLAIN, "error: spec.yaml:1:10: '2024-02-30' is not a valid timestamp: day is out of "
         "range for month", files={"ws/spec.yaml": "release: 2024-02-30\n"}),
    Case("bool-maybe", EXPLAIN, "error: spec.yaml:1:10: 'maybe' is not a valid !!bool",
         files={"ws/spec.yaml": "release: !!bool maybe\n"}),
    Case("int-tag-on-text", EXPLAIN, "error: spec.yaml:1:10: 'abc' is not a valid int: invalid literal for int() "
         "with base 10: 'abc'", files={"ws/spec.yaml": "release: !!int abc\n"}),
    *[Case(f"idle-timeout-{name}", (*RENDER, f"--idle-timeout={value}"),
           f"error: --idle-timeout '{value}': expected a positive duration of at most a year, such as 15m, 2h or "
           "90 (minutes)") for name, value in
      (("nan", "nan"), ("inf", "inf"), ("negative", "-5m"), ("1e400", "1e400"), ("zero", "0"), ("huge", "9e9h"),
       ("words", "soon"))],
    *[Case(f"kubectl-timeout-{name}", SERVERS, f"error: MANIFESTO_KUBECTL_TIMEOUT='{value}': expected a number "
           "of seconds from 0 (no bound) to 2073600", env={"MANIFESTO_KUBECTL_TIMEOUT": value})
      for name, value in (("nan", "nan"), ("inf", "inf"), ("1e400", "1e400"), ("negative", "-1"), ("abc", "abc"))],
    *[Case(f"kubectl-retries-{name}", SERVERS, f"error: MANIFESTO_KUBECTL_RETRIES='{value[:40]}': expected a whole "
           "number of retries from 0 to 100", env={"MANIFESTO_KUBECTL_RETRIES": value})
      for name, value in (("nan", "nan"), ("1e400", "1e400"), ("negative", "-1"), ("abc", "abc"), ("float", "2.5"),
                          ("huge", "9" * 5000))],
    Case("cache-root-open-brace", (*RENDER, "--cache-root", "/c/{user"), "error: --cache-root: malformed template "
         "'/c/{user': expected '}' before end of string; write {{ or }} for a literal brace"),
    Case("cache-root-format-spec", (*RENDER, "--cache-root", "/c/{user:>999999999}"), "error: --cache-root: "
         "placeholder '{user}' in '/c/{user:>999999999}' takes no format spec or conversion"),
    Case("log-root-lone-brace", (*RENDER, "--log-root", "/l/}"), "error: --log-root: malformed template '/l/}': "
         "Single '}' encountered in format string; write {{ or }} for a literal brace"),
    Case("ready-timeout-nan", (*READY, "--timeout", "nan"), "manifesto ready: error: argument --timeout: expected a "
         "number of seconds from 0 to 2073600, got 'nan'", rc=2),
    Case("e2e-timeout-inf", ("test", "e2e", *QWEN, "--timeout", "inf"), "manifesto test e2e: error: argument "
         "--timeout: expected a positive number of seconds up to 2073600, got 'inf'", rc=2),
    Case("e2e-ready-timeout-negative", ("test", "e2e", *QWEN, "--ready-timeout=-1"), "manifesto test e2e: error: "
         "argument --ready-timeout: expected a number of seconds from 0 to 2073600, got '-1'", rc=2),
    Case("build-jobs-zero", ("build", "--jobs", "0"), "manifesto build: error: argument --jobs/-j: expected a "
         "number of jobs from 1 to 1024, got '0'", rc=2),
    Case("spec-is-dev-zero", ("explain", "/dev/zero", "--cluster", "example-gb200", "-n", "ns"),
         "error: model /dev/zero: is a device, expected a regular YAML file"),

    # -- class 5: files and the build ---------------------------------------------------------
    Case("extends-directory", EXPLAIN, "error: spec.yaml:1:1: extends: is a directory, expected a YAML file: base",
         files={"ws/spec.yaml": "extends: base\n", "ws/base": ("dir",)}),
    Case("extends-symlink-loop", EXPLAIN, "error: spec.yaml:1:1: extends: symlink loop (following the links leads "
         "back to a link already followed): a.yaml", files={"ws/spec.yaml": "extends: a.yaml\n",
                                                          "ws/a.yaml": ("symlink", "b.yaml"),
                                                          "ws/b.yaml": ("symlink", "a.yaml")}),
    Case("extends-fifo", EXPLAIN, "error: spec.yaml:1:1: extends: is a FIFO, expected a regular YAML file: pipe",
         files={"ws/spec.yaml": "extends: pipe\n", "ws/pipe": ("fifo",)}),
    Case("extends-broken-symlink", EXPLAIN, "error: spec.yaml:1:1: extends: broken symlink (to gone.yaml): b.yaml",
         files={"ws/spec.yaml": "extends: b.yaml\n", "ws/b.yaml": ("symlink", "gone.yaml")}),
    Case("extends-nul-in-name", EXPLAIN, "error: spec.yaml:1:1: extends: not a file name (it holds a NUL "
         "character): 'a\\x00b.yaml'", files={"ws/spec.yaml": 'extends: "a\\0b.yaml"\n'}),
    Case("extends-dev-zero", EXPLAIN, "error: spec.yaml:1:1: extends: is a device, expected a regular YAML file: "
         "/dev/zero", files={"ws/spec.yaml": "extends: /dev/zero\n"}),
    Case("spec-symlink-to-credentials", EXPLAIN, "error: spec.yaml:2:1: expected '<document start>', but found "
         "('<scalar>',)", files={"outside/credentials": CREDENTIALS,
                                 "ws/spec.yaml": ("symlink", "../outside/credentials")}),
    Case("spec-symlink-to-ssh-key", EXPLAIN, "error: spec.yaml: expected a mapping at the top of a model spec",
         files={"outside/id": SSH_KEY, "ws/spec.yaml": ("symlink", "../outside/id")}),
    Case("cluster-symlink-to-netrc", ("explain", "qwen/aggregated", "--cluster", "c.yaml", "-n", "ns"),
         "error: c.yaml: expected a YAML mapping at the top of the file, got text",
         files={"outside/netrc": NETRC, "ws/c.yaml": ("symlink", "../outside/netrc")}),
    Case("cluster-symlink-to-ssh-key", ("explain", "qwen/aggregated", "--cluster", "c.yaml", "-n", "ns"),
         "error: c.yaml: expected a YAML mapping at the top of the file, got text",
         files={"outside/id": SSH_KEY, "ws/c.yaml": ("symlink", "../outside/id")}),
    Case("cluster-is-a-list", ("explain", "qwen/aggregated", "--cluster", "c.yaml", "-n", "ns"),
         "error: c.yaml:1:1: expected a YAML mapping at the top of the file, got a list",
         files={"ws/c.yaml": f"- {SECRET}\n"}),
    Case("build-symlinked-source-outside", ("build",), "error: //models:m @ gpu: models/m.yaml: resolves to "
         "{tmp}/outside/spec.yaml, outside the build workspace {tmp}/ws; a build reads only files inside it "
         "(copy the file in, or render it with `manifesto render manifest`)",
         files=_workspace(**{"ws/models/m.yaml": ("symlink", "../../outside/spec.yaml"),
                             "outside/spec.yaml": _qwen()})),
    Case("build-extends-dotdot-outside", ("build",), "error: //models:m @ gpu: models/m.yaml:1:1: extends: "
         "../../outside/spec.yaml resolves to {tmp}/outside/spec.yaml, outside the build workspace {tmp}/ws; a "
         "build reads only files inside it (copy the file in, or render it with `manifesto render manifest`)",
         files=_workspace("extends: ../../outside/spec.yaml\n", **{"outside/spec.yaml": _qwen()})),
    Case("build-extends-absolute-outside", ("build",), "error: //models:m @ gpu: models/m.yaml:1:1: extends: "
         "{tmp}/outside/spec.yaml resolves to {tmp}/outside/spec.yaml, outside the build workspace {tmp}/ws; a "
         "build reads only files inside it (copy the file in, or render it with `manifesto render manifest`)",
         files=_workspace("extends: {tmp}/outside/spec.yaml\n", **{"outside/spec.yaml": _qwen()})),
    Case("build-cache-is-a-file", ("build",), "error: out/.cache is a file, expected a directory; remove it (or run "
         "`manifesto clean`)", files=_workspace(**{"ws/out/.cache": "x\n"})),
    Case("build-state-is-a-directory", ("build",), "error: out/.cache/state is a directory, expected a file; remove "
         "it (or run `manifesto clean`)", files=_workspace(**{"ws/out/.cache/state": ("dir",)})),
    Case("build-tasks-is-a-file", ("build",), "error: //models:m @ gpu: cannot store the result: out/.cache/tasks "
         "is a file, expected a directory; remove it", files=_workspace(**{"ws/out/.cache/tasks": "x\n"})),
    Case("build-out-is-a-file", ("build",), "error: out is a file, expected a directory; remove it",
         files=_workspace(**{"ws/out": "x\n"})),
    Case("build-lock-is-a-directory", ("build",), "error: out/.lock is a directory, expected a file; remove it",
         files=_workspace(**{"ws/out/.lock": ("dir",)})),
    Case("build-cluster-dir-is-a-file", ("build",), "error: //models:m @ gpu: cannot store the result: out/gpu is a "
         "file, expected a directory; remove it", files=_workspace(**{"ws/out/gpu": "x\n"})),
    Case("build-artifact-is-a-directory", ("build",), "error: //models:m @ gpu: cannot store the result: "
         "out/gpu/m.yaml is a directory, expected a file; remove it", files=_workspace(**{"ws/out/gpu/m.yaml": ("dir",)})),
    Case("clean-with-out-a-file", ("clean",), "error: out is a file, expected a directory; remove it",
         files=_workspace(**{"ws/out": "x\n"})),

    # -- class 6: catalog and output files ----------------------------------------------------
    Case("edit-extends-dotdot", ("config", "edit", "models", "sub/spec.yaml"), "error: sub/spec.yaml: the extends "
         "chain reaches sub/../../../x.yaml, whose copy would be written to {tmp}/x.yaml, outside the user catalog "
         "{tmp}/config/models; nothing was copied. Flatten the spec with `manifesto config export` and "
         "`manifesto config import` instead", files={"ws/sub/spec.yaml": "extends: ../../../x.yaml\n",
                                                     "x.yaml": _qwen()}, env={"EDITOR": "true"}),
    Case("export-onto-directory", ("config", "export", "models", "qwen/aggregated", "-o", "d", "--force"),
         "error: output file d is a directory; name a file to write", files={"ws/d": ("dir",)}),
    Case("export-onto-symlink", ("config", "export", "models", "qwen/aggregated", "-o", "link.yaml", "--force"),
         "error: output file link.yaml is a symlink (to ../outside/target.yaml); refusing to replace it: remove it, "
         "or name the file it points to", files={"ws/link.yaml": ("symlink", "../outside/target.yaml")}),
    Case("export-below-a-file", ("config", "export", "models", "qwen/aggregated", "-o", "f/x.yaml"),
         "error: output file f/x.yaml cannot be used (Not a directory)", files={"ws/f": "x\n"}),
    Case("import-onto-symlink", ("config", "import", "models", "q.yaml", "--name", "q", "--force"),
         "error: user entry {tmp}/config/models/q.yaml is a symlink (to {tmp}/outside/q.yaml); refusing to replace "
         "it: remove it, or name the file it points to",
         files={"ws/q.yaml": _qwen(), "config/models/q.yaml": ("symlink", "{tmp}/outside/q.yaml")}),
    Case("render-file-onto-directory", ("render", "file", *QWEN, "-o", "d"),
         "error: --output: d is a directory; name a file to write", files={"ws/d": ("dir",)}),
    Case("render-file-env-onto-symlink", ("render", "file", *QWEN), "error: MANIFESTO_RENDER_OUT: out.yaml is a "
         "symlink (to ../outside/out.yaml); refusing to replace it: remove it, or name the file it points to",
         files={"ws/out.yaml": ("symlink", "../outside/out.yaml")}, env={"MANIFESTO_RENDER_OUT": "out.yaml"}),
    Case("import-a-device", ("config", "import", "models", "/dev/zero", "--name", "z"),
         "error: /dev/zero: is a device, expected a regular YAML file"),
    Case("import-a-directory", ("config", "import", "clusters", "d", "--name", "z"),
         "error: d: is a directory, expected a YAML file", files={"ws/d": ("dir",)}),
    Case("dotenv-not-utf8", RENDER, "error: .env: not UTF-8 text (invalid start byte); fix or remove this settings "
         "file", files={"ws/.env": ("bytes", b"A=\xff\xfe\n")}),
    Case("spec-not-utf8", EXPLAIN, "error: spec.yaml: not UTF-8 text (invalid start byte)",
         files={"ws/spec.yaml": ("bytes", b"release: \xff\n")}),
    Case("edit-with-unparsable-editor", ("config", "edit", "models", "brand/new"), "error: EDITOR='\"': cannot "
         "start the editor (No closing quotation); {tmp}/config/models/brand/new.yaml is unchanged",
         env={"EDITOR": '"'}),

    # -- class 7: kubectl faults --------------------------------------------------------------
    Case("servers-bad-json", SERVERS, "error: `kubectl -n ns get deployments.apps -l "
         "app.kubernetes.io/managed-by=manifesto -o json` printed output that is not JSON (Expecting value at line "
         "1, column 1); is kubectl a real kubectl?", kube={"config": {"stdout": {"get deployments.apps": "oops"}}}),
    Case("servers-json-list", SERVERS, "error: `kubectl -n ns get services -l app.kubernetes.io/managed-by=manifesto "
         "-o json` printed JSON a list, expected an object", kube={"config": {"stdout": {"get services": "[1, 2]"}}}),
    Case("servers-items-string", SERVERS, "error: `kubectl -n ns get pods -l app.kubernetes.io/managed-by=manifesto "
         "-o json` printed a list whose items are a string, expected a list of objects",
         kube={"config": {"stdout": {"get pods": '{"items": "abc"}'}}}),
    Case("servers-items-of-numbers", SERVERS, "error: `kubectl -n ns get pods -l "
         "app.kubernetes.io/managed-by=manifesto -o json` printed a list whose items are a list holding something "
         "other than objects, expected a list of objects", kube={"config": {"stdout": {"get pods": '{"items": [1]}'}}}),
    Case("servers-items-null", SERVERS, None, rc=0, kube={"config": {"stdout": {"get pods": '{"items": null}'}}}),
    Case("servers-odd-objects", SERVERS, None, rc=0, kube={"config": {"stdout": {"get pods": (
        '{"items": [{"metadata": "x"}, {"metadata": {"name": 5, "labels": []}}, {"kind": 3, "metadata": '
        '{"name": "p", "labels": {"app.kubernetes.io/instance": ["x"]}}}]}')}}}),
    Case("servers-not-utf8", SERVERS, "error: `kubectl -n ns get pods -l app.kubernetes.io/managed-by=manifesto -o "
         "json` printed output that is not JSON (Expecting value at line 1, column 1); is kubectl a real kubectl?",
         kube={"config": {"stdout_hex": {"get pods": "fffe00c3"}}}),
    Case("servers-json-string", SERVERS, "error: `kubectl -n ns get configmaps -l "
         "app.kubernetes.io/managed-by=manifesto -o json` printed JSON a string, expected an object",
         kube={"config": {"stdout": {"get configmaps": '"x"'}}}),
    Case("servers-read-hangs", SERVERS, "error: `kubectl -n ns get pods -l app.kubernetes.io/managed-by=manifesto -o "
         "json` timed out after 1 attempt(s): no answer within 1s (MANIFESTO_KUBECTL_TIMEOUT)",
         env=FAST, kube={"config": {"hang": ["get pods"]}}),
    Case("deploy-secret-apply-hangs", ("deploy", *QWEN), "error: `kubectl -n ns apply -f -` timed out: no answer "
         "within 1s (MANIFESTO_KUBECTL_TIMEOUT); the change may have been made in part, check the cluster before "
         "running it again", env=FAST, kube={"config": {"hang": ["apply"]}}),
    Case("stop-delete-hangs", ("stop", "--instance", "x", "-n", "ns"), "error: `kubectl -n ns delete "
         "--ignore-not-found deployments.apps/x-decode` timed out: no answer within 1s (MANIFESTO_KUBECTL_TIMEOUT); "
         "the change may have been made in part, check the cluster before running it again",
         env=FAST, kube={"config": {"hang": ["delete"]}, "objects": LIVE}),
    Case("file-diff-hangs", ("file", "diff", "-o", "m.yaml", "-n", "ns"), "error: `kubectl -n ns diff -f m.yaml` "
         "timed out after 1 attempt(s): no answer within 1s (MANIFESTO_KUBECTL_TIMEOUT)",
         files={"ws/m.yaml": MANIFEST}, env=FAST,
         kube={"config": {"hang": ["diff"]}}),
    Case("ready-poll-hangs", (*READY, "--timeout", "2"), f"error: qwen3-30b not ready after 2s: the last poll did "
         f"not finish (`{POD_LIST}` timed out after 1 attempt(s): no answer "
         "before the deadline)", env={"MANIFESTO_KUBECTL_TIMEOUT": "300"}, kube={"config": {"hang": ["get pods"]}}),
    Case("ready-garbage", (*READY, "--timeout", "30"), f"error: `{POD_LIST}` "
         "printed JSON a list, expected an object", kube={"config": {"stdout": {"get pods": "[]"}}}),

    # -- issue 19 item 3: every option value passes one grammar, whatever its source, and the
    # error names that source: a flag, a variable, a .env line or a BUILD.yaml position -------
    Case("option-dotenv-namespace", EXPLAIN[:-2], f"error: .env:2: MANIFESTO_NAMESPACE 'Bad_NS' {DNS}",
         files={"ws/.env": "# team settings\nMANIFESTO_NAMESPACE=Bad_NS\n", "ws/spec.yaml": _qwen()}),
    Case("option-dotenv-bom-keeps-first-line", EXPLAIN[:-2], f"error: .env:1: MANIFESTO_NAMESPACE 'Bad_NS' {DNS}",
         files={"ws/.env": ("bytes", b"\xef\xbb\xbfMANIFESTO_NAMESPACE=Bad_NS\n"), "ws/spec.yaml": _qwen()}),
    Case("option-user-catalog-dotenv", EXPLAIN, "error: {tmp}/config/.env:1: MANIFESTO_ROUTING_PROFILE "
         "'a\\x1b[31mb' contains the control character U+001B",
         files={"config/.env": "MANIFESTO_ROUTING_PROFILE=a\x1b[31mb\n", "ws/spec.yaml": _qwen()}),
    Case("option-env-routing-profile-tab", EXPLAIN, "error: MANIFESTO_ROUTING_PROFILE 'a\\tb' must be one line (no "
         "line breaks or tabs)", env={"MANIFESTO_ROUTING_PROFILE": "a\tb"}, files={"ws/spec.yaml": _qwen()}),
    Case("option-logname-path", ("explain", "qwen/aggregated", "--cluster", "example-gb200", "-n", "ns"),
         f"error: $LOGNAME '../x' {SEGMENT}", env={"USER": "", "LOGNAME": "../x"}),
    Case("option-gpu-alias-checked", (*RENDER, "--gpu", "../b200"), f"error: --accelerator/--gpu '../b200' {SEGMENT}"),
    Case("option-vllm-env-relative", (*RENDER, "--vllm-env", "envs/main"), "error: --vllm-env 'envs/main' must be an "
         "absolute path (starting with '/')"),
    Case("option-pre-launch-escape", (*RENDER, "--pre-launch", "echo \x1b]0;pwned\x07"), "error: --pre-launch "
         "'echo \\x1b]0;pwned\\x07' contains the control character U+001B"),
    Case("option-cluster-map-malformed", ("explain", "qwen/aggregated", "-n", "ns"), "error: MANIFESTO_CLUSTER_MAP "
         "'lab' is not CONTEXT=CLUSTER; write the map as ctx1=cluster1,ctx2=cluster2",
         env={"MANIFESTO_CLUSTER_MAP": "lab"}),
    Case("option-cluster-map-dotenv", ("explain", "qwen/aggregated", "-n", "ns"), "error: .env:1: "
         "MANIFESTO_CLUSTER_MAP 'a=b=c' is not CONTEXT=CLUSTER; write the map as ctx1=cluster1,ctx2=cluster2",
         files={"ws/.env": "MANIFESTO_CLUSTER_MAP=lab=example-gb200,a=b=c\n"}),
    Case("option-build-idle-timeout-huge", ("build",), "error: BUILD.yaml:2:37: options.default.idle_timeout_minutes: "
         "99999999999999999999999: expected a positive duration of at most a year, such as 15m, 2h or 90 (minutes)",
         files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML.replace(
             "{user: u, namespace: ns}", "{user: u, namespace: ns, idle_timeout_minutes: 99999999999999999999999}")})),
    Case("option-build-user-path", ("build",), f"error: BUILD.yaml:2:13: options.default.user: '../../x' {SEGMENT}",
         files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML.replace("user: u,", "user: ../../x,")})),
    Case("option-build-deployment-user", ("build",), f"error: BUILD.yaml:10:5: targets[2].user: '../../x' {SEGMENT}",
         files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML + "  - kind: deployment\n    name: d\n    model: models/m.yaml"
                             "\n    cluster: gpu\n    user: ../../x\n"})),
    Case("option-build-log-root-escape", ("build",), "error: BUILD.yaml:2:37: options.default.log_root: "
         "'/logs/\\x1b[2J' contains the control character U+001B",
         files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML.replace(
             "{user: u, namespace: ns}", '{user: u, namespace: ns, log_root: "/logs/\\e[2J"}')})),
    Case("option-build-accelerator-shell", ("build",), f"error: BUILD.yaml:2:37: options.default.accelerator: "
         f"'b200;id' {SEGMENT}", files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML.replace(
             "{user: u, namespace: ns}", "{user: u, namespace: ns, accelerator: 'b200;id'}")})),
]
