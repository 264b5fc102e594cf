"""Load and validate input files: YAML with positions -> merged plain data -> validated records
(the schemas compiled into ``manifesto.schema.compiled``).

``extends`` chains are followed relative to each file, mappings deep-merge, ``$delete``
removes an inherited key, and an override file may write ``roles`` as a map keyed by role
name, each entry merged into the base role of that name. Every error carries the
file:line:col of the key it is about.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeVar

from manifesto.errors import ExtendsError, ManifestoError, Origin, SchemaError, did_you_mean, show_value
from manifesto.errors import format_path
from manifesto.load.yamlio import Locations, file_problem, load_yaml, outside_problem

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Loaded", "LoadedSpec", "load_model_data", "validate", "load_model", "load_cluster_file", "load_typed",
           "DELETE"]

DELETE = "$delete"
T = TypeVar("T")


class Loaded:
    """Merged plain data of one input, its positions, and every file that was read."""

    __slots__ = ("data", "locs", "files", "warnings", "_yaml")

    def __init__(self, data: Any, locs: Locations, files: list[str], warnings: tuple[str, ...] = ()) -> None:
        self.data = data
        self.locs = locs
        self.files = files
        # The reference spellings loading mapped or dropped, as the lines to say: data, said by the
        # caller (``errors.say_warnings``), never written here.
        self.warnings = warnings
        self._yaml = None  # (the data it was written from, its YAML)

    def yaml(self) -> str:
        """``data`` as YAML (``util.yamlemit.dump_yaml``: what a provenance header shows),
        written once per object: loaded data is never changed (a build's pairs share it, and
        a cluster's is in the header of every pair it runs)."""
        kept = self._yaml
        if kept is None or kept[0] is not self.data:
            from manifesto.util.yamlemit import dump_yaml

            kept = self._yaml = (self.data, dump_yaml(self.data))
        return kept[1]


class LoadedSpec:
    """A validated model spec (``validated``, a ``schema.compiled.ModelSpec``), its merged data
    and positions (``loaded``), and the path it was found at: what the tasks load and
    resolve. The public API's ``manifesto.spec.Spec`` is this, plus the cluster it was loaded
    for, ``resolve``, which runs the tasks (a layer above them), and the spec's own fields as
    its attributes (``spec.model`` is the spec's ``model:``, so the record is ``validated``)."""

    __slots__ = ("validated", "loaded", "path")

    def __init__(self, validated, loaded: Loaded, path: str) -> None:
        self.validated = validated
        self.loaded = loaded
        self.path = path

    @property
    def files(self) -> list[str]:
        return self.loaded.files

    def where(self, path: tuple):
        return self.loaded.locs.find(path)


def display_name(path: str | Path) -> str:
    """Paths below the working directory print relative; others print as given."""
    p = str(path)
    if os.path.isabs(p):
        try:
            rel = os.path.relpath(p)
        except ValueError:
            return p
        return p if rel.startswith("..") else rel
    return p


def load_model_data(path: str | Path, _chain: tuple[str, ...] = (), _via: Origin | None = None,
                    within: tuple[str, ...] = (), parse=None) -> Loaded:
    """Load a model spec and its ``extends`` parents, merged (no schema validation yet);
    ``within``: the only directories they may be read from (``yamlio.confinement``).

    ``_via`` is the ``extends:`` line that led here, so a cycle points at the line closing it.
    ``parse(path, display name, within) -> (data, locations)`` reads one file (``load_yaml``
    by default; a build passes one that parses each file once). Its results are never mutated.
    """
    real = os.path.realpath(path)
    name = display_name(path)
    if real in _chain:
        names = [display_name(p) for p in _chain[_chain.index(real):]] + [name]
        raise ExtendsError(
            "this closes an extends cycle: " + " -> ".join(names)
            + ". To fix this, remove this extends line or point it at a file outside the chain.",
            _via or Origin(name), "extends" if _via else "",
        )
    data, locs = (parse or load_yaml)(path, name, within)
    if not isinstance(data, dict):
        raise SchemaError([ManifestoError("expected a mapping at the top of a model spec", locs.find(()))])
    data, locs, said = _legacy(data, locs, _spec_renames)  # a copy when a reference spelling is mapped
    with carrying(said):
        parent = data.get("extends")
        if "extends" in data:
            data = {k: v for k, v in data.items() if k != "extends"}
        if parent is None:
            return Loaded(_strip_deletes(data), locs, [real], said)
        origin = locs.find(("extends",))
        if not isinstance(parent, str) or not parent:
            raise ExtendsError(f"expected the path of a YAML file (relative to this file, or absolute), got "
                               f"{show_value(parent)}", origin, "extends")
        parent_path = os.path.join(os.path.dirname(path), parent)
        problem = file_problem(parent_path)
        if problem:
            shown = parent_path if parent_path.isprintable() else repr(parent_path)  # one line, no raw control bytes
            raise ExtendsError(f"{problem}: {shown}", origin, "extends")
        problem = outside_problem(parent_path, within)
        if problem:
            raise ExtendsError(f"{parent} {problem}", origin, "extends")
        base = load_model_data(parent_path, _chain + (real,), origin, within, parse)
        merged = merge(base, Loaded(data, locs, []))
        merged.files = base.files + [real]
        merged.warnings = said + base.warnings  # in the order they were found: this file's first
        return merged


def merge(base: Loaded, over: Loaded) -> Loaded:
    """Deep-merge ``over`` onto ``base``; positions follow the values that win."""
    locs = Locations(over.locs.file, dict(base.locs.table))
    data = _merge_value(base.data, over.data, (), locs, over.locs)
    return Loaded(data, locs, [])


def _merge_value(base: Any, over: Any, path: tuple, locs: Locations, over_locs: Locations) -> Any:
    if path == ("roles",) and isinstance(over, dict) and isinstance(base, list):
        return _merge_roles(base, over, locs, over_locs)
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            sub = path + (key,)
            if value == DELETE:
                out.pop(key, None)
                continue
            if key in base:
                out[key] = _merge_value(base[key], value, sub, locs, over_locs)
            else:
                out[key] = _strip_deletes(value)
                locs.graft(sub, over_locs.sub(sub))
            locs.table[sub] = over_locs.find(sub)
        return out
    locs.graft(path, over_locs.sub(path))
    return _strip_deletes(over)


def _merge_roles(base: list, over: dict, locs: Locations, over_locs: Locations) -> list:
    out = list(base)
    names = [r.get("name") if isinstance(r, dict) else None for r in base]
    for name, value in over.items():
        origin = over_locs.find(("roles", name))
        if name not in names:
            known = [n for n in names if n]
            raise SchemaError([ManifestoError(
                f"no base role named '{name}'{did_you_mean(name, known)}; base roles: {', '.join(known)}",
                origin, f"roles.{name}",
            )])
        index = names.index(name)
        if value == DELETE:
            out[index] = None
            continue
        if not isinstance(value, dict):
            raise SchemaError([ManifestoError("a role override must be a mapping", origin, f"roles.{name}")])
        # Re-root the override's positions from roles.<name> to roles[<index>].
        moved = Locations(over_locs.file, {("roles", index) + k: v for k, v in over_locs.sub(("roles", name)).table.items()})
        moved.table[("roles", index)] = origin
        out[index] = _merge_value(base[index], value, ("roles", index), locs, moved)
    return [r for r in out if r is not None]


def _strip_deletes(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_deletes(v) for k, v in value.items() if v != DELETE}
    if isinstance(value, list):
        return [_strip_deletes(v) for v in value]
    return value


def validate(model_cls: type[T], loaded: Loaded) -> T:
    """Validate merged data as ``model_cls`` (a compiled schema class of
    ``manifesto.schema.compiled``, or the pydantic model of that name); all field errors
    reported together.

    Before the schema, every string and number is scanned (``scan_values``); after it,
    embedded documents such as an inline ``routing.plugin_config`` are validated against
    their own schema (``EMBEDDED`` on the model class).
    """
    from manifesto.schema.validation import compiled_class, validate as check, validation_error

    model_cls = compiled_class(model_cls)
    if not isinstance(loaded.data, dict):
        # Its text is not shown: a file that is not a YAML mapping may be anything (a key, a token).
        raise SchemaError([ManifestoError(f"expected a YAML mapping at the top of the file, got {_kind(loaded.data)}",
                                          loaded.locs.find(()))])
    errors = scan_values(loaded, getattr(model_cls, "MULTILINE", None))
    result = None
    try:
        result = check(model_cls, loaded.data)
    except validation_error() as exc:
        errors += convert_errors(exc, model_cls, loaded)
    else:
        errors += _embedded_errors(model_cls, loaded)
    if errors:
        raise SchemaError(_unique_sorted(errors))
    return result


def _unique_sorted(errors: list[ManifestoError]) -> list[ManifestoError]:
    seen: set[str] = set()
    out = []
    for e in errors:
        if e.path not in seen:
            seen.add(e.path)
            out.append(e)
    out.sort(key=lambda e: (e.origin.file, e.origin.line, e.origin.col) if e.origin else ("", 0, 0))
    return out


def scan_values(loaded: Loaded, multiline: frozenset[str] | None) -> list[ManifestoError]:
    """Values no field may hold, whatever its type: control characters, NaN and infinities,
    and line breaks or tabs outside the fields named in ``multiline`` (None: anywhere).

    YAML happily reads ``"\\0"``, ``"a\\nb"`` and ``.nan``; no artifact should carry them
    into a name, a ``#SBATCH`` line or a vLLM JSON argument.
    """
    import math

    from manifesto.util.rules import control_char

    out: list[ManifestoError] = []
    stack: list[tuple[tuple, Any, bool]] = [((), loaded.data, multiline is None)]
    while stack:
        path, value, free = stack.pop()
        problem = None
        if isinstance(value, str):
            problem = control_char(value)
            problem = problem and f"{show_value(value)} {problem}"
            if problem is None and not free and ("\n" in value or "\t" in value):
                problem = f"{show_value(value)} must be one line (no line breaks or tabs)"
        elif isinstance(value, float) and not math.isfinite(value):
            problem = f"expected a finite number, got {show_value(value)}"
        elif isinstance(value, dict):
            for key, item in value.items():
                bad = control_char(key) or ("\n" in key or "\t" in key) and "contains a line break or tab"
                if bad:
                    out.append(ManifestoError(f"key {show_value(key)} {bad}", loaded.locs.find(path + (key,)),
                                              format_path(path + (key,))))
                stack.append((path + (key,), item, free or (multiline is not None and key in multiline)))
        elif isinstance(value, list):
            stack.extend((path + (i,), item, free) for i, item in enumerate(value))
        if problem:
            out.append(ManifestoError(problem, loaded.locs.find(path), format_path(path)))
    return out


def _embedded_errors(model_cls: type, loaded: Loaded) -> list[ManifestoError]:
    """Validate sub-documents named by ``model_cls.EMBEDDED`` ((path, schema) pairs; ``*``
    matches every key of a mapping) with their own schema, errors placed in this file."""
    from manifesto.schema.validation import validate as check, validation_error

    out: list[ManifestoError] = []
    for pattern, schema in getattr(model_cls, "EMBEDDED", ()):
        for path, sub in _matches(loaded.data, tuple(pattern), ()):
            part = Loaded(sub, loaded.locs.sub(path), [])
            try:
                check(schema, sub)
            except validation_error() as exc:
                for e in convert_errors(exc, schema, part):
                    inner = "" if not e.path else e.path if e.path.startswith("[") else "." + e.path
                    out.append(ManifestoError(e.message, e.origin, format_path(path) + inner))
    return out


def _matches(data: Any, pattern: tuple, path: tuple):
    if not pattern:
        if data is not None:
            yield path, data
        return
    if not isinstance(data, dict):
        return
    keys = list(data) if pattern[0] == "*" else [pattern[0]] if pattern[0] in data else []
    for key in keys:
        yield from _matches(data[key], pattern[1:], path + (key,))


def _kind(value: Any) -> str:
    """What a value is, never what it says."""
    if isinstance(value, str):
        return "text"
    return "nothing (an empty file)" if value is None else show_value(value)


def load_typed(model_cls: type[T], path: str | Path, within: tuple[str, ...] = (), parse=None) -> tuple[T, Loaded]:
    """Load and validate a single (non-extending) YAML file (``parse``: see load_model_data)."""
    real = os.path.realpath(path)
    data, locs = (parse or load_yaml)(path, display_name(path), within)
    loaded = Loaded(data, locs, [real])
    return validate(model_cls, loaded), loaded


def load_model(path: str | Path, within: tuple[str, ...] = (), parse=None):
    """Load, merge and validate a model spec. Returns (ModelSpec, Loaded)."""
    from manifesto.load.spellings import migrate_spec
    from manifesto.schema.compiled import ModelSpec

    loaded = load_model_data(path, within=within, parse=parse)
    with carrying(loaded.warnings):
        loaded.data, loaded.locs, said = _legacy(loaded.data, loaded.locs,
                                                 lambda data: migrate_spec(data, renames=False))
    loaded.warnings += said
    with carrying(loaded.warnings):
        return validate(ModelSpec, loaded), loaded


def load_cluster_file(path: str | Path, within: tuple[str, ...] = (), parse=None):
    from manifesto.load.spellings import migrate_cluster
    from manifesto.schema.compiled import ClusterProfile

    real = os.path.realpath(path)
    data, locs = (parse or load_yaml)(path, display_name(path), within)
    data, locs, said = _legacy(data, locs, migrate_cluster)
    with carrying(said):
        return validate(ClusterProfile, Loaded(data, locs, [real])), Loaded(data, locs, [real], said)


def _spec_renames(data):
    from manifesto.load.spellings import migrate_spec

    return migrate_spec(data, derived=False)


def _copy(value, memo: dict):
    """A deep copy of YAML data, as ``copy.deepcopy`` makes it (a mapping or list the YAML
    reaches twice, through an alias, is copied once and shared the same way) in a fraction
    of the time: a build copies every spec it loads."""
    kind = type(value)
    if kind is dict or kind is list:
        made = memo.get(id(value))
        if made is not None:
            return made
        if kind is dict:
            made = memo[id(value)] = {}
            for key, item in value.items():
                made[key] = _copy(item, memo)
        else:
            made = memo[id(value)] = []
            made.extend([_copy(item, memo) for item in value])
        return made
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    import copy

    return copy.deepcopy(value)


class carrying:
    """``with carrying(warnings):`` a ManifestoError that leaves the block carries ``warnings``
    (the ones found before it) ahead of its own, so a caller says them before the error."""

    __slots__ = ("warnings",)

    def __init__(self, warnings: tuple[str, ...]) -> None:
        self.warnings = warnings

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if self.warnings and isinstance(exc, ManifestoError):
            exc.warnings = self.warnings + exc.warnings
        return False


def _legacy(data, locs: Locations, rules) -> tuple[Any, Locations, tuple[str, ...]]:
    """Map the reference implementation's spellings onto ours (``manifesto.load.spellings``): a mapped
    or dropped key is a warning with its position (returned: the lines to say), a refused one an
    error with the reason. ``data`` and ``locs`` are never changed (a build shares one parse
    between renders): when a rule applies, the mapped copies are returned."""
    from manifesto.load.spellings import warning

    mapped = _copy(data, {})
    notes = rules(mapped)
    if not notes:
        return data, locs, ()
    locs = Locations(locs.file, dict(locs.table))
    refused = [ManifestoError(n.message, locs.find(n.path), format_path(n.path))
               for n in notes if n.action == "refused"]
    if refused:
        raise SchemaError(refused)
    before = dict(locs.table)
    said = []
    for note in notes:
        origin = locs.find(note.path)
        for old, new in note.moves:  # list entries that moved: their positions replace the new places'
            n = len(old)
            for key, where in before.items():
                if key[:n] == old:
                    locs.table[new + key[n:]] = where
        if note.new_path and "<each>" not in note.new_path:
            n = len(note.path)
            for key, where in list(locs.table.items()):
                if key[:n] == note.path:
                    locs.table.setdefault(note.new_path + key[n:], where)
        said.append(warning(f"{origin}: {note.message}"))
    return mapped, locs, tuple(dict.fromkeys(said))


# -- pydantic errors -> messages with positions -------------------------------------------

def convert_errors(exc, model_cls: type, loaded: Loaded) -> list[ManifestoError]:
    from manifesto.schema.checks import FieldError

    out: list[ManifestoError] = []
    seen: set[tuple] = set()
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, FieldError):  # a validator naming the field below it that is wrong
            loc += cause.path
        path = _data_path(loaded.data, loc, err["type"])
        if path in seen:
            continue
        seen.add(path)
        message = _message(err, model_cls, path)
        out.append(ManifestoError(message, loaded.locs.find(path), format_path(path)))
    out.sort(key=lambda e: (e.origin.file, e.origin.line, e.origin.col) if e.origin else ("", 0, 0))
    return out


def _data_path(data: Any, loc: tuple, kind: str) -> tuple:
    """Drop the union-member tags pydantic adds to ``loc``, keeping only real data keys."""
    path: list = []
    cur = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(cur, dict):
            if part in cur:
                path.append(part)
                cur = cur[part]
            elif last and kind in ("missing", "extra_forbidden"):
                path.append(part)
            continue
        if isinstance(cur, list) and isinstance(part, int) and part < len(cur):
            path.append(part)
            cur = cur[part]
            continue
        break
    return tuple(path)


def _message(err: dict, model_cls: type, path: tuple) -> str:
    kind = err["type"]
    value = err.get("input")
    if kind == "extra_forbidden":
        known = _fields_at(model_cls, path[:-1])
        return f"unknown key {show_value(path[-1])}{did_you_mean(path[-1], known)}"
    if kind == "missing":
        return "required field is missing"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected a whole number, got {show_value(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {show_value(value)}"
    if kind in ("string_type",):
        return f"expected a string, got {show_value(value)}"
    if kind in ("float_type", "float_parsing"):
        return f"expected a number, got {show_value(value)}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {show_value(value)}"
    if kind == "list_type":
        return f"expected a list, got {show_value(value)}"
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return f"{show_value(value)} is not allowed; expected {expected}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "value_error":
        return str(err["ctx"]["error"])
    return err["msg"][0].lower() + err["msg"][1:]


def _fields_at(model_cls: type, path: tuple) -> list[str]:
    """Field names of the record found at ``path`` (for did-you-mean): steps through records,
    lists (``roles[0]``) and name-keyed maps such as ``accelerators.profiles.<name>``."""
    from manifesto.schema.validation import field_names

    return field_names(model_cls, path)
