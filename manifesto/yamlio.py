"""Read YAML with the position of every key and item, and write errors that point at them.

``load_yaml`` returns plain Python data (dict/list/str/int/float/bool/None) and a
``Locations`` table mapping a field path such as ``("roles", 0, "parallelism", "tp")``
to the ``Origin`` (file:line:col) of that key or list item. The round-trip loader is
imported only here and only when a file is actually parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from manifesto.errors import Origin, YamlSyntaxError

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


def format_path(path: PathKey) -> str:
    """``("roles", 0, "lws", "size")`` -> ``roles[0].lws.size``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


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
        mark = exc.problem_mark or exc.context_mark
        problem = _one_line(exc.problem or exc.context or "invalid YAML")
        if "duplicate key" in str(exc):
            problem = _duplicate_key_message(exc)
            mark = exc.problem_mark or mark
        origin = Origin(name, mark.line + 1, mark.column + 1) if mark else Origin(name)
        raise YamlSyntaxError(problem, origin) from None
    except YAMLError as exc:  # unmarked errors (rare): no position to give
        raise YamlSyntaxError(_one_line(str(exc)), Origin(name)) from None
    docs = [d for d in docs if d is not None] if len(docs) > 1 else docs
    if len(docs) > 1:
        raise YamlSyntaxError("expected one YAML document, found several", Origin(name))
    root = docs[0] if docs else None
    locs = Locations(name)
    try:
        data = _plain(root, (), locs, name)
    except RecursionError:
        raise YamlSyntaxError("the YAML nests too deeply to be a spec", Origin(name)) from None
    if root is not None and hasattr(root, "lc"):
        locs.table[()] = Origin(name, root.lc.line + 1, root.lc.col + 1)
    return data, locs


def _duplicate_key_message(exc) -> str:
    import re

    m = re.search(r'found duplicate key "([^"]*)"', str(exc))
    first = exc.context_mark
    where = f" (first defined on line {first.line + 1})" if first else ""
    return f"duplicate key '{m.group(1) if m else '?'}'{where}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _plain(node: Any, path: PathKey, locs: Locations, name: str) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        out = {}
        for key, value in node.items():
            line, col = _position(node.lc.key, key, node)
            k = key if isinstance(key, str) else _scalar(key)
            locs.table[path + (k,)] = Origin(name, line + 1, col + 1)
            out[k] = _plain(value, path + (k,), locs, name)
        return out
    if isinstance(node, CommentedSeq):
        out_list = []
        for i, value in enumerate(node):
            line, col = _position(node.lc.item, i, node)
            locs.table[path + (i,)] = Origin(name, line + 1, col + 1)
            out_list.append(_plain(value, path + (i,), locs, name))
        return out_list
    return _scalar(node)


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
    if value is None or isinstance(value, bool):
        return value
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
