"""BUILD.yaml errors: one clear message with file:line:col, exit status 1."""

from __future__ import annotations

import pytest
from buildkit import Runner, make_tree

pytestmark = pytest.mark.integration  # every test here starts a process

HEAD = "options:\n  default: {user: u, namespace: n}\ntargets:\n"
CLUSTERS = "  - kind: cluster\n    path: clusters\n    sources: ['*.yaml']\n"

CASES = {
    "unknown-key": (
        HEAD + "  - kind: cluster\n    path: clusters\n    sorces: ['*.yaml']\n",
        "BUILD.yaml:6:5: targets[0].sorces: unknown key 'sorces' (did you mean 'sources'?)",
    ),
    "bad-glob": (
        HEAD + "  - kind: cluster\n    path: clusters\n    sources: ['a**.yaml']\n",
        "BUILD.yaml:6:15: targets[0].sources[0]: bad glob 'a**.yaml': '**' must be a whole path segment, as in 'a/**/b.yaml'",
    ),
    "unclosed-class": (
        HEAD + "  - kind: cluster\n    path: clusters\n    sources: ['*.yaml', '!x[ab.yaml']\n",
        "BUILD.yaml:6:25: targets[0].sources[1]: bad glob '!x[ab.yaml': unclosed '[' character class",
    ),
    "unknown-target": (
        HEAD + CLUSTERS + "  - kind: model\n    path: models\n    sources: ['**/*']\n    clusters: ['//clusters:gpuu']\n",
        "BUILD.yaml:10:16: targets[1].clusters[0]: unknown target //clusters:gpuu (did you mean '//clusters:gpu'?)",
    ),
    "cycle": (
        "options:\n  a: {extends: b, user: u, namespace: n}\n  b: {extends: a}\n"
        "targets:\n  - kind: model\n    path: models\n    sources: ['**/*']\n    options: a\n",
        "BUILD.yaml:3:7: options.b.extends: cycle in option sets: a -> b -> a. "
        "To fix this, remove one `extends` of the chain.",
    ),
    "self-cycle": (
        "options:\n  a: {extends: a, user: u, namespace: n}\n"
        "targets:\n  - kind: model\n    path: models\n    sources: ['**/*']\n    options: a\n",
        "BUILD.yaml:2:7: options.a.extends: cycle in option sets: a -> a. To fix this, remove one `extends` of the chain.",
    ),
    "unknown-option-set": (
        HEAD + "  - kind: model\n    path: models\n    sources: ['**/*']\n    options: defualt\n",
        "BUILD.yaml:7:5: targets[0].options: unknown option set 'defualt' (did you mean 'default'?)",
    ),
    "missing-directory": (
        HEAD + "  - kind: model\n    path: modls\n    sources: ['**/*']\n",
        "BUILD.yaml:5:5: targets[0].path: directory 'modls' does not exist (did you mean 'models'?)",
    ),
    "bad-kind": (
        "targets:\n  - kind: modle\n",
        "BUILD.yaml:2:5: targets[0].kind: expected one of model, cluster, routing, deployment, monitoring, gitops, got 'modle'",
    ),
    "bad-kind-with-deployment-keys": (
        "targets:\n  - kind: deploymnt\n    name: demo\n    model: models/qwen/aggregated.yaml\n",
        "BUILD.yaml:2:5: targets[0].kind: expected one of model, cluster, routing, deployment, monitoring, gitops, got 'deploymnt'",
    ),
    "no-options": (
        "targets:\n  - kind: model\n    path: models\n    sources: ['**/*']\n",
        "BUILD.yaml:2:5: targets[0]: model targets need render options: add `options:` or an option set named 'default'",
    ),
    "bad-option-value": (
        "options:\n  default: {user: u, namespace: n, idle_timeout_minutes: -3}\ntargets: []\n",
        "BUILD.yaml:2:36: options.default.idle_timeout_minutes: -3: expected a positive duration of at most a year, such as 15m, 2h or 90 (minutes)",
    ),
    # Every option is checked with its flag's grammar and bounds, reported at its BUILD.yaml place.
    "idle-timeout-beyond-int64": (
        "options:\n  default: {user: u, namespace: n, idle_timeout_minutes: 99999999999999999999999}\ntargets: []\n",
        "BUILD.yaml:2:36: options.default.idle_timeout_minutes: 99999999999999999999999: expected a positive duration of at most a year, such as 15m, 2h or 90 (minutes)",
    ),
    "idle-timeout-over-a-year": (
        "options:\n  default: {user: u, namespace: n, idle_timeout_minutes: 366d}\ntargets: []\n",
        "BUILD.yaml:2:36: options.default.idle_timeout_minutes: '366d': expected a positive duration of at most a year, such as 15m, 2h or 90 (minutes)",
    ),
    "option-user-path": (
        "options:\n  default: {user: ../../x, namespace: n}\ntargets: []\n",
        "BUILD.yaml:2:13: options.default.user: '../../x' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')",
    ),
    "deployment-user-path": (
        HEAD + "  - kind: deployment\n    name: d\n    model: m\n    cluster: c\n    user: ../../x\n",
        "BUILD.yaml:8:5: targets[0].user: '../../x' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')",
    ),
    "deployment-bad-namespace": (
        HEAD + "  - kind: deployment\n    name: d\n    model: m\n    cluster: c\n    namespace: Team_A\n",
        "BUILD.yaml:8:5: targets[0].namespace: 'Team_A' must be a DNS label: lowercase letters, digits and '-', "
        "starting and ending with a letter or digit",
    ),
    "option-accelerator-slash": (
        "options:\n  default: {user: u, namespace: n, accelerator: a/b}\ntargets: []\n",
        "BUILD.yaml:2:36: options.default.accelerator: 'a/b' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')",
    ),
    "option-vllm-env-relative": (
        "options:\n  default: {user: u, namespace: n, vllm_env: envs/v}\ntargets: []\n",
        "BUILD.yaml:2:36: options.default.vllm_env: 'envs/v' must be an absolute path (starting with '/')",
    ),
    "option-log-root-two-lines": (
        "options:\n  default: {user: u, namespace: n, log_root: \"/l\\n/x\"}\ntargets: []\n",
        "BUILD.yaml:2:36: options.default.log_root: '/l\\n/x' must be one line (no line breaks or tabs)",
    ),
    "option-pre-launch-not-text": (
        "options:\n  default: {user: u, namespace: n, pre_launch: [echo hi, 3]}\ntargets: []\n",
        "BUILD.yaml:2:36: options.default.pre_launch: expected a non-empty string without surrounding spaces, got 3",
    ),
    "option-inline-unknown": (
        HEAD + "  - kind: model\n    path: models\n    sources: ['**/*']\n    options: {extends: default, log_rot: /l}\n",
        "BUILD.yaml:7:33: targets[0].options.log_rot: unknown key 'log_rot' (did you mean 'log_root'?)",
    ),
    "two-owners": (
        HEAD + CLUSTERS + "  - kind: routing\n    path: clusters\n    sources: ['gpu.yaml']\n",
        "BUILD.yaml:9:5: targets[1].sources: clusters/gpu.yaml is already a source of targets[0]; exclude it from one of them",
    ),
    "deployment-unknown-model": (
        HEAD + CLUSTERS + "  - kind: model\n    path: models\n    sources: ['**/*']\n"
        "  - kind: deployment\n    name: d\n    model: //models/qwen:agregated\n    cluster: gpu\n",
        "BUILD.yaml:12:5: targets[2].model: unknown target //models/qwen:agregated "
        "(did you mean '//models/qwen:aggregated'?)",
    ),
    "deployment-unknown-cluster": (
        HEAD + CLUSTERS + "  - kind: model\n    path: models\n    sources: ['**/*']\n"
        "  - kind: deployment\n    name: d\n    model: models/qwen/aggregated.yaml\n    cluster: gppu\n",
        "BUILD.yaml:13:5: targets[2].cluster: unknown cluster 'gppu' (did you mean 'gpu'?)",
    ),
    "deployment-model-is-a-cluster": (
        HEAD + CLUSTERS + "  - kind: deployment\n    name: d\n    model: //clusters:gpu\n    cluster: gpu\n",
        "BUILD.yaml:9:5: targets[1].model: //clusters:gpu must name one model target",
    ),
    "deployment-bad-name": (
        HEAD + "  - kind: deployment\n    name: My_App\n    model: m\n    cluster: c\n",
        "BUILD.yaml:5:5: targets[0].name: 'My_App' is not a target name: use lowercase letters, digits and '-' "
        "(at most 63), not 'all'",
    ),
    "deployment-bad-context": (
        HEAD + "  - kind: deployment\n    name: d\n    model: m\n    cluster: c\n    context: 'a; rm -rf /'\n",
        "BUILD.yaml:8:5: targets[0].context: 'a; rm -rf /' is not a kube context name without spaces or "
        "shell metacharacters",
    ),
    "deployment-no-cluster": (
        HEAD + "  - kind: deployment\n    name: d\n    model: m\n",
        "BUILD.yaml:4:5: targets[0]: a deployment target needs 'cluster'",
    ),
    "deployment-no-namespace": (
        "targets:\n  - kind: deployment\n    name: d\n    model: m\n    cluster: c\n    user: u\n",
        "BUILD.yaml:2:5: targets[0]: the deployment has no namespace: set it here or in its options",
    ),
    "deployment-unknown-key": (
        HEAD + "  - kind: deployment\n    name: d\n    model: m\n    cluster: c\n    contxt: x\n",
        "BUILD.yaml:8:5: targets[0].contxt: unknown key 'contxt' (did you mean 'context'?)",
    ),
    "yaml-syntax": (
        "targets: [\n",
        "BUILD.yaml:2:1: expected the node content, but found '<stream end>'",
    ),
}


@pytest.mark.parametrize("text, message", list(CASES.values()), ids=list(CASES))
def test_buildfile_errors_are_one_clear_message(tmp_path, text, message):
    root = make_tree(tmp_path / "tree", {"BUILD.yaml": text})
    proc = Runner(root, tmp_path / "log")("build", "//::", check=False)
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, f"error: {message}\n", "")


def test_an_error_is_reported_again_after_a_cached_parse(tmp_path):
    """The parsed BUILD.yaml is cached; errors found later still point into it."""
    run = Runner(make_tree(tmp_path / "tree"), tmp_path / "log")
    run("build")
    (run.root / "models/qwen/all.yaml").write_text("release: all\n")
    proc = run("build", check=False)
    assert proc.stderr == (
        "error: BUILD.yaml:14:5: targets[2].sources: models/qwen/all.yaml: a target cannot be named 'all' "
        "(//dir:all means every target in dir)\n"
    )


def test_inline_options_extend_a_named_set(tmp_path):
    text = (make_tree(tmp_path / "t") / "BUILD.yaml").read_text()
    text += "    options: {extends: default, namespace: inline-ns, idle_timeout_minutes: 15}\n"
    run = Runner(make_tree(tmp_path / "tree", {"BUILD.yaml": text}), tmp_path / "log")
    run("build", "//models/qwen:aggregated", "--cluster", "gpu")
    assert (run.root / "out/gpu/qwen/aggregated.yaml").read_text().startswith("# options: test-user inline-ns None 15\n")
