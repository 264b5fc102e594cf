"""``pod_defaults.image_pull_policy`` reaches every container the cluster's pods run: the model
server, the P/D routing proxy, the endpoint picker and Envoy, the metrics exporters, the
idle-shutdown controller and the end-to-end probe; with none set, no container names one."""

from __future__ import annotations

import pytest
import yaml

from kit import REPO_ROOT, plan_of
from manifesto.ops.e2e import e2e_job
from manifesto.render import k8s_objects


def _containers(node):
    """Every container and init container of every pod template under ``node``."""
    if isinstance(node, dict):
        if "containers" in node:
            yield from (c for part in ("initContainers", "containers") for c in node.get(part) or ())
        for value in node.values():
            yield from _containers(value)
    elif isinstance(node, list):
        for value in node:
            yield from _containers(value)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("pull")
    (d / "pd.yaml").write_text(f"extends: {REPO_ROOT / 'models/qwen/qwen3-0.6b-pd.yaml'}\n"
                               "runtime: {sidecars: [dcgm-exporter, node-exporter]}\n")
    cluster = yaml.safe_load((REPO_ROOT / "clusters/example-gb200.yaml").read_text())
    assert "image_pull_policy" not in (cluster.get("pod_defaults") or {})
    (d / "none.yaml").write_text(yaml.safe_dump(cluster, sort_keys=False))
    cluster.setdefault("pod_defaults", {})["image_pull_policy"] = "Always"
    (d / "always.yaml").write_text(yaml.safe_dump(cluster, sort_keys=False))
    return d


def test_every_container_gets_the_clusters_pull_policy(pair):
    plan, spec, _ = plan_of(pair / "pd.yaml", pair / "always.yaml")
    containers = list(_containers(k8s_objects(plan, spec)))
    names = {c["name"] for c in containers}
    assert {"vllm", "routing-proxy", "epp", "envoy", "dcgm-exporter", "node-exporter", "controller"} <= names
    assert {c["name"]: c.get("imagePullPolicy") for c in containers} == dict.fromkeys(names, "Always")
    (probe,) = _containers(e2e_job(plan, "python:3.12-alpine", 60))
    assert probe["imagePullPolicy"] == "Always"


def test_no_pull_policy_when_the_cluster_sets_none(pair):
    plan, spec, _ = plan_of(pair / "pd.yaml", pair / "none.yaml")
    containers = list(_containers(k8s_objects(plan, spec)))
    assert len({c["name"] for c in containers}) >= 7
    assert [c["name"] for c in containers if "imagePullPolicy" in c] == []
    assert "imagePullPolicy" not in next(_containers(e2e_job(plan, "python:3.12-alpine", 60)))
