"""The quick check: a right input validated in plain Python, without pydantic-core.

Every input is validated with the compiled schemas of ``manifesto.schema.compiled``, and
pydantic-core is their authority. Importing it, though, costs a cold ``render manifest``
process about a sixth of its time (issue 15), and nearly every file a user renders is right.
So :func:`manifesto.schema.validation.validate` first walks the same schemas with the checkers
built here, which read the data as the schemas' strict mode does and accept only what is
plainly right: builtin types exactly (``bool`` is not an ``int``, no subclasses), every check
of the schema passing. Whenever a checker is not sure it gives up (raises), and pydantic-core
then validates the data as it always did: the same value, or the same errors.

The one rule that keeps the two ways equal: a value a checker returns is the value
pydantic-core returns for the same data, nested records, defaults, field order and the set of
fields given included. ``tests/schema/test_quick_check.py`` holds them to it on every bundled and
upstream input and on hundreds of broken variants. A schema construct this module does not
know makes the whole schema :class:`Unsupported` (its checker is None: pydantic-core does all
the work), never a guess.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Callable

from manifesto.schema.checks import make

Checker = Callable[[Any], Any]


class GiveUp(Exception):
    """The data is not plainly right: pydantic-core decides, and words the errors."""


class Unsupported(Exception):
    """A schema construct the quick check does not read."""


@lru_cache(maxsize=None)
def checker(name: str) -> Checker | None:
    """The quick checker of the compiled schema ``name`` (a class name of
    ``manifesto.schema.compiled``), or None when its schema uses a construct not read here."""
    try:
        return _builder().ref(name)
    except Unsupported:
        return None


@lru_cache(maxsize=1)
def _builder() -> _Builder:
    """One builder per process: the schemas share definitions, each built once."""
    from manifesto.schema import compiled

    return _Builder({d["ref"]: d for d in compiled.definitions()})


#: The keys each schema construct may have for the quick check to read it (any other, such as
#: a ``pattern`` or a ``strict`` of its own, makes the schema Unsupported).
_KEYS = {kind: frozenset(("type", "ref", *keys)) for kind, keys in {
    "str": ("min_length", "max_length"), "int": (), "bool": (), "float": (), "any": (), "literal": ("expected",),
    "list": ("items_schema", "min_length", "max_length"),
    "dict": ("keys_schema", "values_schema", "min_length", "max_length"),
    "nullable": ("schema",), "union": ("choices",), "definition-ref": ("schema_ref",),
    "function-after": ("function", "schema"), "function-before": ("function", "schema"),
    "model": ("cls", "schema", "custom_init", "root_model", "config"),
    "model-fields": ("fields", "model_name", "computed_fields"), "model-field": ("schema",),
    "default": ("schema", "default", "default_factory", "default_factory_takes_data"),
}.items()}


def _only(node: dict) -> None:
    if not node.keys() <= _KEYS.get(node.get("type"), frozenset()):
        raise Unsupported(f"{node.get('type')} schema with {sorted(set(node) - _KEYS.get(node.get('type'), set()))}")


def _sized(check: Checker, node: dict) -> Checker:
    """``check`` followed by the schema's ``min_length``/``max_length`` (counted as ``len``)."""
    low, high = node.get("min_length"), node.get("max_length")
    if low is None and high is None:
        return check
    low = 0 if low is None else low
    high = float("inf") if high is None else high

    def sized(value):
        out = check(value)
        if not low <= len(out) <= high:
            raise GiveUp
        return out
    return sized


def _exact(kind: type) -> Checker:
    def exact(value):
        if type(value) is not kind:
            raise GiveUp
        return value
    return exact


def _float(value):
    # Strict mode takes a whole number for a float and gives it back as a float.
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        return float(value)
    raise GiveUp


def _any(value):
    return value


class _Builder:
    def __init__(self, definitions: dict[str, dict]) -> None:
        self.definitions = definitions
        self.built: dict[str, list] = {}

    def ref(self, name: str) -> Checker:
        """The checker of definition ``name``, built once (a cell, so a schema may refer to itself)."""
        cell = self.built.get(name)
        if cell is None:
            cell = self.built[name] = [None]
            try:
                cell[0] = self.node(self.definitions[name])
            except Unsupported:
                del self.built[name]  # nor is any schema that refers to it
                raise
        if cell[0] is not None:
            return cell[0]
        return lambda value: cell[0](value)

    def node(self, node: dict) -> Checker:
        kind = node["type"]
        method = getattr(self, "_" + kind.replace("-", "_"), None)
        if method is None:
            raise Unsupported(f"{kind} schema")
        _only(node)
        return method(node)

    # -- scalars ------------------------------------------------------------------------------

    def _str(self, node):
        return _sized(_exact(str), node)

    def _int(self, node):
        return _exact(int)

    def _bool(self, node):
        return _exact(bool)

    def _float(self, node):
        return _float

    def _any(self, node):
        return _any

    def _literal(self, node):
        # Keyed by type as well as value: True is not the literal 1, nor 1.0 the literal 1.
        allowed = {(type(v), v): v for v in node["expected"]}

        def literal(value):
            try:
                return allowed[type(value), value]
            except (KeyError, TypeError):
                raise GiveUp from None
        return literal

    # -- containers ---------------------------------------------------------------------------

    def _list(self, node):
        item = self.node(node.get("items_schema", {"type": "any"}))

        def items(value):
            if type(value) is not list:
                raise GiveUp
            return [item(v) for v in value]
        return _sized(items, node)

    def _dict(self, node):
        key = self.node(node.get("keys_schema", {"type": "any"}))
        val = self.node(node.get("values_schema", {"type": "any"}))

        def mapping(value):
            if type(value) is not dict:
                raise GiveUp
            out = {key(k): val(v) for k, v in value.items()}
            if len(out) != len(value):  # two keys became one: let pydantic-core say what it does
                raise GiveUp
            return out
        return _sized(mapping, node)

    def _nullable(self, node):
        inner = self.node(node["schema"])
        return lambda value: None if value is None else inner(value)

    def _union(self, node):
        choices = [self.node(c) for c in node["choices"]]

        def union(value):
            # The smart mode of pydantic-core: the one member that takes the value; of several,
            # the one that gives back the value's own type (an int stays an int in int | float).
            found = []
            for choice in choices:
                try:
                    found.append(choice(value))
                except Exception:  # noqa: BLE001 - a member that does not take it
                    continue
            if len(found) > 1:
                found = [v for v in found if type(v) is type(value)]
            if len(found) != 1:
                raise GiveUp
            return found[0]
        return union

    # -- references, validators, defaults ---------------------------------------------------------

    def _definition_ref(self, node):
        return self.ref(node["schema_ref"])

    def _function_after(self, node):
        function, inner = self._no_info(node), self.node(node["schema"])
        return lambda value: function(inner(value))

    def _function_before(self, node):
        function, inner = self._no_info(node), self.node(node["schema"])
        return lambda value: inner(function(value))

    @staticmethod
    def _no_info(node) -> Callable:
        spec = node["function"]
        if set(spec) != {"type", "function"} or spec["type"] != "no-info":
            raise Unsupported(f"{spec.get('type')} validator")
        return spec["function"]

    # -- records --------------------------------------------------------------------------------

    def _model(self, node):
        config = node.get("config", {})
        if (node.get("custom_init") or node.get("root_model") or config.get("strict") is not True
                or config.get("extra_fields_behavior") != "forbid" or set(config) - {"strict", "extra_fields_behavior",
                                                                                       "title"}):
            raise Unsupported(f"model {node['cls'].__name__} that is not strict with extra fields forbidden")
        fields = node["schema"]
        _only(fields)
        if fields.get("computed_fields"):
            raise Unsupported("computed fields")
        cls = node["cls"]
        parts = [(name, *self._field(name, field)) for name, field in fields["fields"].items()]
        names = frozenset(fields["fields"])

        def model(value):
            if type(value) is not dict or not names.issuperset(value):
                raise GiveUp  # not a mapping, or a key the record does not have
            out = {}
            for name, check, default in parts:
                if name in value:
                    out[name] = check(value[name])
                elif default is None:
                    raise GiveUp  # a required field is missing
                else:
                    out[name] = default()
            return make(cls, out, set(value))
        return model

    def _field(self, name: str, field: dict) -> tuple[Checker, Callable | None]:
        """A field's checker and the maker of its default (None: the field is required)."""
        _only(field)
        schema = field["schema"]
        if schema["type"] != "default":
            return self.node(schema), None
        _only(schema)
        if schema.get("default_factory_takes_data"):
            raise Unsupported(f"default factory of {name} that takes the data")
        check = self.node(schema["schema"])
        if "default_factory" in schema:
            return check, schema["default_factory"]
        value = schema["default"]
        try:
            hash(value)
        except TypeError:  # pydantic-core gives each record its own copy of a mutable default
            return check, lambda: copy.deepcopy(value)
        return check, lambda: value
