"""Issue 26, the edit path: a build lists the store's 256 folders for a killed build's
temporary files only when the last build was killed (its mark is still in out/.lock), and a
manifest save makes plain only the records the build changed."""

from __future__ import annotations

import os
import signal
import time

import fake_renderer
import pytest
from buildkit import TREE, Runner, make_tree, write_files

import manifesto.build_graph.outdir as outdir
import manifesto.build_graph.saving as saving
import manifesto.build_graph.state as state_mod
from manifesto.build_graph import api
from manifesto.build_graph.state import PairRecord, load_state, new_state, save_state
from manifesto.tasks.status import Status

MANY = {f"models/many/spec{i:02d}.yaml": f"release: r{i}\n" for i in range(12)}


class Quiet:
    warnings: list

    def __init__(self) -> None:
        self.warnings = []

    def warn(self, message) -> None:
        self.warnings.append(message)

    wait = warn

    def progress(self, done, total, label) -> None:
        pass

    def progress_done(self) -> None:
        pass


def _build(tree, *addresses, **kwargs):
    return api.build(addresses or ["//::"], root=tree, renderer="fake_renderer", ui=Quiet(),
                     render=fake_renderer.run, **kwargs)


@pytest.fixture
def tree(tmp_path):
    write_files(tmp_path, TREE, age=10)
    return tmp_path


def _shard_listings(monkeypatch, tree) -> list:
    """Record every os.listdir of one of the store's folders from now on."""
    tasks = os.path.join(str(tree), "out", ".cache", "tasks")
    calls = []
    real = os.listdir

    def listdir(path="."):
        # the store lists its folders by descriptor: the descriptor's folder is what counts
        where = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else os.fspath(path)
        if os.path.dirname(where) == os.path.realpath(tasks):
            calls.append(where)
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    return calls


def _edit(tree, rel: str, text: str) -> None:
    write_files(tree, {rel: text}, age=5)


def test_an_ordinary_build_does_not_list_the_store_folders(tree, monkeypatch):
    _build(tree)
    lock = tree / "out" / ".lock"
    assert lock.read_bytes() == b""  # a build that ended leaves no mark
    calls = _shard_listings(monkeypatch, tree)
    _edit(tree, "models/qwen/aggregated.yaml", TREE["models/qwen/aggregated.yaml"] + "# edited\n")
    report = _build(tree)
    assert report.counts()["rendered"] == 3
    assert calls == [] and lock.read_bytes() == b""


def test_a_mark_left_in_the_lock_makes_the_next_build_clean_the_store(tree, monkeypatch):
    _build(tree)
    cache = tree / "out" / ".cache"
    shard = next(p for p in (cache / "tasks").iterdir() if p.is_dir())
    leftover = shard / f".{shard.name}abc.k1ll3d.tmp~"
    leftover.write_bytes(b"half")
    _build(tree)  # nothing to render and no mark: the store is not listed, the file stays
    assert leftover.exists()
    (tree / "out" / ".lock").write_bytes(b"left by a killed build\n")
    calls = _shard_listings(monkeypatch, tree)
    report = _build(tree)  # nothing to render, but the mark takes the lock and cleans up
    assert report.counts() == {"rendered": 0, "up to date": 8, "skipped": 4, "failed": 0}
    assert not leftover.exists() and len(calls) >= 1
    assert (tree / "out" / ".lock").read_bytes() == b""


def test_a_check_keeps_the_mark_for_the_next_build(tree):
    _build(tree)
    lock = tree / "out" / ".lock"
    lock.write_bytes(b"left by a killed build\n")
    _edit(tree, "models/qwen/aggregated.yaml", TREE["models/qwen/aggregated.yaml"] + "# edited\n")
    _build(tree, check=True)  # renders into the store, cleans nothing: the mark stays
    assert lock.read_bytes() == b"left by a killed build\n"
    _build(tree)
    assert lock.read_bytes() == b""


@pytest.mark.integration
def test_a_killed_build_leaves_its_mark_and_the_next_one_cleans_up(tmp_path):
    run = Runner(make_tree(tmp_path / "tree", MANY), tmp_path / "renders.log")
    proc = run.popen("build", "--jobs", "1", FAKE_RENDER_SLEEP="150")
    store = run.root / "out" / ".cache" / "tasks"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(p.is_dir() for p in store.glob("??")):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lock = run.root / "out" / ".lock"
    assert lock.read_bytes() != b""  # killed before its end: the mark stays
    shard = next(p for p in store.iterdir() if p.is_dir())
    leftover = shard / f".{shard.name}abc.x1y2.tmp~"  # as if killed between write and rename
    leftover.write_bytes(b"half")
    run("build")
    assert not leftover.exists() and lock.read_bytes() == b""
    assert run("build", "--check").returncode == 0


# -- what an edit build goes over ---------------------------------------------------------


def _count_referenced(monkeypatch) -> list:
    calls = []
    real = saving._referenced

    def referenced(ws, state, graph):
        calls.append(1)
        return real(ws, state, graph)

    monkeypatch.setattr(saving, "_referenced", referenced)
    return calls


def test_an_edit_keeping_the_inputs_does_not_go_over_every_record(tree, monkeypatch):
    _build(tree)
    for path in (tree, *(p for p in tree.rglob("*") if p.is_dir() and ".cache" not in p.parts)):
        os.utime(path, (time.time() - 5, time.time() - 5))  # folders listed long after they changed
    _build(tree)  # their listings are trusted from now on
    calls = _count_referenced(monkeypatch)
    _edit(tree, "models/wide/1p1d.yaml", TREE["models/wide/1p1d.yaml"] + "# edited\n")
    assert _build(tree).counts()["rendered"] >= 1
    assert calls == []


def test_an_edit_that_drops_an_input_forgets_it(tree, monkeypatch):
    _build(tree)
    key = "models/wide/wide-base.yaml"
    assert key in load_state(str(tree / "out/.cache/state"), print).stat
    calls = _count_referenced(monkeypatch)
    for spec in ("1p1d", "2p1d"):  # no spec extends the base any more
        _edit(tree, f"models/wide/{spec}.yaml", f"accelerator: gb200\nimage: v1\nrelease: {spec}\n")
    _build(tree)
    assert calls == [1]
    assert key not in load_state(str(tree / "out/.cache/state"), print).stat


def test_an_edit_build_still_prunes_an_artifact_no_target_produces(tree):
    _build(tree)
    write_files(tree, {"out/gpu/qwen/stray.yaml": "kind: Stray\n", "out/gpu/qwen/notes.txt": "kept\n"}, age=5)
    _edit(tree, "models/wide/1p1d.yaml", TREE["models/wide/1p1d.yaml"] + "# edited\n")
    report = _build(tree)
    assert report.pruned == ["out/gpu/qwen/stray.yaml"]
    assert not (tree / "out/gpu/qwen/stray.yaml").exists() and (tree / "out/gpu/qwen/notes.txt").exists()
    assert (tree / "out/gpu/qwen/aggregated.yaml").exists()


# -- the manifest save -------------------------------------------------------------------


def _budget(gpus: int) -> dict:
    return {"gpus": gpus, "nodes": 1, "accelerator": "gb200", "hourly_cost": None}


def _state(n: int):
    state = new_state()
    for i in range(n):
        art = f"{i + 7:032x}"
        state.pairs[(f"models/m{i}.yaml", "c")] = PairRecord(
            ("code", ("user", None)), ("clusters/c.yaml", f"models/m{i}.yaml"), ("d" * 32, f"{i:032x}"),
            f"{i:031x}k", Status.OK, ".yaml", art, "", art, _budget(8 if i % 2 else 4))
    return state


def _count_compacts(monkeypatch) -> list:
    calls = []
    real = state_mod._compact

    def compact(rec, shared):
        calls.append(rec)
        return real(rec, shared)

    monkeypatch.setattr(state_mod, "_compact", compact)
    return calls


def test_a_save_makes_plain_only_the_changed_records(tmp_path, monkeypatch):
    path = str(tmp_path / "state")
    save_state(path, _state(40))
    state = load_state(path, print)
    calls = _count_compacts(monkeypatch)
    pair = ("models/m5.yaml", "c")
    fresh = "".join  # equal values in new objects, as a render gives them
    state.pairs[pair] = state.pairs[pair]._replace(
        context=(fresh(["co", "de"]), (fresh(["us", "er"]), None)),
        inputs=(fresh(["clusters/", "c.yaml"]), "models/m5.yaml"),
        digests=(fresh(["d"] * 32), "e" * 32), key="new", budget=dict(_budget(8)))
    del state.pairs[("models/m6.yaml", "c")]
    save_state(path, state)
    assert calls == [state.pairs[pair]]
    back = load_state(path, print)
    assert back.pairs == state.pairs and "_saved" not in back.pairs
    # the changed record still shares its unchanged parts with the others
    other = back.pairs[("models/m7.yaml", "c")]
    new = back.pairs[pair]
    assert new.digests[0] is other.digests[0] and new.context is other.context and new.budget is other.budget
    assert new.inputs[0] is other.inputs[0]


def test_saves_during_a_build_make_plain_what_came_since_the_last(tmp_path, monkeypatch):
    path = str(tmp_path / "state")
    state = _state(20)
    calls = _count_compacts(monkeypatch)
    save_state(path, state)
    assert len(calls) == 20
    calls.clear()
    extra = _state(23)
    for k in list(extra.pairs)[20:]:
        state.pairs[k] = extra.pairs[k]
    save_state(path, state)
    assert len(calls) == 3
    back = load_state(path, print)
    assert back.pairs == state.pairs
    recs = list(back.pairs.values())
    assert all(r.digests[0] is recs[0].digests[0] and r.context is recs[0].context for r in recs)


def test_a_planted_record_with_unhashable_parts_is_saved_again(tmp_path):
    """The checks on reading keep the fields a build acts on; a context that is a list is read
    (the pair is then rendered again) and its new record saves without a traceback."""
    import marshal

    path = tmp_path / "state"
    save_state(str(path), _state(3))
    blob = path.read_bytes()
    plain = marshal.loads(blob[state_mod._HEADER:])
    key = next(iter(plain["pairs"]))
    plain["pairs"][key] = (["code", ["user"]],) + plain["pairs"][key][1:]
    payload = marshal.dumps(plain)
    path.write_bytes(state_mod.header_for(payload) + payload)
    state = load_state(str(path), print)
    assert state.pairs[key].context == ["code", ["user"]]
    state.pairs[key] = state.pairs[key]._replace(context=("code", ("user", None)))
    save_state(str(path), state)
    assert load_state(str(path), print).pairs == state.pairs


@pytest.mark.parametrize("context", [("budgets by id",), ("budget", b"x")])
def test_a_planted_record_cannot_pose_as_the_sharing_tables_own_keys(tmp_path, context):
    import marshal

    path = tmp_path / "state"
    save_state(str(path), _state(3))
    blob = path.read_bytes()
    plain = marshal.loads(blob[state_mod._HEADER:])
    first, second = list(plain["pairs"])[:2]
    plain["pairs"][first] = (context,) + plain["pairs"][first][1:]
    payload = marshal.dumps(plain)
    path.write_bytes(state_mod.header_for(payload) + payload)
    state = load_state(str(path), print)
    for pair in (first, second):  # both rendered again: the planted one's parts seed the table
        state.pairs[pair] = state.pairs[pair]._replace(key="again", budget=dict(_budget(2)))
    save_state(str(path), state)
    back = load_state(str(path), print).pairs
    assert back == state.pairs and back[second].budget == _budget(2)


def test_saves_during_a_long_build_are_spaced_by_what_they_cost(monkeypatch):
    saves = []

    def slow_save(path, state):
        saves.append(path)
        time.sleep(0.05)

    monkeypatch.setattr(saving, "save_state", slow_save)
    autosave = saving.Autosave("x", {})
    autosave.now_and_then()  # the interval has just begun: no save yet
    assert saves == []
    autosave.saved_ns -= saving._SAVE_EVERY_NS + 1  # as if made two seconds ago
    autosave.now_and_then()
    assert saves == ["x"]
    assert autosave.every_ns >= saving._SAVE_SHARE * 50_000_000 > saving._SAVE_EVERY_NS
    autosave.now_and_then()  # within the new interval: no second save
    assert saves == ["x"]


def test_the_unfinished_mark_is_only_a_regular_file_with_content(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_bytes(b"not empty\n")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "empty").write_bytes(b"")
    os.mkfifo(tmp_path / "fifo")
    assert [outdir.unfinished(str(tmp_path / n)) for n in ("link", "empty", "fifo", "missing", "elsewhere")] == [
        False, False, False, False, True]
