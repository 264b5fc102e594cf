"""Reference-parity items of issue 18 that are not monitoring: gateway sizing, the provenance
commit, reference-format keys."""

from __future__ import annotations

import yaml

import kit
from kit import plan_of

GOLDEN = kit.REPO_ROOT / "tests/golden"


def _gateway_patch(cluster_text: str | None = None, tmp_path=None) -> dict:
    from manifesto.render.k8s import objects

    cluster = GOLDEN / "load-aware-gateway/cluster.yaml"
    if cluster_text is not None:
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(cluster_text)
    plan, _, _ = plan_of(GOLDEN / "load-aware-gateway/model.yaml", cluster)
    (cm,) = [o for o in objects(plan) if o["metadata"]["name"].endswith("-gateway-options")]
    return yaml.safe_load(cm["data"]["deployment"])["spec"]["template"]["spec"]["containers"][0]


def test_gateway_proxy_is_production_sized_and_guaranteed_by_default():
    proxy = _gateway_patch()
    assert proxy == {"name": "istio-proxy", "resources": {"requests": {"cpu": "8", "memory": "64Gi"},
                                                         "limits": {"cpu": "8", "memory": "64Gi"}}}


def test_gateway_proxy_size_comes_from_the_cluster_profile(tmp_path):
    text = (GOLDEN / "load-aware-gateway/cluster.yaml").read_text()
    assert "sizing" not in text
    data = yaml.safe_load(text)
    data.setdefault("llm_d", {})["sizing"] = {"gateway_proxy": {"cpu": "2", "memory": "4Gi"}}
    proxy = _gateway_patch(yaml.safe_dump(data), tmp_path)
    assert proxy["resources"] == {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}}
