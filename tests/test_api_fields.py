"""``load_spec`` and ``load_cluster`` return the spec's and the profile's own fields as typed,
read-only attributes (``spec.release``, ``spec.roles[0].parallelism.tp``, ``spec.model.id``,
``cluster.accelerators``), as the reference's validated models do; the rendering calls take
them as before.

Every field of every bundled spec and cluster profile is read through the returned object and
compared with the YAML: the file as PyYAML reads it, its ``extends`` chain merged here by the
documented rules (mappings merge key by key, ``$delete`` removes, a ``roles`` mapping overrides
the base's roles by name, anything else replaces)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kit import REPO_ROOT
from manifesto.cluster import Cluster, load_cluster
from manifesto.schema.checks import Record
from manifesto.spec import Spec, load_spec

SPECS = sorted(p for p in (REPO_ROOT / "models").rglob("*.yaml") if not p.name.endswith("-base.yaml"))
CLUSTERS = sorted((REPO_ROOT / "clusters").glob("*.yaml"))
DELETE = "$delete"


def _merge(base, over, path=()):
    if path == ("roles",) and isinstance(over, dict) and isinstance(base, list):
        out = list(base)
        names = [r["name"] for r in base]
        for name, value in over.items():
            i = names.index(name)
            out[i] = None if value == DELETE else _merge(base[i], value, ("roles", i))
        return [r for r in out if r is not None]
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            if value == DELETE:
                out.pop(key, None)
            else:
                out[key] = _merge(base[key], value, (*path, key)) if key in base else value
        return out
    return over


def _yaml_of(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    parent = data.pop("extends", None)
    if parent is None:
        return data
    return _merge(_yaml_of((path.parent / parent).resolve()), data)


def _compare(value, expected, where: str, seen: list[str]) -> None:
    """``value`` (read through attributes for a record, by key for a mapping field) holds
    ``expected`` (YAML data) at every leaf; ``seen`` collects the leaves compared."""
    if isinstance(expected, dict):
        assert isinstance(value, (Record, dict)), (where, value)
        for key, item in expected.items():
            got = getattr(value, key) if isinstance(value, Record) else value[key]
            _compare(got, item, f"{where}.{key}", seen)
    elif isinstance(expected, list):
        assert isinstance(value, (list, tuple)) and len(value) == len(expected), (where, value)
        for i, (got, item) in enumerate(zip(value, expected)):
            _compare(got, item, f"{where}[{i}]", seen)
    else:
        assert value == expected and type(value) is type(expected), (where, value, expected)
        seen.append(where)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_field_of_every_bundled_spec_reads_as_in_its_yaml(path):
    spec = load_spec(path)
    assert isinstance(spec, Spec)
    expected = _yaml_of(path)
    seen: list[str] = []
    for key, value in expected.items():
        _compare(getattr(spec, key), value, key, seen)
    assert len(seen) >= 5 and "release" in seen, seen
    assert spec.release == expected["release"] and spec.model.id == expected["model"]["id"]


@pytest.mark.parametrize("path", CLUSTERS, ids=lambda p: p.name)
def test_every_field_of_every_bundled_cluster_reads_as_in_its_yaml(path):
    cluster = load_cluster(path)
    assert isinstance(cluster, Cluster)
    expected = yaml.safe_load(path.read_text())
    seen: list[str] = []
    for key, value in expected.items():
        _compare(getattr(cluster, key), value, key, seen)
    assert "name" in seen and any(s.startswith("accelerators.") for s in seen), seen


def test_the_documented_reads_and_that_they_are_read_only():
    cluster = load_cluster("example-gb200")
    spec = load_spec("qwen/qwen3-0.6b", cluster)
    assert (spec.release, spec.model.id, spec.roles[0].parallelism.tp) == ("qwen3-0-6b", "Qwen/Qwen3-0.6B", 1)
    assert spec.roles[0].name == "decode" and spec.routing.kind == "disabled"
    assert cluster.accelerators.default == "gb200" and cluster.accelerators.profiles["gb200"].gpus_per_node == 4
    assert cluster.name == "example-gb200" and cluster.platform == "kubernetes"
    assert {"release", "roles", "model", "path", "files", "where"} <= set(dir(spec))
    assert "accelerators" in dir(cluster)
    for obj, field in ((spec, "release"), (spec, "roles"), (cluster, "accelerators"), (spec.model, "id"),
                       (spec.roles[0].parallelism, "tp"), (cluster.accelerators, "default")):
        with pytest.raises((AttributeError, TypeError)):
            setattr(obj, field, None)
    with pytest.raises(AttributeError, match="no attribute 'relase'.*release"):
        spec.relase  # noqa: B018  (a typo names the fields there are)
    with pytest.raises(AttributeError, match="no attribute 'accelerator'"):
        cluster.accelerator  # noqa: B018


def test_the_rendering_calls_take_them():
    from manifesto.render import render, render_kubernetes

    cluster = load_cluster("example-gb200")
    spec = load_spec("qwen/qwen3-0.6b", cluster)
    objects = render_kubernetes(spec, user="u", cluster=cluster, namespace="ns")
    (deployment,) = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("decode")]
    assert deployment["metadata"]["namespace"] == "ns"
    assert render(spec, user="u", cluster=cluster, namespace="ns").startswith("# Generated by")
    plan, files = spec.resolve(cluster, __import__("manifesto.resolve.plan", fromlist=["Options"]).Options(
        user="u", namespace="ns"))
    assert plan.release == spec.release and str(spec.path) in files
