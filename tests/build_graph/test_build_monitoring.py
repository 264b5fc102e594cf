"""Monitoring targets (``kind: monitoring`` in BUILD.yaml): the namespace monitoring of the
bundled models' instances, built into out/monitoring/<name>.yaml with the product's renderer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from test_build_real_renderer import cli, copy_examples

pytestmark = pytest.mark.integration  # every test here runs the build CLI as a process

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))


def _rows(proc) -> dict:
    return {(r["model"], r["cluster"]): r for r in json.loads(proc.stdout)["pairs"]}


def test_monitoring_target_builds_what_render_monitoring_prints(tmp_path):
    root = copy_examples(tmp_path / "examples")
    proc = cli(root, "build", "//:example-gb200", "--output", "json")
    assert _rows(proc)[("//:example-gb200", "example-gb200")]["status"] == "rendered", proc.stderr
    built = (root / "out/monitoring/example-gb200.yaml").read_text()
    committed = (REPO / "out/monitoring/example-gb200.yaml").read_text()
    assert built == committed
    # Every model the cluster runs is in (its spec inlined in the header), the h200-only one is not.
    assert built.count("<(cat <<'MANIFESTO_MODEL_") == len(
        [p for p in (root / "models").rglob("*.yaml") if not p.name.endswith("-base.yaml")]) - 1
    assert "name: qwen3-0-6b-vllm-decode\n" in built and "h200" not in built.split("---", 1)[1]


def test_editing_a_spec_re_renders_the_monitoring(tmp_path):
    root = copy_examples(tmp_path / "examples")
    cli(root, "build", "//::")
    spec = root / "models/qwen/qwen3-0.6b.yaml"
    spec.write_text(spec.read_text().replace("release: qwen3-0-6b", "release: qwen3-small"))
    proc = cli(root, "build", "//::", "--output", "json")
    rendered = sorted(k for k, r in _rows(proc).items() if r["status"] == "rendered")
    assert ("//:example-gb200", "example-gb200") in rendered
    assert "qwen3-small-vllm-decode" in (root / "out/monitoring/example-gb200.yaml").read_text()


def test_monitoring_of_a_slurm_cluster_fails_with_the_reason(tmp_path):
    root = copy_examples(tmp_path / "examples")
    build = root / "BUILD.yaml"
    build.write_text(build.read_text().replace("    cluster: example-gb200\n    # models:",
                                               "    cluster: example-slurm\n    # models:"))
    proc = cli(root, "build", "//:example-gb200", "--output", "json")
    row = _rows(proc)[("//:example-gb200", "example-slurm")]
    assert row["status"] == "failed"
    assert row["message"] == "cluster 'example-slurm' is a Slurm cluster; monitoring objects are Kubernetes-only"


@pytest.mark.parametrize(("body", "message"), [
    # (line, column) counted from the first line appended to BUILD.yaml; N is the new target's index
    ("  - kind: monitoring\n    name: mon\n", "1:5: targets[N]: a monitoring target needs 'cluster'"),
    ("  - kind: monitoring\n    name: mon\n    cluster: example-gb200\n    model: '//models::'\n",
     "4:5: targets[N].model: unknown key 'model' (did you mean 'models'?)"),
    ("  - kind: monitoring\n    name: mon\n    cluster: example-gb200\n    models: '//models::'\n",
     "4:5: targets[N].models: expected a non-empty list of model addresses, got a string"),
    ("  - kind: monitoring\n    name: mon\n    cluster: example-gb200\n    models: ['//nowhere::']\n",
     "4:14: targets[N].models[0]: unknown target //nowhere::"),
])
def test_buildfile_errors_name_the_monitoring_field(tmp_path, body, message):
    root = copy_examples(tmp_path / "examples")
    build = root / "BUILD.yaml"
    text = build.read_text()
    build.write_text(text + body)
    line, col, rest = message.split(":", 2)
    index = sum(1 for ln in text.splitlines() if ln.startswith("  - kind:"))
    message = f"{int(line) + text.count(chr(10))}:{col}:{rest.replace('[N]', f'[{index}]')}"
    proc = cli(root, "list", "//::")
    assert proc.returncode != 0
    assert proc.stderr == f"error: BUILD.yaml:{message}\n"
