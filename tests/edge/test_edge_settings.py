"""A workspace's ``./.env`` is data that can arrive with a clone: it may carry a token, a
namespace or a cluster name, but not a setting that picks a program or a place to write
(``USER_ONLY``); those come from the environment or the user catalog's own .env."""

from __future__ import annotations

import argparse
import os

import pytest

from manifesto.cli import settings as cli_settings


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for key in cli_settings.USER_ONLY:
        monkeypatch.delenv(key, raising=False)
    return tmp_path


@pytest.mark.parametrize("key", sorted(cli_settings.USER_ONLY))
def test_a_workspace_dotenv_cannot_set_a_user_only_key(workspace, capsys, key):
    (workspace / ".env").write_text(f"HF_TOKEN=hf_abc\n{key}=/tmp/planted\nMANIFESTO_NAMESPACE=team\n")
    from manifesto.cli import common
    from manifesto.errors import Run

    run = argparse.Namespace(run=Run())  # a new run
    got = common.settings(run)
    assert key not in got and got["MANIFESTO_NAMESPACE"] == "team" and got["HF_TOKEN"] == "hf_abc"
    err = capsys.readouterr().err
    assert err.startswith(f"warning: .env:2: {key} is ignored: a workspace's .env may not set it (")
    assert "hf_abc" not in err  # the token is never echoed
    common.settings(run)
    assert capsys.readouterr().err == ""  # said once a run
    run = argparse.Namespace(run=Run())
    common.settings(run)
    assert capsys.readouterr().err == err  # and again in the next run


@pytest.mark.parametrize("key", sorted(cli_settings.USER_ONLY))
def test_the_users_own_settings_still_set_it(workspace, capsys, key, monkeypatch):
    user = os.path.join(os.environ["MANIFESTO_CONFIG_HOME"], ".env")
    os.makedirs(os.path.dirname(user), exist_ok=True)
    with open(user, "w", encoding="utf-8") as fh:
        fh.write(f"{key}=/home/me/mine\n")
    (workspace / ".env").write_text(f"{key}=/tmp/planted\n")
    got = cli_settings.settings()
    assert got[key] == "/home/me/mine" and got.where(key) == f"{user}:1"
    monkeypatch.setenv(key, "/from/env")
    assert cli_settings.settings()[key] == "/from/env"
    assert "planted" not in capsys.readouterr().err


def test_the_test_renderer_hook_runs_no_module_from_elsewhere(tmp_path, monkeypatch):
    """MANIFESTO_BUILD_RENDERER names a module to import: only the product's renderer or one in
    this checkout's tests/ may be named, so a planted module on sys.path never runs."""
    import sys

    from manifesto.build_graph import renderer
    from manifesto.errors import BuildError

    (tmp_path / "planted_renderer.py").write_text("open('CANARY', 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("planted_renderer", "os", "manifesto.cli", "../x", ""):
        with pytest.raises(BuildError, match="only the product renderer"):
            renderer.load(name)
    assert not (tmp_path / "CANARY").exists() and "planted_renderer" not in sys.modules
    assert renderer.load(renderer.DEFAULT).__name__ == renderer.DEFAULT
