"""The bounds every YAML and JSON input obeys, checked before any recursive parser runs.

libyaml's composer (the fast path), ruamel's round-trip composer and constructor, ``json``
and the code that walks their results all recurse once per level of nesting: a text of a
hundred thousand ``[`` kills the process with SIGSEGV in the C composer, and a few thousand
levels give a RecursionError in Python. So nesting is bounded here, over the text, without
recursion, and only a text within every bound reaches a parser.

YAML (:func:`check_yaml`) in two steps:

1. A sound, cheap bound over the text (:func:`yaml_depth_bound`). No YAML node can nest
   deeper than the bound says, whatever the text means:

   - flow nesting: a flow collection opens only at a ``[`` or ``{`` that does not follow a
     word character (after one it is part of a plain scalar or a tag, or a syntax error
     before any deeper level), unless that word ends an anchor's name (ruamel ends one at a
     flow indicator: ``&a[b]``), so the number of those bounds the flow depth;
   - block nesting: at any token of a line, every open block collection sits at a distinct
     column no greater than the token's (the parser closes deeper ones at the first token
     of each line), two at most per column (a mapping and its indentless sequence); those
     at columns past the line's indent were opened on the line itself, each by a ``-``,
     ``?`` or ``:`` indicator. So ``2 * (indent + 1)`` plus the line's indicators bounds it.

   Quotes, comments and block scalars are not interpreted: what they hold can only make the
   bound larger, never smaller. Nearly every real file is far below the limit and is done
   (a few tens of microseconds for a cluster profile). ``tests/edge/test_edge_property_parse.py``
   checks on random YAML-ish text that neither parser ever nests deeper than the bound.
2. When the bound is over the limit, the exact count from the parser's event stream
   (libyaml's, else ruamel's pure one: both are state machines with their own stacks, not
   recursive), which stops at the first node past :data:`MAX_DEPTH` and names its line and
   column. The same walk counts nodes and alias expansion.

JSON (:func:`check_json`): strings are the only context JSON has, so one pass over its
tokens gives the exact depth and finds whole numbers past Python's conversion limit.
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import add, lt, mul, sub

from manifesto.errors import InputError, Origin, YamlSyntaxError

__all__ = ["MAX_TEXT_BYTES", "MAX_ENTRIES", "MAX_DEPTH", "MAX_NODES", "MAX_ALIASES", "MAX_ALIAS_NODES",
           "MAX_INT_DIGITS", "check_yaml", "check_json", "yaml_depth_bound", "check_events", "size_problem"]

#: The largest input read as text (a spec is a few KiB; /dev/zero or a log file is not one).
MAX_TEXT_BYTES = 16 * 1024 * 1024

#: The most lines plus ','-separated flow items a YAML input may hold: a bound on how long
#: parsing takes (the YAML library spends ~0.1 ms per entry). The largest bundled file has
#: about 110 lines.
MAX_ENTRIES = 20_000

#: The deepest nesting of lists and mappings (a spec nests about 6 deep, a Hugging Face
#: config.json 3). Far below what any recursive reader downstream can take.
MAX_DEPTH = 64

#: The most values (scalars, lists, mappings) one input may hold, aliases expanded.
MAX_NODES = 200_000

#: At most this many ``*name`` uses in one file (a spec needs a handful).
MAX_ALIASES = 1_000
#: At most this many values (scalars, lists, mappings) added by expanding aliases.
MAX_ALIAS_NODES = 100_000

#: Python's limit on converting decimal text to int (``sys.get_int_max_str_digits``).
MAX_INT_DIGITS = 4300


def size_problem(size: int, what: str = "a YAML input") -> str | None:
    """Why ``size`` bytes is too large to read, or None."""
    if size > MAX_TEXT_BYTES:
        return f"larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB; not {what}"
    return None


# -- YAML ------------------------------------------------------------------------------------

# Every line break YAML knows (ruamel's reader takes NEL, LS and PS too).
_BREAKS = r"\r\n|[\r\n\x85\u2028\u2029]"
# '[' or '{' glued to a word (`a[0]`, `${X}`): plain text, or a syntax error before any deeper
# level; but not after an anchor's name, which ruamel ends at a flow indicator (`&a[b]`).
_GLUED = r"\w[\[{]"
_ANCHOR_GLUED = r"&[^\s,\[\]{}]*\w[\[{]"
# A block indicator: '-', '?' or ':' followed by a blank or the end of the line.
_INDICATOR = r"[-?:](?=[ \t]|$)"


def yaml_depth_bound(text: str) -> int:
    """An upper bound on the nesting depth of any YAML reading of ``text`` (see the module
    docstring for why it is sound); cheap, and close enough to the truth for ordinary files."""
    lines = _lines(text)
    indents = list(map(sub, map(len, lines), map(len, map(str.lstrip, lines))))  # any blank counts: a larger bound
    # A line of indent i and length n holds at most (n - i + 1) // 2 indicators (each takes a
    # character and a blank; the last may end the line), so 2 * (i + 1) + (n - i + 1) // 2,
    # which is (3i + n + 5) // 2, bounds its block depth: first that figure for every line at
    # C speed, enough for most files; then only the lines over it are counted exactly.
    roughs = list(map(add, map(len, lines), map(mul, indents, repeat(3))))
    block = (max(roughs, default=0) + 5) >> 1
    flow = text.count("[") + text.count("{")
    if block + flow + 2 > MAX_DEPTH:
        room = MAX_DEPTH - flow - 2  # a line whose rough figure is within this cannot matter
        cut = 2 * room - 5
        block = min(block, max(room, 0))
        for line, indent in compress(zip(lines, indents), map(lt, repeat(cut), roughs)):
            here = 2 * (indent + 1) + len(re.findall(_INDICATOR, line[indent:]))
            if here > block:
                block = here
    if flow and block + flow + 2 > MAX_DEPTH:
        flow += len(re.findall(_ANCHOR_GLUED, text)) - len(re.findall(_GLUED, text))
    return block + flow + 2


def _lines(text: str) -> list[str]:
    """The lines of ``text`` as YAML breaks them. str.splitlines breaks at every YAML line break
    and also at VT, FF, FS, GS and RS, which YAML refuses; with one of those the lines are
    broken only where YAML would, so a reader that gets that far sees no longer line."""
    lines = text.splitlines()
    breaks = (text.count("\n") + text.count("\r") - text.count("\r\n") + text.count("\x85") + text.count("\u2028")
              + text.count("\u2029"))
    return lines if len(lines) <= breaks + 1 else re.split(_BREAKS, text)


def check_yaml(text: str, name: str, *, pure=False) -> None:
    """Raise YamlSyntaxError when ``text`` breaks a bound: too many entries, nesting deeper than
    :data:`MAX_DEPTH`, too many nodes or aliases. ``pure`` (a bool, or a function that says
    it, called only when needed): the text goes to ruamel's pure loader, so its parser's
    reading is the one checked when an exact count is needed."""
    size = text.count("\n") + text.count(",")
    if size > MAX_ENTRIES:
        raise YamlSyntaxError(f"holds {size} lines and ','-separated items; a YAML input holds at most "
                              f"{MAX_ENTRIES} (a spec or a profile is a few hundred lines)", Origin(name))
    aliases = "&" in text and "*" in text and re.search(_ALIAS, text, re.M) is not None
    if yaml_depth_bound(text) <= MAX_DEPTH and not aliases:
        return
    if not (pure() if callable(pure) else pure):
        parser = _libyaml_events(text)
        if parser is not None:
            try:
                check_events(parser, name)
                return
            except _Unparsed:
                pass  # libyaml stopped on something the pure parser may read: count its reading
    try:
        check_events(_pure_events(text), name)
    except _Unparsed:
        return  # the loader stops at the same error, no deeper than this walk went


# Something that may be an alias: `*` and a name character, after a space, a line start or
# a flow indicator (`a * b` in a computed expression is not one).
_ALIAS = r"(?:^|[\s\[{,])\*[^\s,\[\]{}]"


class _Unparsed(Exception):
    """The event stream ended in a syntax error (the loader reports it with its context)."""


def _libyaml_events(text: str):
    try:
        from _ruamel_yaml_clibz import CParser
    except ImportError:
        return None
    parser = CParser(text)

    def events():
        while parser.check_event():
            yield parser.get_event()

    return events()


def _pure_events(text: str):
    from ruamel.yaml import YAML

    return YAML(typ="rt", pure=True).parse(text)


def check_events(events, name: str) -> None:
    """Walk a parser's event stream with an explicit stack: raise YamlSyntaxError at the first
    node nested deeper than :data:`MAX_DEPTH`, past :data:`MAX_NODES`, or at the alias that
    crosses :data:`MAX_ALIASES` or :data:`MAX_ALIAS_NODES`. A syntax error in the stream ends
    the walk (raising ``_Unparsed``): the loader then reports it, and reads no further than
    this walk did."""
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, ScalarEvent

    sizes: dict = {}  # anchor -> values in its subtree (aliases expanded)
    stack: list[list] = [[None, 0]]  # open collections: [anchor, values so far]
    uses = added = nodes = 0
    try:
        for event in events:
            if isinstance(event, ScalarEvent):
                stack[-1][1] += 1
                nodes += 1
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, CollectionStartEvent):
                stack.append([event.anchor, 1])
                nodes += 1
                if len(stack) - 1 > MAX_DEPTH:
                    raise _at(event, name, f"lists and mappings nest more than {MAX_DEPTH} deep here; "
                                           "the YAML nests too deeply to be read (a spec nests about 6)")
            elif isinstance(event, CollectionEndEvent) and len(stack) > 1:
                anchor, count = stack.pop()
                if anchor:
                    sizes[anchor] = count
                stack[-1][1] += count
            elif isinstance(event, AliasEvent):
                size = sizes.get(event.anchor, 1)  # an anchor still open (a cycle) is left to the loader
                uses, added, nodes = uses + 1, added + size, nodes + size
                stack[-1][1] += size
                if uses > MAX_ALIASES:
                    raise _at(event, name, f"*{event.anchor}: this is alias use number {uses}; a file may use "
                                           f"aliases at most {MAX_ALIASES} times")
                if added > MAX_ALIAS_NODES:
                    raise _at(event, name, f"*{event.anchor}: with this alias, aliases expand to {added} values; "
                                           f"at most {MAX_ALIAS_NODES} are allowed (an alias bomb?)")
            if nodes > MAX_NODES:
                raise _at(event, name, f"the YAML holds more than {MAX_NODES} values here; too many to be read")
    except YAMLError:
        raise _Unparsed from None


def _at(event, name: str, message: str) -> YamlSyntaxError:
    mark = event.start_mark
    return YamlSyntaxError(message, Origin(name, mark.line + 1, mark.column + 1))


# -- JSON ------------------------------------------------------------------------------------

_JSON_TOKEN = r'"(?:[^"\\]|\\.)*"?|[\[\]{}]|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?'


def check_json(text: str, name: str, *, error=InputError) -> None:
    """Raise InputError (at line:col) when ``text`` nests deeper than :data:`MAX_DEPTH`, holds
    a whole number of more than :data:`MAX_INT_DIGITS` digits, or more than :data:`MAX_NODES`
    values. Exact for valid JSON; for invalid JSON it reads no less than the decoder would."""
    opens = text.count("[") + text.count("{")
    if opens <= MAX_DEPTH and len(text) <= MAX_NODES and (
            len(text) <= MAX_INT_DIGITS or re.search(r"\d{%d}" % (MAX_INT_DIGITS + 1), text) is None):
        return  # no value takes less than a character: nothing here can break a bound
    depth = values = 0
    for m in re.finditer(_JSON_TOKEN, text):
        first = text[m.start()]
        if first in "[{":
            depth += 1
            values += 1
            if depth > MAX_DEPTH:
                raise error(f"lists and objects nest more than {MAX_DEPTH} deep here; the JSON nests too "
                                 "deeply to be read", _json_origin(text, m.start(), name))
        elif first in "]}":
            depth = max(depth - 1, 0)
        else:
            values += 1
            if first != '"':
                digits = m.group()
                whole = digits.lstrip("-")
                if whole.isdigit() and len(whole) > MAX_INT_DIGITS:
                    raise error(f"a whole number of {len(whole)} digits; at most {MAX_INT_DIGITS} are "
                                     "supported", _json_origin(text, m.start(), name))
        if values > MAX_NODES:
            raise error(f"the JSON holds more than {MAX_NODES} values here; too many to be read",
                             _json_origin(text, m.start(), name))


def _json_origin(text: str, pos: int, name: str) -> Origin:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return Origin(name, line, col)
