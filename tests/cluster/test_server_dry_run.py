"""Every Kubernetes artifact in out/ and every golden meets the real API server:
``kubectl apply --server-side --dry-run=server`` after its namespaces exist, 0 rejected.

The server runs what the schema kit cannot: CEL rules of the CRDs, name and label
limits, admission, defaulting and the built-in types' own validation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kit
from realkube import MARKS, documents, namespaces

pytestmark = MARKS

_ROOTS = (kit.REPO_ROOT / "out", kit.REPO_ROOT / "tests" / "golden")


def _artifacts() -> list[Path]:
    files = []
    for root in _ROOTS:
        for path in sorted(root.rglob("*.yaml")):
            if documents(path) and path.name != "cluster.yaml" and path.name != "model.yaml":
                files.append(path)
    return files


ARTIFACTS = _artifacts()


def test_the_artifacts_were_found():
    # out/ holds artifacts of every example cluster and the goldens more: a glob that
    # matched nothing would make the test below pass vacuously.
    assert len([p for p in ARTIFACTS if "golden" in p.parts]) >= 20
    assert len([p for p in ARTIFACTS if "out" in p.parts]) >= 20


@pytest.mark.parametrize("path", ARTIFACTS, ids=lambda p: str(p.relative_to(kit.REPO_ROOT)))
def test_server_side_dry_run_accepts(real_cluster, path: Path):
    docs = documents(path)
    for ns in sorted(namespaces(docs)):
        real_cluster.ensure_namespace(ns)
    result = real_cluster.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(path),
                                  check=False)
    assert result.returncode == 0, f"the API server rejected {path.name}:\n{result.stderr}"
    # One line per object: nothing was skipped.
    applied = [line for line in result.stdout.splitlines() if "serverside-applied" in line]
    assert len(applied) == len(docs), result.stdout


def test_the_server_rejects_what_the_schema_kit_lets_through(real_cluster, tmp_path):
    """The control: a rule only the server runs (the InferencePool CRD's CEL rule that
    ``targetPorts`` hold distinct ports) rejects an object, so an accepting server above
    is an answer, not a server that accepts everything."""
    real_cluster.ensure_namespace("dry-run-control")
    pool = {"apiVersion": "inference.networking.k8s.io/v1", "kind": "InferencePool",
            "metadata": {"name": "control", "namespace": "dry-run-control"},
            "spec": {"selector": {"matchLabels": {"app": "x"}},
                     "targetPorts": [{"number": 8000}, {"number": 8000}],
                     "endpointPickerRef": {"name": "epp", "port": {"number": 9002}}}}
    path = tmp_path / "pool.yaml"
    path.write_text(json.dumps(pool))
    result = real_cluster.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(path), check=False)
    assert result.returncode != 0
    assert "targetPorts" in result.stderr, result.stderr
