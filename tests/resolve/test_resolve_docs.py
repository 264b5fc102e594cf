"""The Plan is the contract between resolution and the renderers: every msgspec Struct under
manifesto/resolve says what it is (issue 26: a reader should not have to find out from the
code that fills it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import msgspec

import manifesto.resolve


def _structs():
    """(qualified name, class) of every Struct defined (not just imported) in manifesto.resolve."""
    found = []
    for info in pkgutil.walk_packages(manifesto.resolve.__path__, "manifesto.resolve."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, msgspec.Struct) and obj.__module__ == info.name:
                found.append((f"{info.name}.{name}", obj))
    return found


def test_the_walk_finds_the_plan():
    names = {name for name, _ in _structs()}
    assert {"manifesto.resolve.plan.Plan", "manifesto.resolve.plan.RolePlan", "manifesto.resolve.plan.Layout",
            "manifesto.resolve.workload.WorkloadPlan", "manifesto.resolve.architecture.Architecture"} <= names
    assert len(names) >= 28


def test_every_resolve_struct_has_a_docstring():
    missing = [name for name, cls in _structs() if not (cls.__dict__.get("__doc__") or "").strip()]
    assert not missing, f"Structs without a docstring: {', '.join(missing)}"
