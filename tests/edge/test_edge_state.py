"""A planted build manifest (``out/.cache/state``, committed or written by someone else) is
data: a record whose fields have the wrong types, or whose artifact suffix would aim a write
anywhere but out/, makes the whole manifest a miss, and the build writes only its own files."""

from __future__ import annotations

import marshal
import os
import sys
import zlib

from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "build_graph"))
from buildkit import PAIRS, Runner, artifacts, expected_artifacts, make_tree  # noqa: E402

from manifesto.build_graph import state as build_state

pytestmark = pytest.mark.integration  # every test here starts a process

#: What a planted record's fields are replaced by (index into PairRecord, value).
TAMPER = {
    "suffix-escapes": (5, "/../../../../canary"),
    "suffix-absolute": (5, "/tmp/canary.yaml"),
    "suffix-odd": (5, ".yaml/../../canary"),
    "suffix-not-text": (5, 7),
    "inputs-not-tuple": (1, "models/x.yaml"),
    "inputs-holds-bytes": (1, (b"models/x.yaml",)),
    "digests-text": (2, "abc"),
    "key-not-text": (3, ("k",)),
    "art-digest-code": (6, compile("1", "<planted>", "eval")),
    "written-number": (8, 3),
}


def _plant(path, index: int, value) -> None:
    """Rewrite one field of every pair record, under a valid header and this user's MAC (the
    records' own checks must hold even for a manifest that verifies)."""
    blob = path.read_bytes()
    head = build_state._HEADER
    state = marshal.loads(blob[head:])
    state["pairs"] = {k: v[:index] + (value,) + v[index + 1:] for k, v in state["pairs"].items()}
    payload = marshal.dumps(state)
    path.write_bytes(build_state.header_for(payload) + payload)


@pytest.mark.parametrize("case", sorted(TAMPER))
def test_a_planted_manifest_is_ignored_and_writes_nothing_elsewhere(tmp_path, case):
    root = make_tree(tmp_path / "tree")
    run = Runner(root, tmp_path / "renders.log")
    assert run("build").returncode == 0
    state = root / "out/.cache/state"
    index, value = TAMPER[case]
    _plant(state, index, value)
    for name in list(artifacts(root)):
        (root / "out" / name).unlink()  # every pair must be written again, from a fresh render
    before = {p for p in tmp_path.rglob("*")}
    proc = run("build")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == (f"warning: {state}: corrupt build cache, ignoring it "
                                          "(this build re-checks every pair)")
    assert set(artifacts(root)) == expected_artifacts()
    made = {p for p in tmp_path.rglob("*")} - before
    assert all(root / "out" in p.parents or p == root / "out" for p in made if "renders.log" not in p.name), \
        sorted(map(str, made))
    assert not any(p.name.startswith("canary") for p in tmp_path.rglob("*"))
    assert not os.path.exists("/tmp/canary.yaml")
    assert run("build", "--check").returncode == 0


def test_the_checks_accept_what_a_build_writes(tmp_path):
    root = make_tree(tmp_path / "tree")
    run = Runner(root, tmp_path / "renders.log")
    assert run("build").returncode == 0
    decoded = build_state._decode((root / "out/.cache/state").read_bytes())
    assert isinstance(decoded, build_state.BuildState) and len(decoded.pairs) == len(PAIRS)


@pytest.mark.parametrize(("name", "shown"), [("evil\x1b[2Jred.yaml", "evil\\x1b[2Jred.yaml"),
                                           ("look\u200balike.yaml", "look\\u200balike.yaml"),
                                           ("rtl\u202egnp.yaml", "rtl\\u202egnp.yaml"),
                                           ("tab\tname.yaml", "tab\\x09name.yaml")])
def test_a_source_whose_name_does_not_print_as_itself_is_refused(tmp_path, name, shown):
    """A file name reaches the build report, addresses and out/; one with a terminal escape, a
    zero-width or bidi character is one error naming it (escaped), and nothing is written."""
    root = make_tree(tmp_path / "tree", {f"models/qwen/{name}": "release: odd\n"})
    run = Runner(root, tmp_path / "renders.log")
    proc = run("build", check=False)
    assert proc.returncode == 1
    assert proc.stderr == (f"error: models/qwen/{shown}: a source file's name holds the control or invisible "
                           f"character U+{ord(next(c for c in name if not c.isprintable())):04X}; rename the file "
                           "(a target's name must print as itself)\n")
    assert "\x1b" not in proc.stdout + proc.stderr
    assert not (root / "out").exists() or artifacts(root) == {}


def test_a_manifest_under_another_key_is_a_quiet_cold_build(tmp_path):
    """A clone's (or another user's) manifest, its CRC intact but sealed under another key:
    not decoded, not reported as damage; the build renders from scratch."""
    import marshal

    root = make_tree(tmp_path / "tree")
    runner = Runner(root, tmp_path / "log")
    runner("build")
    path = root / "out/.cache/state"
    blob = path.read_bytes()
    payload = blob[build_state._HEADER:]
    state = marshal.loads(payload)
    header = build_state._MAGIC + build_state._version_tag() + zlib.crc32(payload).to_bytes(4, "little") + b"\0" * 16
    path.write_bytes(header + payload)
    assert state["pairs"]
    proc = runner("build")
    assert "corrupt" not in proc.stderr and "Traceback" not in proc.stderr
