"""Circuit breakers of the standalone Envoy: both upstream clusters (the endpoint picker's
ext_proc stream and the picked model server) get the same limits, 40,000 by default (the value
llm-d's standalone Envoy uses) instead of Envoy's 1,024, and a cluster profile may change them."""

from __future__ import annotations

import textwrap

import yaml

import kit
from kit import cli_in_process, plan_of

CLUSTERS = kit.REPO_ROOT / "clusters"
FIELDS = ("max_connections", "max_pending_requests", "max_requests", "max_retries")


def _limits(config: dict) -> dict[str, dict]:
    """Limits of the upstream clusters that carry requests (not Envoy's own loopback admin, which
    serves the stats route)."""
    return {c["name"]: c["circuit_breakers"]["thresholds"][0] for c in config["static_resources"]["clusters"]
            if c["name"] != "envoy-admin"}


def test_both_clusters_default_to_forty_thousand():
    from manifesto.render.envoy import envoy_config

    limits = _limits(envoy_config(8081, 9002, "32Mi"))
    assert limits == {"endpoint-picker": dict.fromkeys(FIELDS, 40000), "picked-endpoint": dict.fromkeys(FIELDS, 40000)}


def _routed(tmp_path, cluster_extra: str = ""):
    model = tmp_path / "m.yaml"
    model.write_text(textwrap.dedent("""\
        release: lim
        model: {id: Qwen/Qwen3-0.6B, image_ref: vllm.standard}
        routing: {kind: load_aware, target_role: decode}
        runtime: {sidecars: []}
        roles:
          - name: decode
            parallelism: {dp: 2}
        """))
    cluster = tmp_path / "c.yaml"
    cluster.write_text((CLUSTERS / "example-stateless-b200.yaml").read_text() + cluster_extra)
    return model, cluster


def _rendered_envoy(model, cluster) -> dict:
    out = cli_in_process("render", "manifest", str(model), "--cluster", str(cluster), "-n", "ns", "--user", "u")
    assert out.returncode == 0, out.stderr
    doc = next(d for d in yaml.safe_load_all(out.stdout) if d and d["metadata"]["name"] == "lim-envoy-config")
    return yaml.safe_load(doc["data"]["envoy.yaml"])


def test_cluster_sizing_sets_the_limit_of_the_rendered_envoy(tmp_path):
    model, cluster = _routed(tmp_path, "llm_d:\n  sizing:\n    envoy: {circuit_breaker_limit: 100000}\n")
    assert plan_of(model, cluster)[0].routing_sizing.envoy_circuit_limit == 100000
    limits = _limits(_rendered_envoy(model, cluster))
    assert set(limits) == {"endpoint-picker", "picked-endpoint"}
    assert all(v == dict.fromkeys(FIELDS, 100000) for v in limits.values())
    model, cluster = _routed(tmp_path)
    assert _limits(_rendered_envoy(model, cluster))["endpoint-picker"] == dict.fromkeys(FIELDS, 40000)


def test_slurm_router_envoy_carries_the_limits(tmp_path):
    model, _ = _routed(tmp_path)
    out = cli_in_process("render", "manifest", str(model), "--cluster", str(CLUSTERS / "example-slurm.yaml"),
                         "-n", "ns")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("max_pending_requests: 40000") == 2


def test_limit_is_validated(tmp_path):
    model, cluster = _routed(tmp_path, "llm_d:\n  sizing:\n    envoy: {circuit_breaker_limit: 0}\n")
    out = cli_in_process("config", "validate", str(model), "--cluster", str(cluster), "-n", "ns")
    assert out.returncode == 1
    assert kit.scrub(out.stderr, tmp_path).endswith(
        "llm_d.sizing.envoy.circuit_breaker_limit: 0 must be a whole number from 1 to 2147483647 "
        "(Envoy's 32-bit circuit-breaker thresholds)\n"), out.stderr
