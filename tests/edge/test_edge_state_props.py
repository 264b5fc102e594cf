"""The build manifest's and stat cache's decoders under random bytes and random structures
(issue 35): ``out/.cache/state`` comes with a clone, so whatever it holds, a build reads a
clean miss or a manifest whose every part has the type and grammar a build acts on; never a
traceback, and nothing decoded names a path outside the workspace.

Random structures are sealed with this user's own MAC (what only this user's manifesto can
write), so they reach the checks below the MAC: those must hold on their own."""

from __future__ import annotations

import marshal
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import manifesto.build_graph.state as build_state
from manifesto.build_graph import sources
from manifesto.build_graph.generators import folder_ok, from_rows
from manifesto.build_graph.statcache import StatCache

HOSTILE = ["../x", "/etc/passwd", "a/../../b", "", ".", "..", "a\nb", "\u202eab", "x" * 300, "models/a.yaml",
           "deploy", "../../../outside/pwned", "clusters", "ok-name"]

leaves = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.text(max_size=12)
          | st.sampled_from(HOSTILE) | st.binary(max_size=8))
values = st.recursive(leaves, lambda children: st.tuples(children, children) | st.tuples(children, children, children)
                      | st.lists(children, max_size=3).map(tuple)
                      | st.dictionaries(st.text(max_size=6) | st.integers(0, 9), children, max_size=3), max_leaves=25)


def _sealed(state) -> bytes:
    payload = marshal.dumps(state.plain())
    return build_state.header_for(payload) + payload


def _load(tmp_path, blob: bytes):
    path = tmp_path / "state"
    path.write_bytes(blob)
    warned = []
    state = build_state.load_state(str(path), warned.append)
    assert isinstance(state, build_state.BuildState) and isinstance(state.pairs, dict) and isinstance(state.stat, build_state.StatTable)
    return state


def _use(tmp_path, state) -> None:
    """What a build does with each part of a manifest it accepted: none of it raises, and no
    name or folder it yields leaves the workspace."""
    cached = state.buildfile
    if isinstance(cached, tuple) and len(cached) == 3 and isinstance(cached[1], dict):
        config = sources._cached_config(cached[1])
        if config is not None:
            for gen in config["generators"]:
                assert folder_ok(gen.path) if hasattr(gen, "path") else gen.name.isprintable()
    listing = state.listing
    if listing and sources._listing_ok(listing):
        for names in listing[2].values():
            for name in names or ():
                assert not name.startswith("/") and ".." not in name.split("/")
    cache = StatCache(str(tmp_path), state.stat)
    for key in list(state.stat)[:5]:
        cache.digest(key)
    for rec in state.pairs.values():
        assert rec.suffix in ("", ".yaml", ".sbatch") and all(isinstance(p, str) for p in rec.inputs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_random_bytes_are_a_miss(tmp_path, blob):
    state = _load(tmp_path, blob)
    assert state.pairs == {} or blob.startswith(build_state._MAGIC)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(min_size=1, max_size=64))
def test_bytes_under_a_foreign_mac_are_a_miss(tmp_path, payload):
    """A manifest another user's (or a stranger's) key sealed, its CRC right: ignored whatever it
    holds, without a word."""
    import zlib

    blob = build_state._MAGIC + build_state._version_tag() + zlib.crc32(payload).to_bytes(4, "little") + os.urandom(16) + payload
    assert _load(tmp_path, blob) == build_state.new_state()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(part=st.sampled_from(["pairs", "stat", "buildfile", "listing", "code", "tasks", "store"]), value=values)
def test_a_sealed_manifest_of_any_shape_is_checked_before_use(tmp_path, part, value):
    state = build_state.new_state()
    setattr(state, part, value)
    _use(tmp_path, _load(tmp_path, _sealed(state)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.tuples(st.sampled_from(HOSTILE), st.sampled_from(HOSTILE)) | values,
       record=st.tuples(values, st.lists(st.sampled_from(HOSTILE), max_size=3).map(tuple), values,
                        st.text(max_size=4), st.sampled_from(["ok", "failed", "skipped", "bogus", 3]),
                        st.sampled_from(["", ".yaml", ".sbatch", "/../../x.yaml", ".yaml\n", 7]), st.text(max_size=4),
                        st.text(max_size=20), st.text(max_size=4), values))
def test_a_sealed_record_of_any_shape_is_a_record_or_a_miss(tmp_path, key, record):
    state = build_state.new_state()
    try:
        state.pairs = {key: record}
    except TypeError:  # an unhashable key cannot be in a marshalled dict either
        return
    _use(tmp_path, _load(tmp_path, _sealed(state)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.sampled_from(["model", "cluster", "deployment", "gitops", "monitoring"]),
                               st.sampled_from(HOSTILE), values, values, values, values), max_size=3))
def test_planted_generator_rows_never_name_a_folder_outside(rows):
    rows = tuple(tuple(r[: 6 if r[0] in ("model", "cluster") else 4]) for r in rows)
    generators = from_rows(rows)
    for gen in generators or ():
        if hasattr(gen, "path"):
            assert folder_ok(gen.path)
        else:
            assert "/" not in gen.name and ".." not in gen.name


def test_a_sealed_five_byte_list_of_two_billion_items_is_a_miss(tmp_path):
    """marshal's list header claiming 2**31 - 1 items: a MemoryError inside the decoder is a
    corrupt manifest, not a crash (and without this user's MAC it is never decoded at all)."""
    payload = b"[\xff\xff\xff\x7f"
    blob = build_state.header_for(payload) + payload
    assert _load(tmp_path, blob) == build_state.new_state()
