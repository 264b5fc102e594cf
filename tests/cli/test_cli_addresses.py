"""Build addresses work wherever the CLI takes a spec or a cluster."""

from __future__ import annotations

import pytest

from kit import run_cli

pytestmark = pytest.mark.integration  # every test here starts a process

ARGS = ("--user", "u", "--namespace", "ns")


def test_address_and_path_render_the_same():
    by_path = run_cli("render", "manifest", "models/qwen/qwen3-0.6b.yaml", "--cluster",
                      "clusters/example-gb200.yaml", *ARGS, env={"MANIFESTO_NO_CACHE": "1"})
    by_address = run_cli("render", "manifest", "//models/qwen:qwen3-0.6b", "--cluster",
                         "//clusters:example-gb200", *ARGS, env={"MANIFESTO_NO_CACHE": "1"})
    assert by_path.returncode == by_address.returncode == 0, by_address.stderr
    assert by_path.stdout == by_address.stdout


def test_unknown_address_is_one_clear_error():
    proc = run_cli("config", "validate", "//models/qwen:aggregatd", "--cluster", "example-gb200", *ARGS)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "error: unknown target //models/qwen:aggregatd (did you mean '//models/qwen:aggregated'?)\n"


def _init_workspace(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    text = (tmp_path / "clusters" / "example-gb200.yaml").read_text()
    (tmp_path / "clusters" / "acme-h100.yaml").write_text(text.replace("name: example-gb200", "name: acme-h100"))
    return tmp_path


def test_a_workspace_cluster_is_found_by_name(tmp_path):
    """Inside a workspace, --cluster NAME is the workspace's cluster target of that name first
    (an edited copy of a bundled profile included), then the catalogs."""
    ws = _init_workspace(tmp_path)
    env = {"MANIFESTO_NO_CACHE": "1"}
    by_name = run_cli("render", "manifest", "models/qwen3-0.6b.yaml", "--cluster", "acme-h100", *ARGS, cwd=ws, env=env)
    by_path = run_cli("render", "manifest", "models/qwen3-0.6b.yaml", "--cluster", "clusters/acme-h100.yaml", *ARGS,
                      cwd=ws, env=env)
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout == by_path.stdout
    edited_text = (ws / "clusters" / "example-gb200.yaml").read_text().replace("demo-model-cache", "edited-cache")
    (ws / "clusters" / "example-gb200.yaml").write_text(edited_text)
    edited = run_cli("render", "manifest", "models/qwen3-0.6b.yaml", "--cluster", "example-gb200", *ARGS, cwd=ws,
                     env=env)
    assert "claimName: edited-cache" in edited.stdout  # the workspace's copy
