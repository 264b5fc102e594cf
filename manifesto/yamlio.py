"""Read YAML with the position of every key and item, and write errors that point at them.

``load_yaml`` returns plain Python data (dict/list/str/int/float/bool/None) and a
``Locations`` table mapping a field path such as ``("roles", 0, "parallelism", "tp")``
to the ``Origin`` (file:line:col) of that key or list item. The round-trip loader is
imported only here and only when a file is actually parsed.

Anything that has no plain-data form is a ``YamlSyntaxError`` at its position: a second
document, a key that is not a string (``true:``, ``1:``, ``? [a, b]``) and a ``!!set``.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from manifesto.errors import Origin, YamlSyntaxError, format_path, show_value

__all__ = ["Locations", "load_yaml", "parse_yaml", "format_path"]

PathKey = tuple  # tuple[str | int, ...]


class Locations:
    """Field path -> Origin, with lookup falling back to the nearest known parent."""

    __slots__ = ("file", "table")

    def __init__(self, file: str, table: dict[PathKey, Origin] | None = None) -> None:
        self.file = file
        self.table: dict[PathKey, Origin] = table if table is not None else {}

    def find(self, path: PathKey) -> Origin:
        path = tuple(path)
        while path:
            hit = self.table.get(path)
            if hit is not None:
                return hit
            path = path[:-1]
        return self.table.get((), Origin(self.file))

    def sub(self, prefix: PathKey) -> "Locations":
        """The locations below ``prefix``, re-rooted (used when a subtree moves)."""
        n = len(prefix)
        table = {k[n:]: v for k, v in self.table.items() if k[:n] == tuple(prefix)}
        return Locations(self.file, table)

    def graft(self, prefix: PathKey, other: "Locations") -> None:
        """Replace everything below ``prefix`` by ``other``'s table, re-rooted at prefix."""
        prefix = tuple(prefix)
        n = len(prefix)
        for k in [k for k in self.table if k[:n] == prefix and len(k) > n]:
            del self.table[k]
        for k, v in other.table.items():
            if k or prefix not in self.table:
                self.table[prefix + k] = v


def load_yaml(path: str | Path, display: str | None = None) -> tuple[Any, Locations]:
    """Parse one YAML document from ``path``; ``display`` is the name used in errors."""
    p = Path(path)
    name = display or str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise YamlSyntaxError("file not found", Origin(name)) from None
    except IsADirectoryError:
        raise YamlSyntaxError("is a directory, expected a YAML file", Origin(name)) from None
    except UnicodeDecodeError as exc:
        raise YamlSyntaxError(f"not UTF-8 text ({exc.reason})", Origin(name)) from None
    return parse_yaml(text, name)


def parse_yaml(text: str, name: str) -> tuple[Any, Locations]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(text))
    except RecursionError:
        raise YamlSyntaxError("the YAML nests too deeply to be a spec", Origin(name)) from None
    except MarkedYAMLError as exc:
        raise _marked_error(exc, text, name) from None
    except YAMLError as exc:  # unmarked errors (rare): no position to give
        raise YamlSyntaxError(_one_line(str(exc)), Origin(name)) from None
    except TypeError:  # ruamel cannot hash a key that holds a mapping: `? [a, {b: 1}] : x`
        error = _collection_key_error(text, name)
        if error is None:
            raise  # not the unhashable-key case: a bug, let it show
        raise error from None
    kept = [i for i, d in enumerate(docs) if d is not None] if len(docs) > 1 else list(range(len(docs)))
    if len(kept) > 1:
        raise YamlSyntaxError("a second YAML document starts here; a file must hold exactly one",
                              _document_start(text, name, kept[1]))
    root = docs[kept[0]] if kept else None
    locs = Locations(name)
    if root is not None and hasattr(root, "lc"):
        locs.table[()] = Origin(name, root.lc.line + 1, root.lc.col + 1)
    try:
        data = _plain(root, (), locs, name)
    except RecursionError:
        raise YamlSyntaxError("the YAML nests too deeply to be a spec", Origin(name)) from None
    return data, locs


# -- errors ruamel reports, made actionable ------------------------------------------------

_HINTS = {
    "mapping values are not allowed here": "; check the indentation, or quote a value that contains ': '",
    "found character '\\t' that cannot start any token": "; indent with spaces, not tabs",
}

# ruamel's "while parsing a flow mapping" context -> what to call the place it marks.
_CONTEXT_NOUNS = {
    "flow mapping": "the '{' mapping", "flow sequence": "the '[' list", "block mapping": "the mapping",
    "block sequence": "the list", "block collection": "the block", "quoted scalar": "the quoted string",
    "simple key": "the key", "block scalar": "the block scalar", "plain scalar": "the value",
}


def _marked_error(exc, text: str, name: str) -> YamlSyntaxError:
    if "duplicate key" in str(exc):
        return _duplicate_key_error(exc, text, name)
    mark = exc.problem_mark or exc.context_mark
    problem = _one_line(exc.problem or exc.context or "invalid YAML")
    problem += _HINTS.get(problem, "")
    opened = exc.context_mark
    if exc.problem and exc.context and opened is not None and mark is not None \
            and (opened.line, opened.column) != (mark.line, mark.column):
        import re

        m = re.match(r"while (?:parsing|scanning|constructing) an? (.+)$", _one_line(exc.context))
        if m:
            noun = _CONTEXT_NOUNS.get(m.group(1), f"the {m.group(1)}")
            problem += f" ({noun} started at line {opened.line + 1}, column {opened.column + 1})"
    origin = Origin(name, mark.line + 1, mark.column + 1) if mark else Origin(name)
    return YamlSyntaxError(problem, origin)


def _duplicate_key_error(exc, text: str, name: str) -> YamlSyntaxError:
    """Name the key as written and the line of its first definition (ruamel marks the mapping)."""
    import re

    mark = exc.problem_mark or exc.context_mark
    m = re.search(r'found duplicate key "([^"]*)"', str(exc))
    key = m.group(1) if m else "?"
    first = None
    mapping = _find_node(_compose(text), lambda n: _at(n, exc.context_mark) and n.id == "mapping")
    if mapping is not None and mark is not None:
        keys = [k for k, _ in mapping.value]
        dup = next((k for k in keys if _at(k, mark)), None)
        if dup is not None and dup.id == "scalar":
            key = dup.value
            first = next((k for k in keys if k is not dup and k.id == "scalar" and k.value == dup.value), None)
    where = f" (first defined on line {first.start_mark.line + 1})" if first is not None else ""
    origin = Origin(name, mark.line + 1, mark.column + 1) if mark else Origin(name)
    return YamlSyntaxError(f"duplicate key '{key}'{where}", origin)


def _collection_key_error(text: str, name: str) -> YamlSyntaxError | None:
    node = _find_node(_compose(text), lambda n: n.id == "mapping" and any(k.id != "scalar" for k, _ in n.value))
    if node is None:
        return None
    key = next(k for k, _ in node.value if k.id != "scalar")
    kind = "a list" if key.id == "sequence" else "a mapping"
    return YamlSyntaxError(f"keys must be strings, got {kind}",
                           Origin(name, key.start_mark.line + 1, key.start_mark.column + 1))


def _document_start(text: str, name: str, index: int) -> Origin:
    from ruamel.yaml import YAML
    from ruamel.yaml.events import DocumentStartEvent

    try:
        starts = [e.start_mark for e in YAML(typ="rt", pure=True).parse(text) if isinstance(e, DocumentStartEvent)]
    except Exception:  # noqa: BLE001 - it loaded once; a position is a nicety
        return Origin(name)
    mark = starts[index] if index < len(starts) else None
    return Origin(name, mark.line + 1, mark.column + 1) if mark else Origin(name)


def _compose(text: str) -> list:
    """The node trees of ``text`` (positions only; no keys are hashed), or [] if that fails too."""
    from ruamel.yaml import YAML

    try:
        return list(YAML(typ="rt", pure=True).compose_all(text))
    except Exception:  # noqa: BLE001 - only used to find a position for an error already known
        return []


def _find_node(roots: list, test):
    """The first node (document order, iterative) for which ``test`` holds."""
    stack = list(reversed(roots))
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if test(node):
            return node
        if node.id == "mapping":
            stack.extend(reversed([x for pair in node.value for x in pair]))
        elif node.id == "sequence":
            stack.extend(reversed(node.value))
    return None


def _at(node, mark) -> bool:
    return mark is not None and (node.start_mark.line, node.start_mark.column) == (mark.line, mark.column)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# -- ruamel's round-trip objects -> plain data plus positions -------------------------------

def _plain(node: Any, path: PathKey, locs: Locations, name: str) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        out = {}
        for key, value in node.items():
            line, col = _position(node.lc.key, key, node)
            origin = Origin(name, line + 1, col + 1)
            if not isinstance(key, str):
                raise YamlSyntaxError(_key_message(key), origin, format_path(path))
            locs.table[path + (key,)] = origin
            out[key] = _plain(value, path + (key,), locs, name)
        return out
    if isinstance(node, CommentedSeq):
        out_list = []
        for i, value in enumerate(node):
            line, col = _position(node.lc.item, i, node)
            locs.table[path + (i,)] = Origin(name, line + 1, col + 1)
            out_list.append(_plain(value, path + (i,), locs, name))
        return out_list
    if isinstance(node, AbstractSet):  # ruamel's CommentedSet is a MutableSet, not a set
        raise YamlSyntaxError("sets (!!set) are not supported; write a list", locs.find(path), format_path(path))
    return _scalar(node)


def _key_message(key: Any) -> str:
    if isinstance(key, (tuple, list)):
        return "keys must be strings, got a list"
    if isinstance(key, dict):
        return "keys must be strings, got a mapping"
    plain = _scalar(key)  # a date comes back as its ISO text
    return f"keys must be strings, got {plain if isinstance(plain, str) else show_value(plain)}; quote the key"


def _position(lookup, key, node) -> tuple[int, int]:
    """(line, col) of a key or item; merged (``<<``) and ``!!omap`` entries fall back to the node."""
    try:
        pos = lookup(key)
    except (KeyError, TypeError, IndexError):
        pos = None
    if not pos or pos[0] is None:
        return node.lc.line or 0, node.lc.col or 0
    return pos[0], pos[1]


def _scalar(value: Any) -> Any:
    from ruamel.yaml.scalarbool import ScalarBoolean

    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, ScalarBoolean):  # an anchored boolean (`&flag true`) is an int subclass
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    import datetime

    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value
