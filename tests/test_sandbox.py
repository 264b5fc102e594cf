"""The suite's own sandbox: every test runs with a home of its own, and the autouse guard of
``conftest`` fails a test that changes the product's default files outside its temporary
folders (``/tmp/manifesto.yaml``, the user's catalog and kubeconfig)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kit import cli_in_process


@pytest.fixture
def conftest(request):
    """The suite's root conftest module (``import conftest`` may name tests/cluster's, which
    pytest imported under the same name)."""
    want = Path(__file__).with_name("conftest.py").resolve()
    for plugin in request.config.pluginmanager.get_plugins():
        if Path(getattr(plugin, "__file__", "") or "/").resolve() == want:
            return plugin
    raise AssertionError("the root conftest is not loaded")


def test_home_is_the_tests_own(tmp_path_factory, conftest):
    home = Path(os.environ["HOME"])
    assert home.is_dir() and not any(home.iterdir())
    assert str(home) != conftest._REAL_HOME
    assert home.resolve().is_relative_to(tmp_path_factory.getbasetemp().resolve())
    assert Path("~").expanduser() == home


def test_the_guard_sees_a_write_to_a_guarded_path(tmp_path, monkeypatch, conftest):
    target = tmp_path / "manifesto.yaml"
    monkeypatch.setattr(conftest, "_GUARDED", (str(target),))
    before = conftest.guarded_state()
    assert before == {str(target): None}
    target.write_text("a user's hand edit\n")
    written = conftest.guarded_state()
    assert written != before
    os.utime(target, ns=(1, 1))
    assert conftest.guarded_state() != written  # a rewrite of the same size is seen too


def test_the_guard_watches_the_default_render_file(conftest):
    assert {"/tmp/manifesto.yaml", "/tmp/manifesto.sbatch"} <= set(conftest._GUARDED)
    assert os.path.join(conftest._REAL_HOME, ".kube/config") in conftest._GUARDED


def test_an_empty_output_is_refused_not_taken_for_the_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (("render", "file", "qwen/aggregated", "--cluster", "example-gb200", "--output="),
                 ("render", "file", "qwen/aggregated", "--cluster", "example-gb200", "-o", ""),
                 ("render", "slurm", "qwen/aggregated", "--cluster", "example-slurm", "--output="),
                 ("file", "apply", ""), ("file", "diff", "-f", ""),
                 ("config", "export", "models", "qwen/aggregated", "--output="),
                 ("plan", "Qwen/Qwen3-32B", "--write="), ("migrate", "x.yaml", "--output=")):
        res = cli_in_process(*argv)
        assert res.returncode == 2, argv
        assert res.stderr.rstrip().endswith(": expected a file name, got an empty value"), (argv, res.stderr)
    assert os.listdir(tmp_path) == []
