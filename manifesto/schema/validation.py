"""Validating a value with the compiled schemas (``manifesto.schema.compiled``).

The quick check (``manifesto.schema.quick``) reads data that is plainly right without
pydantic-core; everything else, and so every error, goes to pydantic-core's validator built
from the compiled schemas. The checks those schemas call are ``manifesto.schema.checks``,
which imports neither this module nor the compiled schemas (issue 26: no import cycle).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from manifesto.schema.checks import Record

__all__ = ["compiled_class", "validate", "validation_error", "validator", "field_names"]


def compiled_class(cls: type) -> type:
    """The compiled record class of ``cls``: itself, or the one named after a pydantic model."""
    if issubclass(cls, Record):
        return cls
    from manifesto.schema import compiled

    return getattr(compiled, cls.__name__)


def validate(cls: type, data: Any):
    """``data`` validated as a ``cls`` record (a class of ``manifesto.schema.compiled``, or the
    pydantic model it was compiled from); raises pydantic-core's ``ValidationError``, with the
    errors the pydantic model would give.

    Data that is plainly right is read by the quick check (``manifesto.schema.quick``), which
    gives the value pydantic-core would and spares the process importing it; everything else,
    and so every error, goes to pydantic-core."""
    cls = compiled_class(cls)
    from manifesto.schema.quick import checker

    quick = checker(cls.__name__)
    if quick is not None:
        try:
            return quick(data)
        except Exception:  # noqa: BLE001 - not plainly right (a type, a failed check): pydantic-core decides
            pass
    return validator(cls).validate_python(data)


def validation_error() -> type:
    """pydantic-core's ``ValidationError``, imported when asked for. Use it as
    ``except validation_error() as exc``: Python evaluates that only once something was raised,
    so a process whose inputs are right never imports pydantic-core."""
    from pydantic_core import ValidationError

    return ValidationError


def validator(cls: type):
    """The pydantic-core validator of ``cls`` (built on first use, from the compiled schemas)."""
    return _validator_of(compiled_class(cls))


@lru_cache(maxsize=None)
def _validator_of(cls: type):
    from pydantic_core import SchemaValidator

    from manifesto.schema import compiled

    return SchemaValidator({"type": "definitions", "schema": {"type": "definition-ref", "schema_ref": cls.__name__},
                            "definitions": compiled.definitions()})


def field_names(cls: type, path: tuple) -> list[str]:
    """The fields of the record found at ``path`` below a ``cls`` (through lists, name-keyed
    maps and optional values), for a did-you-mean; [] when there is no record there."""
    from manifesto.schema import compiled

    defs = {d["ref"]: d for d in compiled.definitions()}
    node: Any = defs[compiled_class(cls).__name__]
    for part in path:
        node = _unwrap(node, defs)
        if node.get("type") == "model-fields" and isinstance(part, str) and part in node["fields"]:
            node = node["fields"][part]["schema"]
        elif node.get("type") == "dict" and isinstance(part, str):
            node = node.get("values_schema", {"type": "any"})
        elif node.get("type") in ("list", "tuple") and isinstance(part, int):
            node = node.get("items_schema", {"type": "any"})
        else:
            return []
    node = _unwrap(node, defs)
    return list(node["fields"]) if node.get("type") == "model-fields" else []


def _unwrap(node: dict, defs: dict) -> dict:
    """Through references, defaults, optional values, validator functions and models, down to
    the schema holding the next key: a model's fields, a dict, a list or a leaf."""
    while True:
        kind = node.get("type")
        if kind == "definition-ref":
            node = defs[node["schema_ref"]]
        elif kind in ("default", "nullable", "function-after", "function-before", "function-wrap", "model"):
            node = node["schema"]
        else:
            return node
