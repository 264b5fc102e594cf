"""Property: whatever plain data ``yamlemit`` writes, two independent readers read back unchanged.

Arbitrary nested mappings and lists, with any string keys and values (control, bidi,
zero-width and YAML-special strings included), ints, floats, bools and None, either
round-trip exactly through PyYAML (YAML 1.1) and ruamel.yaml (YAML 1.2, safe and
round-trip loaders) or make the writer refuse with a TypeError (never: wrong data).
"""

from __future__ import annotations

import io
import math

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from manifesto.util.yamlemit import dump_all, dump_yaml

#: Strings YAML readers like to take for something else, or that break a line-based writer.
SPECIAL = [
    "", " ", "  x", "x ", "~", "null", "Null", "NULL", "true", "False", "yes", "No", "on", "OFF", "y", "n", "Y",
    "=", "<<", "1", "-1", "+1", "0x1F", "0o17", "017", "0b101", "1_000", "1e3", "1E-3", ".5", "5.", "1.2.3",
    "1:20", "1:20:30.5", "2001-12-14", "2001-12-14t21:59:43.10-05:00", ".inf", "-.Inf", ".NaN", "0_", "-0b1",
    "- x", "-", "--", "---", "...", "--- x", "... x", "? x", "?", ":", "a: b", "a:", "a #b", "#x", "a#b", "!tag",
    "!!str", "&a", "*a", "@x", "`x", "%YAML", "|", ">", "|-", "'", '"', "''", "{", "}", "[", "]", ",", "a, b",
    "{a: 1}", "[1]", "a\nb", "a\n", "\n", "\na", "a\n\n", "a\n \nb", "a\n  ", "\t", "a\tb", "\ta", "\r", "a\r\nb",
    "\x00", "\x1b[2J", "\x7f", "\x85", "\u00a0", "\u2028", "\u2029", "\ufeff", "\u200b", "\u202e", "\u2066",
    "\ufffe", "\uffff", "\ud800", "é", "日本", "\U0001f600", "\\", "\\n", "a\\", "$(id)", "(x)", "./x", "/x",
]

STRINGS = st.one_of(st.sampled_from(SPECIAL), st.text(max_size=12),
                    st.text(alphabet=st.sampled_from(list(" \n\t:#-?&*!|>'\"%@`{}[],.~=<+0123456789eEaxyzn\\")),
                            max_size=10))
SCALARS = st.one_of(STRINGS, st.integers(), st.integers(-(2 ** 70), 2 ** 70), st.booleans(), st.none(),
                    st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([1e-05, 5e-324, 1e16, -0.0, 1.5e300, 2.0 ** 70]))
DATA = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(STRINGS, inner, max_size=4)), max_leaves=12)


def same(a, b) -> bool:
    """Equality that also tells floats from ints and bools, and NaN from everything else."""
    if isinstance(a, float) or isinstance(b, float):
        return (type(a) is type(b) and (a == b and math.copysign(1, a) == math.copysign(1, b)
                                        or math.isnan(a) and math.isnan(b)))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def _ruamel(kind: str):
    reader = YAML(typ=kind, pure=True)
    return lambda text: reader.load(io.StringIO(text))


def _plain(value):
    """ruamel's round-trip types as plain Python (its float and int subclasses, ordered maps)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


READERS = {"pyyaml": yaml.safe_load, "ruamel-safe": _ruamel("safe"), "ruamel-rt": _ruamel("rt")}


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=DATA)
@example(data={"a\nb": 1})
@example(data={"x": 1e-05, "y": 5e-324, "...": "---", "---": {"... x": ["- x"]}})
@example(data="a\nb")
@example(data=["a\n \nb", {"k": "a\n  "}])
def test_round_trips_through_three_readers(data):
    text = dump_yaml(data)
    text.encode("utf-8")  # writable as UTF-8 (a lone surrogate must be escaped)
    for name, read in READERS.items():
        back = _plain(read(text))
        assert same(back, data), f"{name} read back {back!r} from\n{text}"


@settings(max_examples=200, deadline=None)
@given(docs=st.lists(st.dictionaries(STRINGS, SCALARS, min_size=1, max_size=3), min_size=1, max_size=3))
def test_documents_round_trip(docs):
    back = list(yaml.safe_load_all(dump_all(docs)))
    assert len(back) == len(docs) and all(same(a, b) for a, b in zip(back, docs))


#: Hand-made hostile documents (issue 19, class 8), each a shape the hypothesis search might take long to find.
CASES = {
    "key-with-line-break": {"a\nb": 1, "c\n": "d"},
    "key-document-markers": {"---": 1, "...": 2, "--- x": 3, "... y": {"---": "..."}},
    "key-yaml-specials": {"? x": 1, "- x": 2, "&a": 3, "*a": 4, "!t": 5, "|": 6, ">": 7, "%": 8, "@": 9, "`": 10},
    "key-reserved-words": {"null": "~", "true": "no", "y": "n", "<<": "=", "1": 1, "1e3": "0x1F", "": ""},
    "key-bidi-and-zero-width": {"a\u202eb": "\u2066x\u2069", "q\u200b": "\u00ad", "\ufeff": "\ufffe"},
    "key-control-characters": {"\x00": "\x1b[2J", "\x85": "\u2028", "\t": "\r", "\x7f": "\x9f"},
    "float-exponents": [1e-05, 5e-324, 1e16, 1e300, -2.5e-10, 1.7976931348623157e308, -0.0, 1e22],
    "float-specials": {"inf": float("inf"), "ninf": float("-inf"), "nan": float("nan")},
    "big-ints-and-bools": [2 ** 70, -(2 ** 70), 0, True, False, None, "True", "0o17", "017", "+1"],
    "block-edge-strings": ["a\n \nb", "a\n  ", "x\n\ty", "a\r\nb", "a\n\n", "\na", "a\n#b", "a\n---\nb"],
    "deep-nesting": {"a": [[[{"b": [[{}], []], "c\nd": [{"e": None}]}]]]},
    "lone-surrogate": {"\ud800": "\udfff", "k": "a\ud83d"},
    "sexagesimal-and-dates": ["1:20", "190:20:30", "2001-12-14", "2001-12-14 21:59:43.10 -5", "12:30:45.5"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_documents_round_trip(name):
    data = CASES[name]
    text = dump_yaml(data)
    text.encode("utf-8")
    assert all(c.isprintable() or c in "\n\t" for c in text), text  # escapes, never raw invisible characters
    for reader, read in READERS.items():
        back = _plain(read(text))
        assert same(back, data), f"{reader} read back {back!r} from\n{text}"


@pytest.mark.parametrize("value", [object(), b"bytes", {1, 2}])
def test_other_types_are_refused(value):
    with pytest.raises(TypeError, match="cannot write a .* as YAML"):
        dump_yaml({"k": value})
