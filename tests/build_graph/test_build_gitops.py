"""Gitops targets (``kind: gitops`` in BUILD.yaml): Argo CD objects built into out/gitops/<name>.yaml
with the product's renderer, incremental like every artifact, and their BUILD.yaml errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from test_build_real_renderer import cli, copy_examples

pytestmark = pytest.mark.integration  # every test here runs the build CLI as a process

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

GITOPS = "\n  - kind: gitops\n    name: argocd\n"


def _rows(proc) -> dict:
    return {(r["model"], r["cluster"]): r for r in json.loads(proc.stdout)["pairs"]}


def _without_gitops(text: str) -> str:
    head, sep, _ = text.partition("\n  # GitOps delivery")
    assert sep, "the bundled BUILD.yaml declares no gitops target"
    return head + "\n"


def test_the_gitops_target_builds_what_is_committed(tmp_path):
    root = copy_examples(tmp_path / "examples")
    proc = cli(root, "build", "//:argocd", "//:qwen-demo", "--output", "json")
    rows = _rows(proc)
    assert rows[("//:argocd", "example-gb200")]["status"] == "rendered", proc.stderr
    for rel in ("gitops/argocd.yaml", "deploy/qwen-demo.yaml"):
        assert (root / "out" / rel).read_text() == (REPO / "out" / rel).read_text(), rel
    assert cli(root, "build", "--check", "//:argocd").returncode == 0
    # An edit is seen by --check, and the next build restores it.
    app = root / "out/gitops/argocd.yaml"
    app.write_text(app.read_text().replace("selfHeal: true", "selfHeal: false"))
    assert cli(root, "build", "--check", "//:argocd").returncode != 0
    cli(root, "build", "//:argocd")
    assert app.read_text() == (REPO / "out/gitops/argocd.yaml").read_text()
    proc = cli(root, "clean", "--all")
    assert proc.returncode == 0 and not app.exists() and "out/gitops/argocd.yaml" in proc.stdout


def test_uncovered_deployments_are_byte_identical_and_the_gitops_artifact_goes(tmp_path):
    """Without a gitops target the deployment renders without waves, as before issue 28."""
    root = copy_examples(tmp_path / "examples")
    cli(root, "build", "//:qwen-demo", "//:argocd")
    covered = (root / "out/deploy/qwen-demo.yaml").read_text()
    build = root / "BUILD.yaml"
    build.write_text(_without_gitops(build.read_text()))
    proc = cli(root, "build", "//::", "--output", "json")
    assert proc.returncode == 0, proc.stderr
    plain = (root / "out/deploy/qwen-demo.yaml").read_text()
    assert not (root / "out/gitops/argocd.yaml").exists()
    assert "argocd.argoproj.io/sync-wave" in covered and "argocd" not in plain
    # The same objects, but for the wave annotations (and the digest over them).
    from manifesto.ops.targets import parse_objects

    def bare(text: str) -> list[dict]:
        objs = parse_objects(text)
        for obj in objs:
            notes = obj["metadata"].get("annotations") or {}
            for key in ("argocd.argoproj.io/sync-wave", "manifesto.llm-d.ai/artifact-digest"):
                notes.pop(key, None)
            if not notes:
                obj["metadata"].pop("annotations", None)
        return objs

    assert bare(covered) == bare(plain)


def test_a_declaration_change_re_renders_only_the_gitops_artifact(tmp_path):
    root = copy_examples(tmp_path / "examples")
    cli(root, "build", "//:qwen-demo", "//:argocd")
    build = root / "BUILD.yaml"
    build.write_text(build.read_text().replace("    revision: main\n", "    revision: v1.2.0\n"
                                               "    destination: {server: 'https://10.0.0.1:6443'}\n"))
    proc = cli(root, "build", "//:qwen-demo", "//:argocd", "--output", "json")
    rows = _rows(proc)
    assert rows[("//:argocd", "example-gb200")]["status"] == "rendered"
    assert rows[("//:qwen-demo", "example-gb200")]["status"] != "rendered"
    text = (root / "out/gitops/argocd.yaml").read_text()
    assert "targetRevision: v1.2.0\n" in text and "server: https://10.0.0.1:6443\n" in text
    import yaml

    apps = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "Application"]
    assert {a["spec"]["source"]["path"] for a in apps} == {"out/gitops", "out/deploy", "out/monitoring"}
    for app in apps:  # the root stays on Argo CD's own cluster; the others go where declared
        server = "https://kubernetes.default.svc" if app["spec"]["source"]["path"] == "out/gitops" \
            else "https://10.0.0.1:6443"
        assert app["spec"]["destination"]["server"] == server and "name" not in app["spec"]["destination"]


@pytest.mark.parametrize(("body", "message"), [
    # (line, column) counted from the first line appended; N is the new target's index
    (GITOPS, "1:5: targets[N]: a gitops target needs 'repo_url'"),
    (GITOPS + "    repo_url: ftp://x\n    revision: main\n",
     "3:5: targets[N].repo_url: 'ftp://x' is not a repository URL (https://HOST/PATH, ssh://[USER@]HOST/PATH, "
     "git://HOST/PATH or USER@HOST:PATH, without spaces, quotes or shell metacharacters)"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: '$(id)'\n",
     "4:5: targets[N].revision: '$(id)' is not a branch, tag or commit"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    deployments: ['//:nope']\n",
     "5:19: targets[N].deployments[0]: unknown target //:nope"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    deployments: ['//models/qwen:qwen3-0.6b']\n",
     "5:19: targets[N].deployments[0]: //models/qwen:qwen3-0.6b names no deployment target "
     "(deployment targets: //:qwen-demo)"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    destination: {name: a, server: 'https://b'}\n",
     "5:5: targets[N].destination: give the Argo CD cluster by 'name' or by 'server', one of them"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    destination: {server: 'http://b'}\n",
     "5:19: targets[N].destination.server: 'http://b' is not an API server URL (https://HOST[:PORT][/PATH])"),
    # Issue 35: the grammar `init --gitops-*` shares; credentials refused without repeating them.
    (GITOPS + "    repo_url: https://bob:hunter2@git.example.com/r.git\n    revision: main\n",
     "3:5: targets[N].repo_url: a repository URL with credentials (https://***@git.example.com/...) is refused"),
    (GITOPS + "    repo_url: https://ghp_T0KEN@github.com/r.git\n    revision: main\n",
     "3:5: targets[N].repo_url: a repository URL with credentials (https://***@github.com/...) is refused"),
    (GITOPS + "    repo_url: ssh://git:hunter2@git.example.com/r.git\n    revision: main\n",
     "3:5: targets[N].repo_url: a repository URL with credentials (ssh://***@git.example.com/...) is refused"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    destination: {server: 'https://u:pw@k:6443'}\n",
     "5:19: targets[N].destination.server: an API server URL with credentials (https://***@k:6443/...) is refused"),
    (GITOPS + "    repo_url: file:///srv/serving.git\n    revision: main\n",
     "3:5: targets[N].repo_url: 'file:///srv/serving.git' names a folder on one machine"),
    (GITOPS + "    repo_url: 'git@git.example.com:'\n    revision: main\n",
     "3:5: targets[N].repo_url: 'git@git.example.com:' names a host but no repository"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: 1.10\n",
     "4:5: targets[N].revision: expected a branch, tag or commit as a string, got 1.1 (YAML reads it as a number: "
     "write it in quotes)"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: ~\n",
     "4:5: targets[N].revision: expected a branch, tag or commit as a string, got null"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: \"v1\\u202e2\"\n",
     "4:5: targets[N].revision: 'v1\\u202e2' holds a space, a control or an invisible character"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    destination: {name: \"prod\\u200b\"}\n",
     "5:19: targets[N].destination.name: 'prod\\u200b' holds a space, a control or an invisible character"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    automated: 'yes'\n",
     "5:5: targets[N].automated: expected true or false, got a string"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    path: https://bob:hunter2@h/x\n",
     "5:5: targets[N].path: a folder of the repository with credentials (https://***@h/...) is refused"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: 'https://bob:hunter2@h/x'\n",
     "4:5: targets[N].revision: a branch, tag or commit with credentials (https://***@h/...) is refused"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    path: 'a b'\n",
     "5:5: targets[N].path: 'a b' holds a space"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    path: ../elsewhere\n",
     "5:5: targets[N].path: '../elsewhere' is outside the build root; use a path relative to BUILD.yaml"),
    (GITOPS + "    repo_url: https://h/r.git\n    revision: main\n    namespace: Argo\n",
     "5:5: targets[N].namespace: 'Argo'"),
])
def test_buildfile_errors_name_the_gitops_field(tmp_path, body, message):
    root = copy_examples(tmp_path / "examples")
    build = root / "BUILD.yaml"
    text = _without_gitops(build.read_text())
    build.write_text(text + body)
    line, col, rest = message.split(":", 2)
    index = sum(1 for ln in text.splitlines() if ln.startswith("  - kind:"))
    first = text.count("\n") + 2  # the body starts after a blank line
    expected = f"error: BUILD.yaml:{int(line) + first - 1}:{col}:{rest.replace('[N]', f'[{index}]')}"
    proc = cli(root, "list", "//::")
    assert proc.returncode != 0
    assert proc.stderr.startswith(expected), (proc.stderr, expected)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_a_slurm_deployment_is_refused_with_the_reason(tmp_path):
    root = copy_examples(tmp_path / "examples")
    build = root / "BUILD.yaml"
    text = build.read_text().replace("    cluster: example-gb200\n    namespace: demo\n    user: demo-user\n"
                                     "    context: example-gb200\n",
                                     "    cluster: example-slurm\n    namespace: demo\n    user: demo-user\n")
    build.write_text(text)
    proc = cli(root, "build", "//:argocd", "--output", "json")
    row = _rows(proc)[("//:argocd", "example-slurm")]
    assert row["status"] == "failed"
    assert row["message"] == ("gitops target //:argocd: deployment target //:qwen-demo runs on Slurm cluster "
                              "'example-slurm', and Argo CD delivers to Kubernetes only; give it its `slurm_host`, "
                              "or name the Kubernetes ones in `deployments:`")
    build.write_text(text.replace("    user: demo-user\n", "    user: demo-user\n    slurm_host: login1\n", 1))
    proc = cli(root, "list", "//::")
    assert proc.returncode != 0 and "the gitops target covers no deployment target" in proc.stderr
