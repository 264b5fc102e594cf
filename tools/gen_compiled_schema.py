#!/usr/bin/env python3
"""Compile the input schemas (pydantic models) into ``manifesto/schema/compiled.py``.

The pydantic models in ``manifesto.schema`` are the one definition of what a spec, cluster
profile, routing profile, image catalog and workload may hold. Building them costs a
process about 100 ms (importing pydantic, creating the model classes, generating their
pydantic-core schemas), which is most of a cold ``manifesto render manifest``. This script
does that once: it takes each model's pydantic-core schema, as pydantic generated it, and
writes it out as Python literals, with

* every model's schema once, as a definition named after the model (``definition-ref``
  where pydantic inlined it);
* a plain ``checks.Record`` class (plus the model's mixins from ``manifesto.schema.checks``)
  where the schema names the pydantic model class;
* the model defaults (``default_of``) as functions building the same records;
* ``metadata`` and ``serialization`` (JSON Schema and dump hooks) left out: nothing loads
  with them.

Every check in the schemas is a function or callable object of ``manifesto.schema.checks``
or ``manifesto.util.rules``; anything else is refused here, so a model cannot grow a check the
compiled schema would lose. Run it after changing a model, and commit the output:

    uv run python tools/gen_compiled_schema.py          # writes manifesto/schema/compiled.py
    uv run python tools/gen_compiled_schema.py --check  # exit 1 when the file is stale

``tests/schema/test_compiled_schema.py`` runs ``--check`` and compares the two paths on every input.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "manifesto" / "schema" / "compiled.py"
sys.path.insert(0, str(ROOT))

#: The top-level schemas a file is validated with (and, through them, every nested model).
TOP = ("manifesto.schema.cluster:ClusterProfile", "manifesto.schema.model:ModelSpec",
       "manifesto.schema.routing:EndpointPickerConfig", "manifesto.schema.routing:ImageCatalog",
       "manifesto.schema.workload:Workload")

_DROPPED_KEYS = ("metadata", "serialization")


class Compiler:
    def __init__(self) -> None:
        from pydantic import BaseModel

        self.base = BaseModel
        self.models: dict[str, type] = {}  # name -> pydantic class, in first-seen order
        self.definitions: dict[str, dict] = {}
        self.defaults: dict[str, type] = {}  # default function name -> model
        self.names_by_ref: dict[str, str] = {}

    # -- schema walk ----------------------------------------------------------------------------

    def model_name(self, cls: type) -> str:
        name = cls.__name__
        seen = self.models.setdefault(name, cls)
        if seen is not cls:
            raise SystemExit(f"two schema models are named {name}: {seen.__module__} and {cls.__module__}")
        return name

    def ref_name(self, ref: str) -> str:
        name = self.names_by_ref.get(ref)
        if name is None:
            name = re.sub(r":\d+$", "", ref).rsplit(".", 1)[-1]
            if name in self.names_by_ref.values():
                raise SystemExit(f"two schema definitions are named {name}")
            self.names_by_ref[ref] = name
        return name

    def walk(self, node):
        if isinstance(node, dict):
            if node.get("type") == "definitions":
                for definition in node["definitions"]:
                    self.walk(definition)
                return self.walk(node["schema"])
            if node.get("type") == "definition-ref":
                return {"type": "definition-ref", "schema_ref": self.ref_name(node["schema_ref"])}
            dropped = _DROPPED_KEYS if "type" in node else ()  # a schema's hooks, not a field named metadata
            out = {k: self.walk(v) for k, v in node.items() if k not in dropped and k != "ref"}
            if node.get("type") == "model":
                out["cls"] = Model(self.model_name(node["cls"]))
            if isinstance(node.get("default_factory"), type) and issubclass(node["default_factory"], self.base):
                out["default_factory"] = self.default_of(node["default_factory"])  # default_of: a validated default
            if "ref" in node:
                name = self.ref_name(node["ref"])
                if name not in self.definitions:
                    self.definitions[name] = None  # placeholder: keeps first-seen order, stops recursion
                    self.definitions[name] = {**out, "ref": name}
                return {"type": "definition-ref", "schema_ref": name}
            return out
        if isinstance(node, list):
            return [self.walk(v) for v in node]
        if isinstance(node, tuple):
            return tuple(self.walk(v) for v in node)
        if callable(node) and not isinstance(node, type):
            return self.function(node)
        return node

    def function(self, fn):
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, type) and issubclass(owner, self.base) and fn.__name__ == "model_construct":
            return self.default_of(owner)
        return Code(self.callable_name(fn))

    def default_of(self, cls: type) -> "Code":
        name = f"_default_{self.model_name(cls)}"
        self.defaults[name] = cls
        return Code(name)

    def callable_name(self, fn) -> str:
        from manifesto.util import rules
        from manifesto.schema import checks

        if fn in (dict, list):
            return fn.__name__
        if isinstance(fn, (checks.Rule, checks.Each, checks.AtLeast)):
            return repr(fn)
        module = getattr(fn, "__module__", None)
        name = getattr(fn, "__qualname__", "")
        for mod, prefix in ((checks, "checks"), (rules, "rules")):
            if module == mod.__name__ and "." not in name and getattr(mod, name, None) is fn:
                return f"{prefix}.{name}"
        raise SystemExit(f"{fn!r} is not a function of manifesto.schema.checks or manifesto.util.rules: move the check "
                         "there so the compiled schema can name it")

    # -- output -----------------------------------------------------------------------------------

    def source(self) -> str:
        import pydantic
        import pydantic_core

        tops = []
        for spec in TOP:
            module, name = spec.split(":")
            cls = getattr(__import__(module, fromlist=[name]), name)
            cls.model_rebuild()
            tops.append(name)
            top = self.walk(cls.__pydantic_core_schema__)
            if top != {"type": "definition-ref", "schema_ref": name}:
                self.definitions.setdefault(name, {**top, "ref": name})
        lines = [
            f'"""The input schemas compiled by tools/gen_compiled_schema.py (pydantic {pydantic.VERSION}, pydantic-core',
            f'{pydantic_core.__version__}) from the models of manifesto.schema. Generated: do not edit; run',
            '``uv run python tools/gen_compiled_schema.py`` after changing a model.',
            "",
            "Loading an input uses this module and pydantic-core only (``manifesto.schema.validation.validate``).",
            '"""',
            "",
            "# ruff: noqa: E501",
            "from manifesto.util import rules",
            "from manifesto.schema import checks",
            "from manifesto.schema.checks import AtLeast, Each, Rule, make",
            "",
            f"__all__ = {sorted(self.models)!r}",
            "",
            "#: The schemas a whole file is validated with.",
            f"TOP = {tuple(tops)!r}",
        ]
        written: set[str] = set()
        for name in list(self.models):
            lines += self.class_source(name, written)
        lines.append("")
        for name, cls in self.models.items():
            lines += [f"{name}.{var} = {emit(getattr(cls, var), 0)}" for var in sorted(cls.__class_vars__)]
        for name, cls in sorted(self.defaults.items()):
            lines += ["", "", f"def {name}():", f"    return {emit(_default_value(cls, self), 4)}"]
        roots = list(self.definitions.values())
        shared = _shared_parts(roots)
        if shared:
            lines += ["", "", "# Parts that several schemas hold (a field type used in many places), written once."]
        for value, name in shared.values():
            lines.append(f"{name} = {emit(value, 0, shared, name)}")
        lines += ["", "", "def definitions() -> list:",
                  '    """Every model\'s pydantic-core schema, as a definition named after it: a new list each',
                  '    call, whose parts may be shared between calls (read them, never change them)."""',
                  "    return ["]
        lines += [f"        {emit(d, 8, shared)}," for d in roots]
        lines += ["    ]", ""]
        return "\n".join(lines)

    def class_source(self, name: str, written: set[str]) -> list[str]:
        """The class of model ``name``, after the classes of its model bases."""
        if name in written:
            return []
        written.add(name)
        cls = self.models[name]
        bases = [b for b in (self.base_name(b) for b in cls.__bases__) if b]
        lines = []
        for base in bases:
            if base in self.models:
                lines += self.class_source(base, written)
        if not any(b in self.models for b in bases):
            bases.insert(0, "checks.Record")
        return lines + ["", "", f"class {name}({', '.join(bases)}):", "    __slots__ = ()"]

    def base_name(self, base: type) -> str | None:
        from manifesto.schema import checks

        if base is object or base.__module__.startswith("pydantic"):
            return None
        if issubclass(base, self.base):
            if base.__module__ == "manifesto.schema.base":  # Strict: the configuration, not a model
                return None
            return self.model_name(base)
        if getattr(checks, base.__name__, None) is base:
            return f"checks.{base.__name__}"
        raise SystemExit(f"{base!r}: a schema model's mixin must be a class of manifesto.schema.checks")


class Model:
    """A model class in the schema, written as its compiled class."""

    def __init__(self, name: str) -> None:
        self.name = name


class Code:
    """Python source written as is."""

    def __init__(self, text: str) -> None:
        self.text = text


class Made:
    """A default record: ``make(Class, {...})``."""

    def __init__(self, name: str, fields: dict) -> None:
        self.name, self.fields = name, fields


def _default_value(cls: type, compiler: Compiler) -> Made:
    """The record a model's default holds: what ``cls.model_construct()`` (no model validators)
    or ``cls()`` builds, field by field."""
    value = cls() if cls.__pydantic_decorators__.model_validators else cls.model_construct()
    return _record(value, compiler)


def _record(value, compiler: Compiler):
    if isinstance(value, compiler.base):
        return Made(compiler.model_name(type(value)),
                    {k: _record(v, compiler) for k, v in value.__dict__.items()})
    if isinstance(value, dict):
        return {k: _record(v, compiler) for k, v in value.items()}
    if isinstance(value, list):
        return [_record(v, compiler) for v in value]
    return value


def _shared_parts(roots: list) -> dict:
    """The schema parts (mappings of some size) that occur more than once in ``roots``:
    their source text -> (the part, the name it is written under), inner parts first, so each
    name is defined before a part that uses it."""
    counts: dict[str, int] = {}
    order: list[tuple[str, dict]] = []

    def visit(node) -> None:
        if isinstance(node, dict):
            for value in node.values():
                visit(value)
            text = _inline(node)
            if len(text) >= 60:
                counts[text] = counts.get(text, 0) + 1
                if counts[text] == 1:
                    order.append((text, node))
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for root in roots:
        visit(root)
    repeated = [(text, node) for text, node in order if counts[text] > 1]
    return {text: (node, f"_P{i}") for i, (text, node) in enumerate(repeated, 1)}


def emit(value, indent: int, shared: dict | None = None, defining: str = "") -> str:
    """``value`` as Python source, one line per dict entry below the top when it is long;
    a part of ``shared`` (see ``_shared_parts``) is written as its name, except the one
    being ``defining``."""
    text = _inline(value)
    if shared and text in shared and shared[text][1] != defining:
        return shared[text][1]
    if len(text) + indent <= 116 and not (shared and isinstance(value, (dict, list)) and _holds_shared(value, shared)):
        return text
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = [f"{pad}{k!r}: {emit(v, indent + 4, shared)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list):
        return "[\n" + "\n".join(f"{pad}{emit(v, indent + 4, shared)}," for v in value) + "\n" + " " * indent + "]"
    if isinstance(value, Made):
        return f"make({value.name}, {emit(value.fields, indent)})"
    return text


def _holds_shared(value, shared: dict) -> bool:
    """Whether a shared part is somewhere inside ``value`` (it must then be written by name)."""
    children = value.values() if isinstance(value, dict) else value
    for child in children:
        if isinstance(child, (dict, list)) and (_inline(child) in shared or _holds_shared(child, shared)):
            return True
    return False


def _inline(value) -> str:
    if isinstance(value, Model):
        return value.name
    if isinstance(value, Code):
        return value.text
    if isinstance(value, Made):
        return f"make({value.name}, {_inline(value.fields)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_inline(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, frozenset):
        return "frozenset({" + ", ".join(repr(v) for v in sorted(value)) + "})"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, type):
        return value.__name__
    raise SystemExit(f"cannot write {value!r} ({type(value).__name__}) into the compiled schema")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed file differs")
    args = parser.parse_args()
    text = Compiler().source()
    if args.check:
        if OUTPUT.read_text() != text:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run `uv run python tools/gen_compiled_schema.py` "
                  "and commit it", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
