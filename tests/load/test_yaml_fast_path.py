"""The YAML fast path (libyaml's composer, ``yamlio._fast_parse``) against the round-trip loader.

Plain documents are composed by libyaml and built with the round-trip loader's scalar
constructor; anything else, and any error, goes to the round-trip loader as before. These
tests hold the two paths to the same result: the same data and positions, or the same error,
on every YAML file in the repository and the shared kits and on a corpus of edge cases.
"""

from __future__ import annotations

import glob
import re

import hypothesis
import pytest

import kit
from manifesto.load import yamlio
from manifesto.errors import ManifestoError

REPO = kit.REPO_ROOT

EDGE_CASES = {
    "block scalars": "a: |\n  one\n  two\nb: >\n  folded\n  text\n\n  para\nc: |-\n  kept\nd: >+\n  x\n\ne: 1\n",
    "indentation indicator": "a: |2\n    indented\n  b\n",
    "quoted escapes": 'a: "tab\\there \\u00e9 \\x41 \\" \\\\"\nb: \'it\'\'s\'\nc: "line\\nbreak"\n',
    "control escape": 'a: "\\0 nul"\n',
    "multi-line plain": "a: one\n  two\n  three\nb: x\n",
    "flow collections": "a: [1, two, {b: c, d: [e]}]\nf: {g: h, i: null}\n",
    "numbers": "a: 0o17\nb: 0x1F\nc: 1_000\nd: 1e3\ne: .inf\nf: -.inf\ng: .nan\nh: -0\ni: +12\nj: 1.5e-3\nk: 010\n",
    "booleans and nulls": "a: true\nb: True\nc: TRUE\nd: yes\ne: on\nf: ~\ng: null\nh:\ni: Null\n",
    "timestamps": "a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: 2001-12-14 21:59:43.10\n",
    "huge whole number": "a: " + "9" * 5000 + "\n",
    "big hex number": "a: 0x" + "f" * 4000 + "\n",
    "comments": "# head\na: 1 # tail\n# between\nb:\n  - x # item\n  # inside\n  - y\n",
    "document markers": "---\na: 1\n...\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "empty document": "",
    "only a comment": "# nothing\n",
    "scalar document": "just text\n",
    "list document": "- a\n- b\n",
    "duplicate key": "a: 1\nb: 2\na: 3\n",
    "non-string key": "true: 1\n1: 2\n",
    "null key": "~: 1\n",
    "flow key": "[a, b]: 1\n",
    "tab indentation": "a:\n\tb: 1\n",
    "tab after value": "a: 1\t\nb: 2\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "unclosed quote": 'a: "open\nb: 2\n',
    "unclosed flow": "a: [1, 2\nb: 3\n",
    "colon in value": "a: b: c\n",
    "quoted colon key": '"a: b": 1\n\'c:d\': 2\n',
    "trailing spaces": "a: 1   \nb:    two  \n",
    "crlf line ends": "a: 1\r\nb:\r\n  - x\r\n",
    "deep nesting": "a: " + "[" * 200 + "]" * 200 + "\n",
    "nesting past the fast path": "a: " + "[" * 51 + "]" * 51 + "\n",
    "nesting the slow path refuses": "a: " + "[" * 400 + "]" * 400 + "\n",
    "long plain key": "k" * 1100 + ": 1\n",
    "anchor and alias": "a: &x {b: 1}\nc: *x\n",
    "merge key": "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
    "tag": "a: !!str 12\nb: !!binary aGk=\n",
    "set": "a: !!set {x, y}\n",
    "directive": "%YAML 1.2\n---\na: 1\n",
    "complex key": "? a\n: 1\n",
    "non-ascii": "a: caf\u00e9\n",
    "star in a value": "a: 2 * 3\nb: '*.yaml'\n",
    "empty values": "a:\nb: []\nc: {}\nd: ''\n",
    "sequence of mappings": "roles:\n- name: a\n  tp: 2\n-   name: b\n    tp: 4\n",
    "indented sequence": "a:\n    - 1\n    -   - 2\n        - 3\n",
    "question mark in a value": "url: http://x/?a=b\nq: what?\n",
    "percent in a value": "a: 95%\nb: '%d'\n",
    "flow set shape": "a: {b, c}\n",
    "surrogate escape": 'a: "\\ud800"\n',
    "escaped line separator": 'a: "x\\Ly\\P"\n',
    "carriage returns only": "a: 1\rb: 2\r",
    "nul character": "a: b\x00c\n",
    "bell character": "a: b\x07\n",
    "reserved indicator": "a: @x\nb: `y\n",
    "plain scalar with colon": "a: :x\nb: x:y\nc: -x\n",
    "hash without space": "a: b#c\nd: e #f\n",
    "indentless sequence": "a:\n- 1\n- 2\nb: 3\n",
    "mapping in flow sequence": "a: [b: 1, c]\n",
    "empty flow entries": "a: [1, , 2]\n",
    "trailing flow comma": "a: [1, 2,]\nb: {c: 1,}\n",
    "stray document end": "a: 1\n...\nb: 2\n",
    "key without value in flow": "a: {b}\n",
    "explicit null value": "a: !!null ''\n",
    "long line": "a: " + "x" * 20000 + "\n",
    "many keys": "".join(f"k{i}: {i}\n" for i in range(2000)),
    # Comment lines and block scalars' bodies are not syntax: `<<`, `&&`, `*,` and `!=` there
    # do not send a file to the slow path (an artifact's header and launch scripts).
    "heredoc in a comment": "# cat <<'EOF'\n#   a: &x 1\na: 1\n",
    "script in a block scalar": "run: |\n  a && b\n  for f in *.log; do [ $x != 1 ]; done\n  cat <<EOF\n  ? x\n  EOF\nb: 2\n",
    "script in a sequence item": "command:\n- bash\n- -c\n- |-\n  x=(a *, b) && !y\n\n  z\nafter: ok\n",
    "block scalar with indicators": "a: >2-\n    &x text\n  *y\nb: 1\n",
    "block scalar then an anchor": "a: |\n  text\nb: &x {c: 1}\nd: *x\n",
    "header look-alike in a value": "a: x |\n  &y\nb: 1\n",
    "header look-alike in flow": "m: {a: \"x |\n  y\", b: &z 1, c: *z}\n",
    "tag behind a header look-alike": "m: {a: \"x |\n  y\", b: !foo 1}\n",
    "binary behind a header look-alike": "m: {a: \"x |\n  y\", b: !!binary aGk=}\n",
    "set behind a header look-alike": "m: {a: \"x |\n  y\", b: !!set {x}}\n",
    "merge key behind a header look-alike": "m: {a: \"x |\n  y\", <<: {x: 1}}\n",
    "pipe in a comment": "a: b # not a header |\n  c\n",
    "hash before a pipe": "'a#b': |\n  &x\nc: 1\n",
    "explicit plain tags": "a: !!str 12\nb: !!int '7'\nc: !!float 1\nd: !!null ''\ne: !!bool true\n",
}


def _both(text: str, name: str = "t.yaml"):
    """(fast path outcome, round-trip outcome): (data, positions) or the error's text."""
    def outcome(run):
        try:
            data, locs = run()
        except ManifestoError as exc:
            return "error", str(exc)
        return repr(data), {k: (o.line, o.col) for k, o in locs.table.items()}

    fast = outcome(lambda: yamlio._fast_parse(text, name) or yamlio.parse_yaml(text, name))
    return fast, outcome(lambda: _slow(text, name))


def _slow(text: str, name: str):
    original = yamlio._fast_parse
    yamlio._fast_parse = lambda text, name, **_: None
    try:
        return yamlio.parse_yaml(text, name)
    finally:
        yamlio._fast_parse = original


_ORIGINAL_SPECIAL = re.compile(r"(?:^|[\s\[{,])[&*!]\S|^%|(?:^|[\s\[{,])\?(?:\s|$)|<<", re.M)


@pytest.mark.parametrize("text", [*EDGE_CASES.values(), "&", "&x", " &x", ",*y", "a!b", "\n!t", "x?", " ?",
                                  "? ", "[?\n", "%", "a%", "\n%Y", "<", "<<", "a <", "\t*a", "{&b", "*\n"])
def test_the_special_pattern_answers_as_the_plain_one(text):
    """``_SPECIAL`` is written backwards from the indicator for speed; it finds one exactly
    where the plain spelling of the same rules does."""
    assert bool(yamlio._SPECIAL.search(text)) == bool(_ORIGINAL_SPECIAL.search(text))
    for line in text.splitlines():
        assert bool(yamlio._SPECIAL.search(line)) == bool(_ORIGINAL_SPECIAL.search(line))


def test_every_document_of_every_artifact_takes_the_fast_path_and_reads_the_same():
    """The artifacts' headers (heredocs behind `#`) and launch scripts (block scalars) no
    longer send their documents to the slow path (3 s of a `diff -o json`, issue 41)."""
    paths = sorted(glob.glob(str(REPO / "out" / "**" / "*.yaml"), recursive=True))
    assert len(paths) > 20
    documents = 0
    for path in paths:
        lines = open(path, encoding="utf-8").read().split("\n")
        starts = [0] + [i for i, line in enumerate(lines) if i and re.match(r"---(?:[ \t\r]|$)", line)]
        for first, stop in zip(starts, starts[1:] + [len(lines)]):
            text = "\n".join(lines[first:stop]) + "\n"
            assert yamlio._fast_parse(text, path) is not None, (path, first + 1)
            fast, slow = _both(text, path)
            assert fast == slow, (path, first + 1)
            documents += 1
    assert documents > 300


def test_the_fast_path_is_taken_for_plain_files():
    assert yamlio._fast_loader() is not None, "ruamel.yaml[libyaml] (ruamel.yaml.clibz) is a dependency"
    text = (REPO / "clusters" / "example-gb200.yaml").read_text()
    assert yamlio._fast_parse(text, "c.yaml") is not None
    assert yamlio._fast_parse(EDGE_CASES["anchor and alias"], "c.yaml") is None
    for case in ("heredoc in a comment", "script in a block scalar", "script in a sequence item",
                 "block scalar with indicators"):
        assert yamlio._fast_parse(EDGE_CASES[case], "c.yaml") is not None, case
    for case in ("block scalar then an anchor", "hash before a pipe", "tag behind a header look-alike",
                 "set behind a header look-alike", "merge key behind a header look-alike"):
        assert yamlio._fast_parse(EDGE_CASES[case], "c.yaml") is None, case


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_cases_read_the_same_both_ways(case):
    fast, slow = _both(EDGE_CASES[case])
    assert fast == slow


def _yaml_files() -> list:
    paths = [p for p in glob.glob(str(REPO / "**" / "*.yaml"), recursive=True) if "/.venv/" not in p]
    paths += glob.glob(str(kit.shared_dir() / "reference" / "**" / "*.yaml"), recursive=True)
    return sorted(p for p in set(paths) if _utf8(p))


def _utf8(path: str) -> bool:
    try:
        open(path, encoding="utf-8").read()
    except UnicodeDecodeError:
        return False  # a test input of the reader's own checks, never parsed
    return True


def test_most_yaml_files_take_the_fast_path():
    taken = sum(yamlio._fast_parse(open(p, encoding="utf-8").read(), p) is not None for p in _yaml_files())
    assert taken > 100  # the bundled examples and the upstream inputs are plain YAML


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.replace(str(REPO) + "/", ""))
def test_every_yaml_file_reads_the_same_both_ways(path):
    fast, slow = _both(open(path, encoding="utf-8").read(), path)
    assert fast == slow


# Lines that put anchors, aliases, tags, merge keys and directives inside, after and beside
# block scalars, comments and multi-line quoted or flow values: what `_syntax_lines` leaves
# out of `_SPECIAL`'s view must never make the fast path read a file otherwise.
_LINES = [
    "a: |", "a: >-", "- |", "  b: &x 1", "  *x", "c: *x", "  !foo 1", "d: !foo 1", "# <<: x", "  <<: {y: 1}",
    'e: {f: "x |', '  g", h: &z 1, i: *z}', "  && ||", "k: x |", "  - &q 2", "", "  ", "m:", "  - n", "  - *q",
    "  text", "    more", "o: 1", "'p#': |", "  &w 3", "r: [1, *x]", "? s", ": t", "%YAML 1.2", "---",
    "u: !!str 5", "v: !!binary aGk=", "  x: !!set {a}", 'w: "a', "  # c", "y: >", "   z", " <<: *x",
]


@pytest.mark.filterwarnings("ignore::Warning")  # ruamel warns of a reused anchor; both paths read it
@hypothesis.settings(max_examples=400, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(hypothesis.strategies.lists(hypothesis.strategies.sampled_from(_LINES), max_size=8))
def test_block_scalars_and_comments_beside_special_syntax_read_the_same_both_ways(lines):
    text = "\n".join(lines) + "\n"
    fast, slow = _both(text)
    assert fast == slow, text
