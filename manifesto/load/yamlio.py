"""Read YAML with the position of every key and item, and write errors that point at them.

``load_yaml`` returns plain Python data (dict/list/str/int/float/bool/None) and a
``Locations`` table mapping a field path such as ``("roles", 0, "parallelism", "tp")``
to the ``Origin`` (file:line:col) of that key or list item. The round-trip loader is
imported only here and only when a file is actually parsed.

Anything that has no plain-data form is a ``YamlSyntaxError`` at its position: a second
document, a key that is not a string (``true:``, ``1:``, ``? [a, b]``) and a ``!!set``.
So is a scalar that cannot be built (a whole number over Python's 4300-digit limit, a
date that does not exist, ``!!bool maybe``) and an alias that would blow the document up:
aliases share one object in the parser but are copied into plain data, so ``*name`` uses
are bounded in number (``MAX_ALIASES``) and in the values they add (``MAX_ALIAS_NODES``)
before anything is copied.
"""

from __future__ import annotations

import os

import re
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from manifesto.edge.limits import MAX_ALIAS_NODES, MAX_ALIASES, MAX_ENTRIES, MAX_TEXT_BYTES, check_yaml
from manifesto.errors import Origin, YamlSyntaxError, format_path, show_value

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Locations", "load_yaml", "read_text", "StreamPath", "parse_yaml", "parse_documents", "format_path",
           "file_problem", "confinement",
           "outside_problem", "MAX_ALIASES", "MAX_ALIAS_NODES", "MAX_FILE_BYTES", "MAX_ENTRIES"]

# The bounds (size, entries, depth, aliases) are the edge's: manifesto.edge.limits.
MAX_FILE_BYTES = MAX_TEXT_BYTES

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


def load_yaml(path: str | Path, display: str | None = None, within: tuple[str, ...] = ()) -> tuple[Any, Locations]:
    """Parse one YAML document from ``path``; ``display`` is the name used in errors.

    Only a regular file of at most ``MAX_FILE_BYTES`` is read (a FIFO would block, a device
    never end); with ``within`` (``confinement(roots)``) it must also resolve below one of the roots.
    """
    name = display or str(path)
    return parse_yaml(read_text(path, name, within), name)


class StreamPath(str):
    """A pipe or terminal named on the command line (bash's ``<(...)``, ``-`` for standard
    input): the user asked for it, so ``read_text`` reads it once, like a file. Only
    ``catalog.find`` makes one, for a name given as such; any other pipe is refused."""

    __slots__ = ()


def read_text(path: str | Path, name: str, within: tuple[str, ...] = ()) -> str:
    """The UTF-8 text of ``path`` under the checks of :func:`load_yaml` (``manifesto.edge.files``)."""
    from manifesto.edge import files

    if isinstance(path, StreamPath) and file_problem(path) is not None and os.path.exists(path):
        return files.read_stream(path, name, error=YamlSyntaxError)
    return files.read_text(path, name, within, error=YamlSyntaxError)


def file_problem(path: str | Path) -> str | None:
    """Why ``path`` is not a readable regular file ("file not found", "symlink loop", "is a
    directory", ...), or None when it is one."""
    from manifesto.edge.files import file_problem as problem

    return problem(path)


def confinement(roots) -> tuple[str, ...]:
    """``roots`` as the ``within`` value of the readers (see ``manifesto.edge.files``)."""
    from manifesto.edge.files import confinement as confine

    return confine(roots)


def outside_problem(path: str | Path, within: tuple[str, ...] = ()) -> str | None:
    """Why ``path`` may not be read under ``within`` (it resolves outside the roots), or None."""
    from manifesto.edge.files import outside_problem as outside

    return outside(path, within)


def parse_documents(text: str, name: str, *, max_entries: int, max_documents: int, keep=None
                    ) -> list[tuple[Any, Locations]]:
    """Every non-empty document of a multi-document YAML text (a rendered artifact), each
    through :func:`parse_yaml` and its limits; ``max_entries`` bounds the lines and
    ','-separated items of the whole text and ``max_documents`` the documents, before any is
    parsed. Positions, in locations and errors, count from the top of ``text``. ``keep``
    (a document's text -> bool): the documents it refuses are not parsed, nor returned."""
    import re

    size = text.count("\n") + text.count(",")
    if size > max_entries:
        raise YamlSyntaxError(f"holds {size} lines and ','-separated items; a rendered artifact holds at most "
                              f"{max_entries}", Origin(name))
    lines = text.split("\n")
    starts = [0] + [i for i, line in enumerate(lines)
                    if i and line[:3] == "---" and (len(line) == 3 or line[3] in " \t\r")]  # `---`, a marker
    if len(starts) > max_documents:
        raise YamlSyntaxError(f"holds {len(starts)} YAML documents; a rendered artifact holds at most {max_documents}",
                              Origin(name, starts[max_documents] + 1, 1))
    docs = []
    for first, stop in zip(starts, starts[1:] + [len(lines)]):
        chunk = "\n".join(lines[first:stop]) + "\n"  # a block scalar keeps its end
        if keep is not None and not keep(chunk):
            continue
        try:
            data, locs = parse_yaml(chunk, name)
        except YamlSyntaxError as exc:
            origin, message = exc.origin, exc.message
            if first and origin is not None and origin.line:  # positions count from the artifact's top
                origin = Origin(name, origin.line + first, origin.col)
                message = re.sub(r"\bline (\d+)", lambda m: f"line {int(m.group(1)) + first}", message)
            raise YamlSyntaxError(message, origin, exc.path) from None
        if first:
            for key, origin in locs.table.items():
                locs.table[key] = Origin(name, origin.line + first, origin.col) if origin.line else origin
        if data is not None:
            docs.append((data, locs))
    return docs


def parse_yaml(text: str, name: str) -> tuple[Any, Locations]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    # Entries, depth, nodes and aliases, before any recursive parser sees the text; for the
    # slow path, as ruamel's pure parser reads it (asked only when an exact count is needed).
    slow = _slow_only(text)
    check_yaml(text, name, pure=slow)
    fast = None if slow else _fast_parse(text, name, checked=True)
    if fast is not None:
        return fast
    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(text))
    except (ValueError, KeyError, OverflowError) as exc:  # a constructor that cannot build a scalar
        raise _scalar_error(text, name, exc) from None
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
    if "!" in text:  # a tag needs a '!': most files skip this pass
        tagged = _unknown_tag(text, name)
        if tagged is not None:
            raise tagged
    if "&" in text and _ALIAS.search(text):  # a cycle needs an anchor and an alias: most files skip the second pass
        cycle = _recursive_alias(text, name)
        if cycle is not None:
            raise cycle
    kept = [i for i, d in enumerate(docs) if d is not None] if len(docs) > 1 else list(range(len(docs)))
    if len(kept) > 1:
        raise YamlSyntaxError("a second YAML document starts here; a file must hold exactly one",
                              _document_start(text, name, kept[1]))
    root = docs[kept[0]] if kept else None
    locs = Locations(name)
    if root is not None and hasattr(root, "lc") and root.lc.line is not None:
        locs.table[()] = Origin(name, root.lc.line + 1, root.lc.col + 1)
    try:
        data = _plain(root, (), locs, name)
    except RecursionError:
        raise YamlSyntaxError("the YAML nests too deeply to be a spec", Origin(name)) from None
    return data, locs


# -- the fast path: plain documents through libyaml -----------------------------------------

# What the fast path leaves to the round-trip loader: an anchor, alias or tag (`&x`, `*x`,
# `!tag`), a directive, a complex key (`? `) and a merge key (`<<`). It may match inside a
# quoted value too: that file then takes the slow path, which reads it the same.
# Any character but printable ASCII and line breaks (tabs too: the round-trip loader refuses a
# tab libyaml takes as a space, `a: 1<TAB>`) sends the file to the slow path.
_UNUSUAL = re.compile(r"[^\x20-\x7e\n\r]")
# Written from the indicator character backwards (lookbehinds), so a search skips to the next
# of `&*!?%<` at C speed; it matches where "(?:^|[\s\[{,])[&*!]\S|^%|(?:^|[\s\[{,])\?(?:\s|$)|<<"
# (re.M) would, one character later (test_yaml_fast_path holds the two to the same answers).
_SPECIAL = re.compile(r"[&*!?%<](?:(?<=[&*!])(?<![^\s\[{,][&*!])\S|(?<=\?)(?<![^\s\[{,]\?)(?:\s|$)"
                      r"|(?<=%)(?<!.%)|(?<=<)<)", re.M)
# A line that ends in a block scalar's header (`key: |`, `- >-`, `run: |2 # note`), with no `#`
# before it (a `|` in a comment, or a key holding `#`, is not taken for one: the lines after it
# are then checked as syntax, which only costs speed).
_BLOCK_HEADER = re.compile(r"^[^#\n]*?(?:^|[ \t])[|>][-+1-9]{0,2}[ \t]*(?:[ \t]#.*)?$")


def _slow_only(text: str) -> bool:
    """Whether ``text`` may hold what only the round-trip loader reads (above). ``_SPECIAL`` is
    asked of its lines of syntax only: a comment line (a rendered artifact's header quotes
    its inputs as heredocs, ``<<'EOF'``) and a block scalar's body (a launch script's ``&&``,
    ``*,`` and ``!=``) hold none, so a file with them is not sent to the slow path for that.
    Should a line be mistaken for a block scalar's header, what the fast path builds still
    refuses what it does not read the same (a tag of its own such as ``!x`` or ``!!binary``,
    a ``!!set``, a merge key: ``_built``), and the bounds were checked on the whole text."""
    if _UNUSUAL.search(text):
        return True
    if not _SPECIAL.search(text):
        return False  # most files: one search
    return _SPECIAL.search(_syntax_lines(text)) is not None


def _syntax_lines(text: str) -> str:
    """``text`` without its comment lines and the bodies of its block scalars (every line after
    a header that is blank or indented deeper than the header's line)."""
    kept = []
    body = -1  # the indentation of the block scalar header whose body is being skipped
    for line in text.split("\n"):
        rest = line.lstrip(" ")
        indent = len(line) - len(rest)
        if body >= 0:
            if indent > body or not rest.strip():
                continue
            body = -1
        if rest.startswith("#"):
            continue
        kept.append(line)
        if ("|" in rest or ">" in rest) and _BLOCK_HEADER.match(line):
            body = indent
    return "\n".join(kept)


def _fast_parse(text: str, name: str, checked: bool = False) -> tuple[Any, Locations] | None:
    """(data, locations) of a plain document, composed by libyaml (``ruamel.yaml[libyaml]``) and
    built here with the round-trip loader's own scalar constructor; None when the text is not
    printable ASCII YAML without the features above, or libyaml is missing, or anything is off
    (a syntax error, a second document, a key that is not a string, a duplicate key): the
    round-trip loader then reads the text, and reports any error as before.

    A spec or profile parses about five times faster this way; ``tests/load/test_yaml_fast_path.py``
    holds both paths to the same data and positions."""
    if not checked and _slow_only(text):
        return None
    loader = _fast_loader()
    if loader is None:
        return None
    from ruamel.yaml.error import YAMLError

    try:
        root = loader(text).get_single_node()
        if root is None:  # no document (blank lines and comments: an artifact's header), as the slow path reads it
            return None, Locations(name)
        if root.id == "scalar":  # a one-value document: left to the slow path
            return None
        locs = Locations(name)
        locs.table[()] = Origin(name, root.start_mark.line + 1, root.start_mark.column + 1)
        return _built(root, (), locs, name, _scalar_constructor()), locs
    except (YAMLError, _NotPlain, RecursionError, ValueError, KeyError, OverflowError, TypeError):
        return None


class _NotPlain(Exception):
    """Something the fast path does not build itself: the round-trip loader reads the file."""


_VALUE_TAG = "tag:yaml.org,2002:value"
_MAP_TAG, _SEQ_TAG, _STR_TAG = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:str"
#: The other tags a plain scalar resolves to (besides str); a scalar with any other was tagged in the text.
_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool", "null", "timestamp"))

#: Deeper documents take the slow path, which refuses very deep ones ("nests too deeply"): the
#: fast path must not accept one the slow path refuses. A spec nests about 6 deep.
_FAST_DEPTH = 50


def _built(node, path: PathKey, locs: Locations, name: str, construct) -> Any:
    """Plain data from a composed node, recording each key's and item's position as the
    round-trip loader's ``lc`` tables hold them (the start of the key, of the item). A node's
    tag is read as libyaml's composer set it (``ctag.suffix``, the whole tag: the ``tag``
    property builds a string each time it is asked, most of the time a document took)."""
    if len(path) > _FAST_DEPTH:
        raise _NotPlain
    kind = node.id
    tag = node.ctag.suffix
    if kind == "mapping":
        if tag != _MAP_TAG:
            raise _NotPlain  # `!!set`, `!!omap`, a tag of its own: the slow path reads or refuses it
        out: dict = {}
        table = locs.table
        for key_node, value_node in node.value:
            if key_node.id != "scalar" or key_node.ctag.suffix != _STR_TAG:
                raise _NotPlain  # `true:`, `1:`, `[a]:`, `<<:`: the slow path says why it is refused
            key = key_node.value
            if key in out:
                raise _NotPlain  # a duplicate key: the slow path names both lines
            mark = key_node.start_mark
            table[(*path, key)] = Origin(name, mark.line + 1, mark.column + 1)
            out[key] = _built(value_node, (*path, key), locs, name, construct)
        return out
    if kind == "sequence":
        if tag != _SEQ_TAG:
            raise _NotPlain
        items = []
        for i, item in enumerate(node.value):
            mark = item.start_mark
            locs.table[(*path, i)] = Origin(name, mark.line + 1, mark.column + 1)
            items.append(_built(item, (*path, i), locs, name, construct))
        return items
    if tag == _STR_TAG or tag == _VALUE_TAG:  # text as composed (`=` is text in YAML 1.2)
        return node.value
    if tag not in _PLAIN_TAGS:
        raise _NotPlain  # `!!binary`, `!x`: the slow path reads or refuses it
    value = _scalar(construct(node, tag))
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        raise _NotPlain  # the slow path says what is wrong with it
    return value


@lru_cache(maxsize=1)
def _fast_loader():
    """libyaml's composer with ruamel's YAML 1.2 resolver (as ``YAML(typ="safe")`` builds it),
    or None without the C extension."""
    try:
        from _ruamel_yaml_clibz import CParser
    except ImportError:
        return None
    from ruamel.yaml.resolver import VersionedResolver

    class Loader(CParser, VersionedResolver):
        # The resolver's table for the document's YAML version, looked up once: ruamel finds
        # the version again for every scalar, half the time a composition takes. The fast path
        # takes no `%YAML` directive, so the version is ruamel's default throughout.
        versioned_resolver = None

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            self._parser = self._composer = self
            VersionedResolver.__init__(self, version=None, loadumper=self)
            self.versioned_resolver = VersionedResolver.versioned_resolver.fget(self)

    return Loader


@lru_cache(maxsize=1)
def _scalar_constructor():
    """The round-trip loader's scalar constructor: the fast path builds every value with it.
    One for the process: a scalar of a plain tag is built from its node alone (no state is
    kept, unlike ``construct_object``'s table of every node it built), and making a loader
    costs more than building a small document."""
    from ruamel.yaml import YAML

    return YAML(typ="rt", pure=True).constructor.construct_non_recursive_object


# -- bounded aliases -------------------------------------------------------------------------

# Something that may be an alias: `*` and a name character, after a space, a line start or
# a flow indicator (`a * b` in a computed expression is not one).
_ALIAS = re.compile(r"(?:^|[\s\[{,])\*[^\s,\[\]{}]")

def _scalar_error(text: str, name: str, exc: Exception) -> YamlSyntaxError:
    """The scalar ruamel could not build, found by building each one again on its own."""
    from ruamel.yaml import YAML

    stack = list(reversed(_compose(text)))
    while stack:
        node = stack.pop()
        if node.id == "mapping":
            stack.extend(reversed([x for pair in node.value for x in pair]))
        elif node.id == "sequence":
            stack.extend(reversed(node.value))
        else:
            try:
                YAML(typ="rt", pure=True).constructor.construct_object(node, deep=True)
            except (ValueError, KeyError, OverflowError) as found:
                origin = Origin(name, node.start_mark.line + 1, node.start_mark.column + 1)
                return YamlSyntaxError(_scalar_message(node, found), origin)
    return YamlSyntaxError(f"a value cannot be read ({_one_line(str(exc))})", Origin(name))


def _scalar_message(node, exc: Exception) -> str:
    kind = str(node.tag).rsplit(":", 1)[-1]
    value = node.value
    digits = sum(c.isdigit() for c in value)
    if kind == "int" and digits > 4300:
        return (f"a whole number of {digits} digits; at most 4300 are supported (quote it if it is text)")
    shown = show_value(value)
    if isinstance(exc, KeyError):
        return f"{shown} is not a valid !!{kind}"
    return f"{shown} is not a valid {kind}: {_one_line(str(exc))}"


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
        m = re.match(r"while (?:parsing|scanning|constructing) an? (.+)$", _one_line(exc.context))
        if m:
            noun = _CONTEXT_NOUNS.get(m.group(1), f"the {m.group(1)}")
            problem += f" ({noun} started at line {opened.line + 1}, column {opened.column + 1})"
    origin = Origin(name, mark.line + 1, mark.column + 1) if mark else Origin(name)
    return YamlSyntaxError(problem, origin)


def _duplicate_key_error(exc, text: str, name: str) -> YamlSyntaxError:
    """Name the key as written and the line of its first definition (ruamel marks the mapping)."""
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


def _recursive_alias(text: str, name: str) -> YamlSyntaxError | None:
    """An alias inside the node its anchor names (``a: &x {b: *x}``): ruamel builds a value that
    contains itself, which has no plain-data form (it used to come back as null).

    One iterative depth-first pass; a node shared by many aliases is explored once.
    """
    grey, black = set(), set()
    for root in _compose(text):
        stack: list = [(root, None, False)]
        while stack:
            node, key, leaving = stack.pop()
            if node is None:
                continue
            if leaving:
                grey.discard(id(node))
                black.add(id(node))
                continue
            if id(node) in grey:
                at = (key or node).start_mark
                anchor = getattr(node, "anchor", None)
                what = f" '&{anchor}'" if isinstance(anchor, str) else ""
                return YamlSyntaxError(f"this alias points back at the anchor{what} of a node that contains it; "
                                       "a value cannot contain itself", Origin(name, at.line + 1, at.column + 1))
            if id(node) in black:
                continue
            grey.add(id(node))
            stack.append((node, key, True))
            if node.id == "mapping":
                stack.extend((v, k, False) for k, v in reversed(node.value))
            elif node.id == "sequence":
                stack.extend((v, node, False) for v in reversed(node.value))
    return None


def _document_start(text: str, name: str, index: int) -> Origin:
    from ruamel.yaml import YAML
    from ruamel.yaml.events import DocumentStartEvent

    try:
        starts = [e.start_mark for e in YAML(typ="rt", pure=True).parse(text) if isinstance(e, DocumentStartEvent)]
    except Exception:  # noqa: BLE001 - it loaded once; a position is a nicety
        return Origin(name)
    mark = starts[index] if index < len(starts) else None
    return Origin(name, mark.line + 1, mark.column + 1) if mark else Origin(name)


#: The tags a document may carry: YAML's own types, which the loader builds (an explicit
#: ``!!str`` or ``!!int`` says how to read a scalar). Any other (``!!python/object``, a local
#: ``!Ref``, a URI tag) names a type manifesto does not know: refused, never read as plain data.
KNOWN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in (
    "str", "int", "float", "bool", "null", "map", "seq", "timestamp", "binary", "omap", "pairs", "set", "merge",
    "value"))


def _unknown_tag(text: str, name: str) -> YamlSyntaxError | None:
    """The error for the first node with a tag outside :data:`KNOWN_TAGS`, or None."""
    node = _find_node(_compose(text), lambda n: n.tag is not None and str(n.tag) not in KNOWN_TAGS
                      and getattr(n.tag, "value", n.tag) not in KNOWN_TAGS)
    if node is None:
        return None
    from manifesto.errors import printable

    tag = str(getattr(node.tag, "value", node.tag))
    shown = "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag
    shown = printable(shown)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return YamlSyntaxError(f"the tag {shown} names a type manifesto does not read (only YAML's own: !!str, !!int, "
                           "!!float, !!bool, !!null, !!map, !!seq, !!timestamp...); remove it",
                           Origin(name, node.start_mark.line + 1, node.start_mark.column + 1))


def _compose(text: str) -> list:
    """The node trees of ``text`` (positions only; no keys are hashed), as far as they compose."""
    from ruamel.yaml import YAML

    nodes: list = []
    try:
        for node in YAML(typ="rt", pure=True).compose_all(text):
            nodes.append(node)
    except Exception:  # noqa: BLE001 - only used to find a position for an error already known
        pass  # the documents before a later syntax error still hold the position sought
    return nodes


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
    value = _scalar(node)
    if isinstance(value, int) and value.bit_length() > 14_000 and not _printable(value):
        # 0x... and 0o... numbers are built without Python's 4300-digit limit, but no message
        # or artifact could print them in decimal.
        raise YamlSyntaxError("a whole number of more than 4300 digits; quote it if it is text",
                              locs.find(path), format_path(path))
    return value


def _printable(value: int) -> bool:
    try:
        str(value)
    except ValueError:
        return False
    return True


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
    from ruamel.yaml.comments import TaggedScalar

    if isinstance(value, TaggedScalar):  # `=`, or a scalar under a tag of its own (`!x 1`): its text,
        return str(value.value)  # as a list or mapping under one is plain data too
    import datetime

    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value
