"""The compiled schemas (``manifesto.schema.compiled``) against the pydantic models they come from.

Inputs are validated with the compiled schemas only (no pydantic import on the render path,
issue 15); the pydantic models stay the definition. These tests hold the two together:
the committed module is what ``tools/gen_compiled_schema.py`` writes today, every bundled
and upstream input gives the same values both ways, and so do hundreds of broken variants
of them (the same errors, field for field).
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest
from pydantic import ValidationError as PydanticError
from pydantic_core import ValidationError as CoreError

import kit
from manifesto.load.inputs import load_cluster_file, load_model
from manifesto.schema import checks, compiled, validation
from manifesto.schema.cluster import ClusterProfile
from manifesto.schema.model import ModelSpec
from manifesto.schema.routing import EndpointPickerConfig, ImageCatalog
from manifesto.schema.workload import Workload
from manifesto.load.yamlio import load_yaml

REPO = kit.REPO_ROOT
_BAD_VALUES = (None, "x", -1, 0, 10**30, 1.5, True, [], {}, ["x"], {"x": 1}, "a\tb")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_compiled_schema", REPO / "tools" / "gen_compiled_schema.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_module_is_what_the_generator_writes():
    text = _generator().Compiler().source()
    assert (REPO / "manifesto" / "schema" / "compiled.py").read_text() == text, \
        "manifesto/schema/compiled.py is stale: run `uv run python tools/gen_compiled_schema.py`"


def test_the_generator_refuses_a_check_it_cannot_name(monkeypatch):
    gen = _generator()
    compiler = gen.Compiler()
    with pytest.raises(SystemExit, match="is not a function of manifesto.schema.checks or manifesto.util.rules"):
        compiler.callable_name(lambda value: value)


def _inputs() -> list:
    roots = [REPO]
    shared = kit.shared_dir() / "reference" / "upstream-examples"
    if shared.is_dir():
        roots.append(shared)
    cases = []
    for root in roots:
        for path in sorted((root / "clusters").glob("*.yaml")):
            cases.append(pytest.param("cluster", path, id=f"{root.name}/{path.relative_to(root)}"))
        for path in sorted(p for p in (root / "models").rglob("*") if p.is_file() and p.suffix in (".yaml", "")):
            if not path.name.endswith("-base.yaml"):
                cases.append(pytest.param("model", path, id=f"{root.name}/{path.relative_to(root)}"))
        for path in sorted((root / "routing").glob("*.yaml")):
            cases.append(pytest.param("routing", path, id=f"{root.name}/{path.relative_to(root)}"))
        for path in [*(root / "catalog").glob("images.yaml"), *(root / "config").glob("images.yaml")]:
            cases.append(pytest.param("images", path, id=f"{root.name}/{path.relative_to(root)}"))
        for path in sorted((root / "examples").glob("*.yaml")):
            cases.append(pytest.param("workload", path, id=f"{root.name}/{path.relative_to(root)}"))
    return cases


_MODELS = {"cluster": ClusterProfile, "model": ModelSpec, "routing": EndpointPickerConfig, "images": ImageCatalog,
           "workload": Workload}


def _data(kind: str, path: Path):
    """The data a file is validated with: merged and migrated for specs and clusters."""
    if kind == "model":
        return load_model(path)[1].data
    if kind == "cluster":
        return load_cluster_file(path)[1].data
    return load_yaml(path)[0]


def _outcome(model, data):
    """('ok', dump) or ('error', [(type, loc, msg, cause)]) of validating ``data`` one way."""
    try:
        value = validation.validate(model, data) if issubclass(model, checks.Record) else model.model_validate(data)
    except (PydanticError, CoreError) as exc:
        errors = [(e["type"], e["loc"], e["msg"], repr((e.get("ctx") or {}).get("error")),
                   getattr((e.get("ctx") or {}).get("error"), "path", None)) for e in exc.errors(include_url=False)]
        return "error", errors
    return "ok", value.model_dump()


def _both(model, data):
    return _outcome(model, copy.deepcopy(data)), _outcome(validation.compiled_class(model), copy.deepcopy(data))


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, path + (i,))


def _replaced(data, path, new):
    data = copy.deepcopy(data)
    if not path:
        return new
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = new
    return data


@pytest.mark.parametrize(("kind", "path"), _inputs())
def test_every_input_validates_to_the_same_values_both_ways(kind, path):
    data = _data(kind, path)
    pydantic_way, compiled_way = _both(_MODELS[kind], data)
    assert pydantic_way[0] == "ok"
    assert compiled_way == pydantic_way


@pytest.mark.parametrize(("kind", "path"), [p for p in _inputs() if "/clusters/" not in p.id or "gb200" in p.id
                                            or "slurm.yaml" in p.id][:12])
def test_broken_variants_give_the_same_errors_both_ways(kind, path):
    """Every value of a good input replaced by each of a dozen wrong ones, and an unknown key
    added to every mapping: both ways agree on every variant."""
    data = _data(kind, path)
    model = _MODELS[kind]
    checked = 0
    for where in list(_paths(data)):
        variants = [_replaced(data, where, bad) for bad in _BAD_VALUES]
        target = data
        for part in where:
            target = target[part]
        if isinstance(target, dict):
            variants.append(_replaced(data, where, {**target, "unknown_kye": 1}))
        for variant in variants:
            pydantic_way, compiled_way = _both(model, variant)
            assert compiled_way == pydantic_way, (where, variant if not where else None)
            checked += 1
    assert checked > 50


def test_records_are_frozen_compare_by_value_and_dump_like_pydantic():
    data = _data("cluster", REPO / "clusters" / "example-gb200.yaml")
    one, two = validation.validate(compiled.ClusterProfile, data), validation.validate(compiled.ClusterProfile, data)
    assert one == two and one is not two
    with pytest.raises(TypeError, match="ClusterProfile is frozen: name cannot be set"):
        one.name = "other"
    assert one.model_dump(exclude_none=True) == ClusterProfile.model_validate(data).model_dump(exclude_none=True)
    assert one.llm_d.images.model_dump(exclude_none=True) == {}
    assert validation.validate(compiled.Slurm, {}) == validation.validate(compiled.Slurm, {"time": "01:00:00"})
    assert validation.validate(compiled.Slurm, {}).model_fields_set == set()
    import pickle

    again = pickle.loads(pickle.dumps(one))
    assert again == one and type(again) is compiled.ClusterProfile
    assert again.accelerators.profiles["gb200"].allocation.backend == one.accelerators.profiles["gb200"].allocation.backend


def test_field_names_step_through_records_lists_and_maps():
    assert validation.field_names(compiled.ModelSpec, ("roles", 0, "parallelism"))[:2] == ["tp", "pp"]
    assert "gpus_per_node" in validation.field_names(ClusterProfile, ("accelerators", "profiles", "any-name"))
    assert validation.field_names(compiled.ModelSpec, ("vllm",)) == []
    assert validation.field_names(compiled.ModelSpec, ("no_such_field",)) == []
