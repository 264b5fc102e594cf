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
