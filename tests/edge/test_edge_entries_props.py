"""The store-entry and remote-record decoders (``manifesto.edge.entries``) under random bytes
and random structures: a clean miss or the right value, never a traceback, within a time
bound; and the grammar of their path-like fields."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from manifesto.load.digest import digest
from manifesto.edge import entries
from manifesto.edge.entries import BadEntry
from manifesto.tasks import entries as store_entries

store_entries.install()  # the tasks' codecs are registered by an explicit call, not by the import

KEY = "0123456789abcdef0123456789abcdef"
SHA = "ab" * 32
BOUND = 2.0  # seconds for one decode, however hostile the bytes

HOSTILE_PATHS = ["../x", "/etc/passwd", "a/../../b", "a//b", "./a", "a/./b", "a\\b", "a\x00b", "a\nb", "\u202eab",
                 "", "..", ".", "a/", "/", "x" * 5000, "models/qwen/a.yaml", "/opt/catalog/a.yaml", "/etc/shadow"]
SUFFIXES = ["", ".yaml", ".sbatch", ".yml", "/../x.yaml", "../../a", "/abs.yaml", ".yaml\n", ".YAML", "x", 7, None]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
    | st.sampled_from(HOSTILE_PATHS),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


def _result(**fields) -> dict:
    text = fields.pop("text", "kind: ConfigMap\n")
    base = {"kind": "result", "key": KEY, "task": "render a @ b", "status": "ok", "suffix": ".yaml", "text": text,
            "text_digest": digest(text.encode()), "reason": "", "inputs": ["models/a.yaml"], "digests": [KEY],
            "budget": None, "products": []}
    return {**base, **fields}


results = st.fixed_dictionaries({}, optional={
    "kind": st.sampled_from(["result", "rendered", "request", "code", "parsed", "resolved", 1]),
    "status": st.sampled_from(["ok", "skipped", "failed", "OK", 3]),
    "suffix": st.sampled_from(SUFFIXES),
    "inputs": st.lists(st.sampled_from(HOSTILE_PATHS), max_size=3) | json_values,
    "digests": st.lists(st.sampled_from([KEY, "-", "../x", 5]), max_size=3),
    "budget": json_values,
    "products": st.lists(st.sampled_from([KEY, "../k", ""]), max_size=2),
    "reason": json_values,
}).map(lambda extra: _result(**extra))


def _timed(fn, *args):
    started = time.monotonic()
    try:
        return fn(*args)
    finally:
        assert time.monotonic() - started < BOUND


def _store_decode(blob: bytes):
    entry, problem = _timed(store_entries.decode, blob, KEY)
    assert (entry is None) != (problem is None)
    if problem is not None:
        assert isinstance(problem, str) and problem.isprintable() and len(problem) < 400
        return None
    # the right value: what the grammar allows, and what was encoded
    assert entry.key == KEY and entries.key_ok(entry.key)
    if hasattr(entry, "suffix"):
        assert entry.suffix in entries.SUFFIXES
    if hasattr(entry, "inputs"):
        assert all(entries.input_ok(p) for p in entry.inputs) and len(entry.inputs) == len(entry.digests)
    assert store_entries.decode(store_entries.encode(entry), KEY) == (entry, None)
    return entry


def _plain(blob: bytes):
    entry = _timed(entries.load_plain, blob, KEY, digest)
    if entry is not None:
        assert entry["key"] == KEY
        if entry.get("kind") == "result":
            assert entry["suffix"] in entries.SUFFIXES and all(entries.input_ok(p) for p in entry["inputs"])
    return entry


def _remote(blob: bytes):
    for decode in (entries.decode_remote_index, entries.decode_remote_record):
        try:
            value = _timed(decode, blob)
        except BadEntry as exc:
            assert str(exc).isprintable()
            continue
        if hasattr(value, "inputs"):
            assert all(entries.shared_input_ok(p) for p in value.inputs)
            assert not any(".." in p.split("/") for p in value.inputs)
        else:  # a record only ever supplies an artifact
            assert value.suffix in entries.SUFFIXES and value.status == "ok" and value.reason == ""
            assert value.suffix and len(value.text_sha256) == 64


FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.binary(max_size=2000))
def test_random_bytes_are_a_clean_miss(blob):
    _store_decode(blob)
    _plain(blob)
    _remote(blob)


@FAST
@given(json_values)
def test_random_structures_are_a_clean_miss_or_a_value(value):
    blob = json.dumps(value).encode()
    _store_decode(blob)
    _plain(blob)
    _remote(blob)


@FAST
@given(results)
def test_result_like_entries_decode_only_within_the_grammar(value):
    blob = json.dumps(value).encode()
    entry = _store_decode(blob)
    plain = _plain(blob)
    _remote(blob)
    if not (isinstance(value["suffix"], str) and value["suffix"] in entries.SUFFIXES):
        assert plain is None
        assert entry is None or not hasattr(entry, "suffix")  # a kind without a suffix ignores the field


@FAST
@given(st.sampled_from(SUFFIXES), st.sampled_from(["ok", "skipped", "failed"]), st.sampled_from([SHA, "x", KEY]),
       st.lists(st.sampled_from(HOSTILE_PATHS), max_size=3))
def test_remote_records_obey_the_grammar(suffix, status, sha, inputs):
    record = {"task": "t", "status": status, "suffix": suffix, "reason": "", "text_sha256": sha, "budget": None}
    blob = json.dumps(record).encode()
    good = isinstance(suffix, str) and suffix in entries.SUFFIXES and status == "ok" and suffix and sha == SHA
    try:
        entries.decode_remote_record(blob)
        assert good
    except BadEntry:
        assert not good
    blob = json.dumps({"inputs": inputs}).encode()
    good = all(entries.shared_input_ok(p) for p in inputs) and len(set(inputs)) == len(inputs)
    try:
        entries.decode_remote_index(blob)
        assert good
    except BadEntry:
        assert not good


@pytest.mark.parametrize("blob", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 200_000 + b"1" + b"}" * 200_000,
    json.dumps(_result(budget=None)).encode()[:-1] + b', "budget": ' + b"[" * 70 + b"]" * 70 + b"}",
    b'{"key": "' + b"\\u0000" * 10 + b'"}',
    b"\xff\xfe" + json.dumps(_result()).encode(),
    b" " * (entries.MAX_ENTRY + 1),
], ids=["deep-lists", "deep-objects", "depth-70-budget", "nul-key", "not-utf8", "oversized"])
def test_hostile_shapes_are_refused_before_decoding(blob):
    assert _store_decode(blob) is None
    assert _plain(blob) is None
    with pytest.raises(BadEntry):
        entries.decode_remote_record(blob)


def test_brackets_inside_strings_do_not_count_as_nesting():
    reason = "[" * 500 + "{" * 500 + '\\"['
    entry = _store_decode(json.dumps(_result(status="failed", suffix="", reason=reason)).encode())
    assert entry is not None and entry.reason == reason


def test_a_good_entry_decodes_to_its_value():
    blob = json.dumps(_result(inputs=["/opt/x/catalog/a.yaml", "../specs/b.yaml"], digests=[KEY, "-"])).encode()
    entry = _store_decode(blob)
    assert entry.suffix == ".yaml" and entry.inputs == ("/opt/x/catalog/a.yaml", "../specs/b.yaml")
    assert _plain(blob)["inputs"] == ["/opt/x/catalog/a.yaml", "../specs/b.yaml"]


@pytest.mark.parametrize("path,ok", [
    ("models/qwen/a.yaml", True), ("/opt/catalog/a.json", True), ("/opt/catalog/x/b.yml", True),
    ("a", False), ("/opt/catalog", False), ("/opt/catalogue/a.json", False), ("/opt/a.json", False),
    ("/home/u/.ssh/id_rsa.json", False), ("out/example/a.yaml", False), (".git/config.yaml", False),
    ("models/.hidden/a.yaml", False), ("models/qwen/a.sh", False), ("/opt/catalog/../a.json", False),
    ("../a.yaml", False), ("/etc/passwd", False), ("/a/../b.yaml", False), ("a//b.yaml", False),
    ("./a.yaml", False), ("a\\b.yaml", False), ("a\x1b[31m.yaml", False), ("", False), ("/", False),
    ("x/" * 3000 + "a.yaml", False),
])
def test_shared_inputs_are_workspace_or_catalog_files(path, ok):
    assert entries.shared_input_ok(path, ("/opt/catalog",)) is ok
    assert not entries.shared_input_ok(path) or not path.startswith("/")  # no absolute path without a root


def test_a_rendered_artifact_needs_an_artifact_suffix():
    text = "kind: ConfigMap\n"
    base = {"kind": "rendered", "key": KEY, "task": "render x", "status": "ok", "text": text,
            "text_digest": digest(text.encode()), "refusal": None}
    assert _store_decode(json.dumps({**base, "suffix": ".sbatch"}).encode()).suffix == ".sbatch"
    for suffix in ("", "/../../x.yaml", ".yaml/x"):
        assert _store_decode(json.dumps({**base, "suffix": suffix}).encode()) is None


def test_the_remote_budget_has_the_budgets_shape():
    """The edge checks a shared budget against its own copy of the Budget Structs (it sits
    below ``manifesto.resolve``): the same fields in the same order, so what it gives back is
    what ``resolve.budget`` makes."""
    import msgspec

    from manifesto.resolve.plan import Budget, RoleBudget

    remote = entries._types()[4]
    role = entries._types()[5]
    assert remote.__struct_fields__ == Budget.__struct_fields__
    assert role.__struct_fields__ == RoleBudget.__struct_fields__
    made = Budget(roles=(RoleBudget("decode", 8, 1, 1, 2.5),), gpus=8, nodes=1, pods=1, accelerator="b200",
                  hourly_price=0.3125, hourly_cost=2.5)
    plain = msgspec.to_builtins(made)
    assert entries.check_budget(plain) == plain


@pytest.mark.parametrize("change", [
    {"gpus": 9}, {"gpus": -8}, {"gpus": 1 << 40}, {"gpus": True}, {"gpus": 8.0}, {"accelerator": "b200\x1b[2J"},
    {"accelerator": ""}, {"hourly_cost": float("inf")}, {"hourly_cost": None}, {"roles": []}, {"extra": 1},
])
def test_a_budget_that_does_not_add_up_is_refused(change):
    plain = {"roles": [{"role": "decode", "gpus": 8, "nodes": 1, "pods": 1, "hourly_cost": 2.5}], "gpus": 8,
             "nodes": 1, "pods": 1, "accelerator": "b200", "hourly_price": 0.3125, "hourly_cost": 2.5}
    with pytest.raises(BadEntry):
        entries.check_budget({**plain, **change})
