"""The manifest keeps its records' repeated parts once (issue 26: a no-op build at 10,000
pairs reads every record) and reads back exactly what was saved."""

from __future__ import annotations

import marshal

from manifesto.build_graph.state import _HEADER, PairRecord, header_for, load_state, new_state, save_state
from manifesto.tasks.status import Status


def _budget(gpus: int) -> dict:
    return {"roles": ({"role": "decode", "gpus": gpus, "nodes": 1, "pods": 1, "hourly_cost": None},),
            "gpus": gpus, "nodes": 1, "pods": 1, "accelerator": "gb200", "hourly_price": None, "hourly_cost": None}


def _state(n: int):
    state = new_state()
    for i in range(n):
        inputs = ("clusters/c.yaml", f"models/m{i}.yaml")
        digests = ("d" * 32, f"{i:032x}")
        art = f"{i + 7:032x}"
        ok = i % 3 != 2
        state.pairs[(f"models/m{i}.yaml", "c")] = PairRecord(
            ("code", ("user", None)), inputs, digests, f"{i:031x}k", Status.OK if ok else Status.SKIPPED,
            ".yaml" if ok else "", art if ok else "", "" if ok else "needs gb200", art if ok else "",
            _budget(8 if i % 2 else 4) if ok else None)
    return state


def test_round_trip_is_exact(tmp_path):
    state = _state(30)
    path = str(tmp_path / "state")
    save_state(path, state)
    back = load_state(path, warn=lambda m: None)
    assert back.pairs == state.pairs
    assert all(type(r) is PairRecord and type(r.status) is Status for r in back.pairs.values())
    assert [r.status for r in back.pairs.values()] == [r.status for r in state.pairs.values()]


def test_repeated_parts_are_one_object(tmp_path):
    path = str(tmp_path / "state")
    save_state(path, _state(30))
    recs = list(load_state(path, warn=lambda m: None).pairs.values())
    ok = [r for r in recs if r.status == Status.OK]
    eights = [r.budget for r in ok if r.budget["gpus"] == 8]
    assert len(eights) > 1 and all(b is eights[0] for b in eights)
    assert all(r.digests[0] is recs[0].digests[0] for r in recs)  # the cluster's digest, once
    assert all(r.written is r.art_digest for r in ok)


def test_differently_typed_budgets_are_not_merged(tmp_path):
    state = _state(2)
    (a, b) = state.pairs
    state.pairs[a] = state.pairs[a]._replace(budget={"gpus": 1, "hourly_cost": 1.0})
    state.pairs[b] = state.pairs[b]._replace(budget={"gpus": 1, "hourly_cost": 1})
    path = str(tmp_path / "state")
    save_state(path, state)
    back = load_state(path, warn=lambda m: None).pairs
    assert type(back[a].budget["hourly_cost"]) is float and type(back[b].budget["hourly_cost"]) is int


def test_a_bad_record_is_a_corrupt_manifest(tmp_path):
    path = tmp_path / "state"
    save_state(str(path), _state(3))
    blob = path.read_bytes()
    plain = marshal.loads(blob[_HEADER:])
    key = next(iter(plain["pairs"]))
    plain["pairs"][key] = plain["pairs"][key][:5] + ("/../../etc/passwd",) + plain["pairs"][key][6:]
    payload = marshal.dumps(plain)

    path.write_bytes(header_for(payload) + payload)
    warnings = []
    state = load_state(str(path), warnings.append)
    assert state.pairs == {} and len(warnings) == 1 and "corrupt" in warnings[0]


def test_the_single_entries_read_back_named_and_are_plain_tuples_on_disk(tmp_path):
    """The manifest's BUILD.yaml, listing and code entries are named (``state.BuildfileEntry``,
    ``ListingEntry``, ``CodeEntry``), written as plain tuples (marshal takes nothing else);
    one of another width reads back as absent, so the build makes it afresh."""
    from manifesto.build_graph.state import BuildfileEntry, CodeEntry, ListingEntry

    state = _state(2)
    state.buildfile = BuildfileEntry("b" * 32, {"generators": ()}, {})
    state.listing = ListingEntry("b" * 32, {"models": (1, 2, True)}, {0: ("m.yaml",)})
    state.code = CodeEntry("fake", ("k",), ("n",), {"/d": (1, 2, True)}, ("d",), "f")
    path = str(tmp_path / "state")
    save_state(path, state)
    plain = marshal.loads(open(path, "rb").read()[_HEADER:])
    assert all(type(plain[k]) is tuple for k in ("buildfile", "listing", "code"))
    back = load_state(path, warn=lambda m: None)
    for key, cls in (("buildfile", BuildfileEntry), ("listing", ListingEntry), ("code", CodeEntry)):
        assert type(getattr(back, key)) is cls and getattr(back, key) == getattr(state, key)
    assert back.code.fingerprint == "f" and back.listing.files == {0: ("m.yaml",)}
    state.listing = ("b" * 32, {})  # a width no build writes
    save_state(path, state)
    assert load_state(path, warn=lambda m: None).listing is None


def test_no_module_reads_the_manifest_entries_by_position():
    """``state.buildfile[1]``, ``state["buildfile"]``, ``cached[2]``, ``rec.context[0]`` and the
    like: the manifest's parts are attributes of a ``BuildState`` and the entries' fields (a
    record's context too: ``PairContext``) are named."""
    import ast
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "manifesto"
    entry = re.compile(r"""state(\.get\(["']|\[["']|\.)(buildfile|listing|code)\b""")
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Subscript) and (
                    isinstance(node.slice, ast.Slice)
                    or (isinstance(node.slice, ast.Constant) and type(node.slice.value) is int)):
                base = ast.unparse(node.value)
                # a stat entry (``entry[1]``) or a folder's signature (``sig[2]``) outside the
                # modules that define them (the manifest's codec, the signatures' maker)
                named = base in ("entry", "sig") and path.name not in ("state.py", "signatures.py")
                if entry.search(base) or base == "cached" or base.endswith("context") or (
                        named and "build_graph" in path.parts):
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert not found


def test_the_manifest_is_a_typed_state_and_no_module_indexes_it_by_name():
    """Issue 37: the manifest in memory is a ``BuildState`` (one attribute per part), so no
    module reads ``state["pairs"]`` or ``state.get("code")``; only the plain dict marshal
    reads and writes is indexed, inside ``build_graph/state.py``."""
    import ast
    from pathlib import Path

    from manifesto.build_graph.state import BuildState

    assert type(new_state()) is BuildState and new_state() == BuildState() and new_state() != {}
    package = Path(__file__).resolve().parents[2] / "manifesto"
    found = []
    for path in sorted((package / "build_graph").rglob("*.py")):  # (the fake kubectl has a state of its own)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            base = None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                base = ast.unparse(node.value)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                  and node.args and isinstance(node.args[0], ast.Constant)
                  and node.args[0].value in ("pairs", "stat", "buildfile", "listing", "code", "tasks", "store")):
                base = ast.unparse(node.func.value)
            if base is not None and (base == "state" or base.endswith(".state")):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert not found


def test_a_records_context_reads_back_named_and_shared(tmp_path):
    from manifesto.build_graph.state import PairContext

    path = str(tmp_path / "state")
    save_state(path, _state(5))
    plain = marshal.loads(open(path, "rb").read()[_HEADER:])
    assert all(type(rec[0]) is tuple for rec in plain["pairs"].values())  # plain on disk
    recs = list(load_state(path, warn=lambda m: None).pairs.values())
    assert all(type(r.context) is PairContext and r.context is recs[0].context for r in recs)
    assert recs[0].context.code == "code" and recs[0].context.options == ("user", None)


def _sealed_plain(plain: dict) -> bytes:
    payload = marshal.dumps(plain)
    return header_for(payload) + payload


def test_the_stat_table_reads_back_typed_and_is_two_plain_tables_on_disk(tmp_path):
    """Issue 37: the stat cache's entries are not ``(signature, digest)`` tuples read by position:
    a :class:`StatTable` of signatures and digests, written as two dicts of plain values."""
    from manifesto.build_graph.state import StatTable

    path = str(tmp_path / "state")
    state = _state(3)
    state.stat.set("models/m0.yaml", 1 | 2 << 64, "a" * 32)
    state.stat.set("out/x.yaml", 0, "b" * 32)
    save_state(path, state)
    plain = marshal.loads(open(path, "rb").read()[_HEADER:])
    assert plain["stat"] == {"signatures": {"models/m0.yaml": 1 | 2 << 64, "out/x.yaml": 0},
                             "digests": {"models/m0.yaml": "a" * 32, "out/x.yaml": "b" * 32}}
    back = load_state(path, warn=lambda m: None)
    assert type(back.stat) is StatTable and back.stat == state.stat and len(back.stat) == 2
    assert back.stat.drop("out/x.yaml") and not back.stat.drop("out/x.yaml") and list(back.stat) == ["models/m0.yaml"]


def test_a_stat_table_not_of_its_types_is_a_corrupt_manifest(tmp_path):
    """A sealed manifest (this user's key: a damaged or replayed one) whose stat table is not two
    tables of the same text keys, int signatures and text digests is refused whole."""
    path = tmp_path / "state"
    good = new_state().plain()
    bad = [
        {"signatures": {"a": 1}},  # one table
        {"signatures": {"a": 1}, "digests": {"b": "d"}},  # other keys
        {"signatures": {"a": True}, "digests": {"a": "d"}},  # a bool is no signature
        {"signatures": {"a": 1.5}, "digests": {"a": "d"}},
        {"signatures": {"a": 1}, "digests": {"a": b"d"}},
        {"signatures": {1: 1}, "digests": {1: "d"}},
        {"signatures": [("a", 1)], "digests": {"a": "d"}},
        {"signatures": {"a": 1}, "digests": {"a": "d"}, "more": {}},
        {"a": (1, "d")},  # format 8's shape
    ]
    for stat in bad:
        path.write_bytes(_sealed_plain({**good, "stat": stat}))
        warned = []
        assert load_state(str(path), warned.append) == new_state(), stat
        assert warned and "corrupt build cache" in warned[0], stat
    path.write_bytes(_sealed_plain({**good, "stat": {"signatures": {"a": 1}, "digests": {"a": "d"}}}))
    assert load_state(str(path), warn=lambda m: None).stat.digests == {"a": "d"}
