"""Properties of the YAML and JSON edge (issue 25), with random bytes and random nested data.

- Random bytes into the YAML and JSON decoders: a value or one InputError, nothing else.
- Random nested data (deep lists and maps, aliases, huge whole numbers, odd unicode, BOMs,
  NULs) written as YAML or JSON: read back as the same value, or refused cleanly.
- The text bound (``limits.yaml_depth_bound``) is sound: on random YAML-ish text, no parser
  (libyaml's, ruamel's pure one) reaches a nesting deeper than the bound said, even in the
  part it read before a syntax error. This is what keeps the recursive parsers safe.
- The CLI in-process (``config validate``, ``migrate``) on random specs: exit 0 or 1, no
  traceback, nothing written outside the sandbox; deep random nesting in a child process:
  never a signal.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kit import REPO_ROOT, cli_in_process, run_cli
from manifesto.edge import files, jsonio, limits
from manifesto.errors import InputError
from manifesto.load.yamlio import parse_yaml

QWEN = (REPO_ROOT / "models/qwen/aggregated.yaml").read_text()
#: Seconds one example may take (the machine is shared; a hang or a quadratic blow-up is far over).
STEP = 10.0

# -- random bytes -----------------------------------------------------------------------------

_SEEDS = [b"a: 1\n", b"[1, {a: b}]\n", b"\xef\xbb\xbfa: [\n", b"&a [*a]\n", b"- - - x\n", b'{"a": [1e999, NaN]}',
          b"\x00\xff\xfe", "é: ü\n".encode(), b"a: !!int 0x" + b"f" * 50 + b"\n"]
_BYTES = st.one_of(st.binary(max_size=300), st.lists(st.sampled_from(_SEEDS + [b"[", b"]", b"{", b"}", b"\n  ", b"- ",
                                                                                 b": ", b"*a", b"&a ", b"\x00", b'"']),
                                                     max_size=60).map(b"".join))


def _timed(fn, *args):
    start = time.monotonic()
    try:
        return fn(*args)
    finally:
        assert time.monotonic() - start < STEP


@settings(max_examples=300, deadline=None)
@given(_BYTES)
def test_random_bytes_into_the_yaml_decoder_are_a_value_or_one_error(raw):
    try:
        _timed(lambda: parse_yaml(files.decode(raw, "f.yaml"), "f.yaml"))
    except InputError as exc:
        assert exc.message and "\n" not in str(exc.origin)


@settings(max_examples=300, deadline=None)
@given(_BYTES)
def test_random_bytes_into_the_json_decoder_are_a_value_or_one_error(raw):
    try:
        _timed(jsonio.loads, raw, "f.json")
    except InputError as exc:
        assert exc.message


# -- random nested data -----------------------------------------------------------------------

class _Huge:
    """A whole number of ``digits`` digits, made only inside the test (hypothesis cannot print one)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<{self.digits}-digit number>"


def _made(value):
    if isinstance(value, _Huge):
        return 10 ** (value.digits - 1)
    if isinstance(value, list):
        return [_made(v) for v in value]
    if isinstance(value, dict):
        return {k: _made(v) for k, v in value.items()}
    return value


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # any code point, NUL and bidi too
_LEAF = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
                  st.integers(4295, 4305).map(_Huge), _TEXT, st.floats(allow_nan=False, allow_infinity=False))
_DATA = st.recursive(_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                    st.dictionaries(_TEXT, inner, max_size=4)), max_leaves=30)


def _depth(value) -> int:
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _has_big_int(value) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, int) and not isinstance(node, bool) and abs(node) >= 10 ** limits.MAX_INT_DIGITS:
            return True
    return False


def _wrap(value, levels: int, kinds: list[bool]):
    for i in range(levels):
        value = [value] if kinds[i % len(kinds)] else {"k": value}
    return value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DATA, st.integers(0, 90), st.lists(st.booleans(), min_size=1, max_size=5), st.booleans())
def test_nested_data_as_json_reads_back_or_is_refused(data, levels, kinds, bom):
    import sys

    value = _wrap(_made(data), levels, kinds)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # to write the document; the reader has Python's default limit
    try:
        text = json.dumps(value)
    finally:
        sys.set_int_max_str_digits(old)
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")
    try:
        got = _timed(jsonio.loads, raw, "d.json")
    except InputError as exc:
        assert _depth(value) > limits.MAX_DEPTH or _has_big_int(value), exc.message
        return
    assert _depth(value) <= limits.MAX_DEPTH and not _has_big_int(value)
    assert got == value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DATA, st.integers(0, 90), st.lists(st.booleans(), min_size=1, max_size=5), st.booleans(), st.booleans())
def test_nested_data_as_yaml_reads_back_or_is_refused(data, levels, kinds, block, alias):
    from manifesto.util.yamlemit import dump_yaml

    data = _made(data)
    value = {"root": _wrap(data, levels, kinds)}
    assume(not _has_big_int(value))  # a YAML writer cannot print one; the digit limit has its own cases
    # JSON is YAML in flow style; written without \u escapes, which YAML reads one code point
    # at a time (a surrogate pair is two lone surrogates to it); the line breaks YAML folds
    # (NEL, LS, PS) escaped, as a YAML writer would
    text = dump_yaml(value) if block else json.dumps(value, ensure_ascii=False).translate(_BREAK_ESCAPES)
    if alias and block:
        base = json.dumps(data, ensure_ascii=False).translate(_BREAK_ESCAPES)
        text = f"base: &b {base}\n" + text.replace("root:", "again: *b\nroot:", 1)
    try:
        got, _ = _timed(parse_yaml, text, "d.yaml")
    except InputError as exc:
        assert _depth(value) > limits.MAX_DEPTH or _NOT_YAML.search(text), exc.message
        assert exc.origin is not None
        return
    assert _depth(value) <= limits.MAX_DEPTH
    assert got["root"] == value["root"]


_BREAK_ESCAPES = {0x85: "\\N", 0x2028: "\\L", 0x2029: "\\P"}
#: A character YAML does not allow in a document, even inside quotes.
_NOT_YAML = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# -- the bound over the text is sound ---------------------------------------------------------

_YAMLISH = st.lists(st.sampled_from(["[", "]", "{", "}", ",", "- ", "? ", ": ", ":", "-", "\n", "  ", " ", "a", "b1",
                                     "&x", "*x", "&x[", "!t ", "!t", "!", "%", "'", '"', "#", "|\n", ">\n", "\\",
                                     "\t", "\r",
                                     "\u2028", "\x85", "é", "---\n", "..."]), max_size=80).map("".join)


def _depth_reached(events) -> int:
    depth = deepest = 0
    try:
        for event in events:
            kind = type(event).__name__
            if kind in ("SequenceStartEvent", "MappingStartEvent"):
                depth += 1
                deepest = max(deepest, depth)
            elif kind in ("SequenceEndEvent", "MappingEndEvent"):
                depth -= 1
    except Exception:  # noqa: BLE001 - a syntax error: what was read before it still counts
        pass
    return deepest


@settings(max_examples=1500, deadline=None)
@given(_YAMLISH)
def test_no_parser_nests_deeper_than_the_text_bound(text):
    from ruamel.yaml import YAML

    bound = limits.yaml_depth_bound(text)
    assert _depth_reached(YAML(typ="rt", pure=True).parse(text)) <= bound, text
    events = limits._libyaml_events(text)
    if events is not None:
        assert _depth_reached(events) <= bound, text


# -- through the CLI ----------------------------------------------------------------------------

def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_YAMLISH, _DATA.map(lambda d: json.dumps(d, default=repr)),
                 st.binary(max_size=80).map(lambda b: b.decode("latin-1"))))
def test_config_validate_and_migrate_in_process_exit_cleanly(fragment):
    spec = QWEN.replace("    parallelism: {tp: 1, dp: false, ep: false}\n",
                        "    parallelism: {tp: 1, dp: false, ep: false}\n    vllm:\n      x: " + fragment + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = Path(tmp)
        (sandbox / "spec.yaml").write_bytes(spec.encode("utf-8", "surrogatepass"))
        before = _tree(sandbox)
        cwd = os.getcwd()
        os.chdir(sandbox)
        try:
            for argv in (("config", "validate", "spec.yaml", "--cluster", "example-gb200", "--user", "u",
                          "--namespace", "n"), ("migrate", "spec.yaml", "-o", "out.yaml")):
                rc, _, err = _timed(cli_in_process, *argv)
                assert rc in (0, 1) and "Traceback" not in err, err[-3000:]
        finally:
            os.chdir(cwd)
        assert _tree(sandbox) - before <= {"out.yaml"}


_DEEP_SHAPES = st.lists(st.sampled_from(["[", "{a: ", "- ", "\n  - ", "{? ", "[&x "]), min_size=1, max_size=4)


@pytest.mark.integration
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_DEEP_SHAPES, st.integers(limits.MAX_DEPTH, 40_000))
def test_deep_random_nesting_never_kills_the_process(tmp_path, shape, levels):
    text = "a: " + "".join(shape[i % len(shape)] for i in range(levels)) + "x\n"
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    for argv in (("migrate", str(path)), ("config", "validate", str(path), "--cluster", "example-gb200", "--user",
                                          "u", "--namespace", "n")):
        proc = run_cli(*argv, timeout=60)
        assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr
