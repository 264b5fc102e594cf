"""The generic store (``manifesto.store``, issue 26): kind-tagged envelopes whose kinds register
their codecs, zlib-compressed bodies, artifact texts kept once by content, and a size bound
that prunes the least recently used entries, never a live one. A damaged or foreign file is
a miss."""

from __future__ import annotations

import os
import zlib

import pytest

from manifesto.load.digest import digest
from manifesto.tasks.status import Status
from manifesto.store import DEFAULT_LIMIT, Store, parse_limit, register, seal
from manifesto.tasks.entries import Rendered, RequestEntry, ResultEntry, install

install()  # the tasks' codecs are registered by an explicit call, not by the import

TEXT = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n" + "".join(
    f"  key{i}: value number {i}\n" for i in range(400))


def _key(n: int) -> str:
    return digest(f"key {n}".encode())


def _result(n: int, text: str = TEXT, products=()) -> ResultEntry:
    return ResultEntry(_key(n), f"render m{n} @ c", Status.OK, ".yaml", text, digest(text.encode()), "",
                  ("models/m.yaml",), (_key(99),), None, tuple(products))


def _age(store: Store, key: str, seconds_ago: float) -> None:
    stamp = 1_700_000_000 - seconds_ago
    os.utime(store.path(key), (stamp, stamp))


def _files(store: Store) -> dict[str, str]:
    return {f.key: f.kind for f in store.scan()}


def _size(store: Store) -> int:
    return sum(f.size for f in store.scan())


def test_entries_round_trip_compressed_and_their_text_is_kept_once(tmp_path):
    store = Store(str(tmp_path))
    first, second = _result(1), _result(2)
    rendered = Rendered(_key(3), "render m1 @ c", Status.OK, ".yaml", TEXT, digest(TEXT.encode()))
    for entry in (first, second, rendered):
        assert store.put(entry)
    assert store.get(first.key) == first and store.get(second.key) == second and store.get(rendered.key) == rendered
    assert store.load(first.key)["text"] == TEXT  # the commands' path (standard library only) too
    kinds = sorted(_files(store).values())
    assert kinds == ["blob", "rendered", "result", "result"]  # one text for three entries
    assert _size(store) < len(TEXT) / 2  # compressed: the text once, and small entries
    raw = open(store.path(first.key), "rb").read()
    assert raw.startswith(b"manifesto-store/4 ") and raw[50:].startswith(b" result text=" + digest(TEXT.encode()).encode())
    assert TEXT[:40].encode() not in raw


def test_a_request_refers_to_its_result_and_a_result_to_its_products(tmp_path):
    store = Store(str(tmp_path))
    product = Rendered(_key(5), "render m @ c", Status.OK, ".yaml", TEXT, digest(TEXT.encode()))
    result = _result(1, products=(product.key,))
    request = RequestEntry(_key(6), "code", ("a.yaml",), (_key(7),), result.key)
    for entry in (product, result, request):
        store.put(entry)
    refs = {f.key: set(f.refs) for f in store.scan()}
    assert refs[result.key] == {product.key, digest(TEXT.encode())} and refs[request.key] == {result.key}


def test_prune_drops_the_least_recently_used_first_and_keeps_live_entries(tmp_path):
    store = Store(str(tmp_path))
    texts = {n: TEXT + f"# variant {n}\n" for n in range(6)}
    for n, text in texts.items():
        store.put(_result(n, text))
        _age(store, _key(n), 100 - n)  # 0 is the oldest, 5 the newest
    _age(store, _key(4), 500)  # old, but the last build used it
    assert store.get(_key(0)) is not None  # a read: now 0 is the most recently used
    keep = {_key(n) for n in (0, 3, 4, 5)} | {digest(texts[n].encode()) for n in (0, 3, 4, 5)}
    room = sum(f.size for f in store.scan() if f.key in keep)  # just what four pairs take
    pruned = store.prune({_key(4)}, max_bytes=room)
    left = {k for k, kind in _files(store).items() if kind == "result"}
    assert left == {_key(0), _key(4), _key(5), _key(3)}  # 1 and 2 went: the least recently used
    assert pruned.bytes == _size(store) == room and pruned.removed == 4  # two results, their texts
    assert all(store.get(k) is not None for k in left)  # no entry lost its text


def test_prune_keeps_what_a_live_entry_refers_to_however_old(tmp_path):
    store = Store(str(tmp_path))
    product = Rendered(_key(10), "render m @ c", Status.OK, ".yaml", TEXT, digest(TEXT.encode()))
    store.put(product)
    store.put(_result(1, "kind: Other\n", products=(product.key,)))
    store.put(_result(2, "kind: Stale\n"))
    _age(store, product.key, 1000)
    pruned = store.prune({_key(1)}, max_bytes=0)
    assert set(_files(store)) == {_key(1), product.key, digest(TEXT.encode()), digest(b"kind: Other\n")}
    assert pruned.live == pruned.bytes == _size(store) and store.get(product.key) == product


def test_prune_drops_a_text_no_entry_holds_and_keeps_a_shared_one(tmp_path):
    store = Store(str(tmp_path))
    store.put(_result(1))
    store.put(_result(2))
    orphan = "kind: Orphan\n"
    store.put(_result(3, orphan))
    os.unlink(store.path(_key(3)))  # its entry went (a write stopped half-way leaves the same)
    store.prune({_key(2)}, max_bytes=0)
    assert _files(store) == {_key(2): "result", digest(TEXT.encode()): "blob"}
    assert store.get(_key(2)) == _result(2)


def test_prune_by_count_and_within_limits_deletes_nothing(tmp_path):
    store = Store(str(tmp_path))
    for n in range(4):
        store.put(_result(n, TEXT + str(n)))
    before = _files(store)
    pruned = store.prune(set(), max_bytes=DEFAULT_LIMIT, max_entries=10)
    assert _files(store) == before and pruned.removed == 0 and pruned.entries == 4
    assert store.collect(set(), 2) == 2 and len(_files(store)) == 4  # two results and their two texts


def test_prune_never_follows_a_link_out_of_the_store(tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep-me").write_bytes(b"x")
    store = Store(str(tmp_path / "store"), root=str(tmp_path))
    store.put(_result(1))
    os.symlink(outside, tmp_path / "store" / "zz")
    store.prune(set(), max_bytes=0)
    assert (outside / "keep-me").exists() and _files(store) == {}
    os.rename(tmp_path / "store", tmp_path / "real")
    os.symlink(tmp_path / "real", tmp_path / "store")  # the store itself a link: nothing is touched
    Store(str(tmp_path / "real")).put(_result(2))
    assert store.prune(set(), max_bytes=0).removed == 0


def _planted(tmp_path, key: str, raw: bytes):
    warnings = []
    store = Store(str(tmp_path), warn=warnings.append)
    os.makedirs(os.path.dirname(store.path(key)), exist_ok=True)
    with open(store.path(key), "wb") as fh:
        fh.write(raw)
    return store, warnings


BODY = b'{"kind": "code", "key": "%s", "fingerprint": "f"}' % _key(1).encode()


def _sealed(rest: bytes) -> bytes:
    """An envelope of any header and body, MAC'd under this user's key (what only this
    user's manifesto can write): its other checks must still catch it."""
    from manifesto.edge.trust import mac

    return b"manifesto-store/4 " + mac(rest).hex().encode() + rest


def _flip(raw: bytes, at: int) -> bytes:
    """``raw`` with the hex digit at ``at`` changed."""
    return raw[:at] + (b"1" if raw[at:at + 1] == b"0" else b"0") + raw[at + 1:]


def _forged(raw: bytes) -> bytes:
    """``raw`` with its MAC made under another key (a store a stranger wrote and committed)."""
    import hashlib

    rest = raw[len(b"manifesto-store/4 ") + 32:]
    return b"manifesto-store/4 " + hashlib.blake2b(rest, key=b"k" * 32, digest_size=16).hexdigest().encode() + rest


@pytest.mark.parametrize("raw, problem", [
    (BODY, "not a store entry of this format"),  # the format before envelopes, or anything else
    (b"manifesto-store/3 code\n" + zlib.compress(BODY), "not a store entry of this format"),  # an older format
    (_forged(seal("code", BODY)), None),  # another key's: a quiet miss, left to be overwritten
    (_flip(seal("code", BODY), 20), None),
    (_sealed(b" code\n" + BODY), "damaged compressed data"),  # not compressed
    (seal("code", BODY)[:-5], None),  # the MAC covers every byte: cut short, it is not ours
    (_sealed(b" code\n" + zlib.compress(BODY)[:-5]), "Input data was truncated"),
    (_sealed(b" code\n" + zlib.compress(BODY) + b"more"), "bytes after the compressed data"),
    (_sealed(b" code ../../x\n" + zlib.compress(BODY)), "a damaged header"),
    (_sealed(b" Code\n" + zlib.compress(BODY)), "a damaged header"),
    (seal("code", b" " * (64 << 20) + BODY), "over the 67108864-byte limit once inflated"),  # a zip bomb
    (seal("result", BODY), "its kind does not match its envelope"),
    (seal("blob", BODY), "a blob where an entry belongs"),
    (seal("code", BODY, {"text": _key(2)}), ""),  # its text is missing: a miss, said by nobody
], ids=["plain-json", "format-3", "foreign-key", "mac-altered", "not-compressed", "cut", "truncated", "trailing",
        "header-path", "header-case", "zip-bomb", "kind-mismatch", "blob-as-entry", "blob-missing"])
def test_a_damaged_entry_is_a_miss(tmp_path, raw, problem):
    store, warnings = _planted(tmp_path, _key(1), raw)
    assert store.get(_key(1)) is None and store.load(_key(1)) is None
    if problem:
        assert len(warnings) == 1 and f"corrupt cache entry ({problem}" in warnings[0]
        assert not os.path.exists(store.path(_key(1)))  # deleted: the next write replaces it
    elif problem is None:  # not ours: nothing said, and the next write replaces it
        assert warnings == [] and os.path.exists(store.path(_key(1)))


def test_an_entry_of_a_kind_nobody_registered_is_a_miss_left_alone(tmp_path):
    store, warnings = _planted(tmp_path, _key(1), seal("from-elsewhere", BODY))
    assert store.get(_key(1)) is None and warnings == [] and os.path.exists(store.path(_key(1)))


def test_an_altered_text_is_a_miss_and_goes(tmp_path):
    warnings = []
    store = Store(str(tmp_path), warn=warnings.append)
    store.put(_result(1))
    blob = store.path(digest(TEXT.encode()))
    with open(blob, "wb") as fh:
        fh.write(seal("blob", TEXT.replace("demo", "evil").encode()))
    assert store.load(_key(1)) is None and store.get(_key(1)) is None
    assert warnings == [f"{blob}: corrupt cache entry (content does not match its digest); rebuilding it"]
    assert not os.path.exists(blob) and not os.path.exists(store.path(_key(1)))
    store.put(_result(1))  # written again, text and all
    assert store.get(_key(1)) == _result(1)


def test_codecs_are_registered_by_their_owners(tmp_path):
    class Note:
        key = _key(8)

    with pytest.raises(TypeError, match="no codec is registered for Note"):
        Store(str(tmp_path)).put(Note())
    for bad in ("blob", "Upper", "", "x" * 40):
        with pytest.raises(ValueError):
            register(bad, Note, None, None)


@pytest.mark.parametrize("text, value", [("0", 0), ("1000", 1000), ("500Mi", 500 << 20), ("2Gi", 2 << 30),
                                         (" 1G ", 10**9), (12345, 12345)])
def test_limits_are_sizes(text, value):
    assert parse_limit(text) == value


@pytest.mark.parametrize("text", ["", "-1", "lots", "1.5.2Gi", "2GB", "2Ei", "１Gi"])
def test_a_bad_limit_says_the_grammar(text):
    with pytest.raises(ValueError, match="expected a size such as 2Gi, 500M or 1000000"):
        parse_limit(text)


def test_a_blob_only_fills_a_field_its_entry_left_empty(tmp_path):
    warnings = []
    store = Store(str(tmp_path), warn=warnings.append)
    store.put(_result(1))  # its text, a blob that exists
    text_key = digest(TEXT.encode())
    store, _ = _planted(tmp_path, _key(1), seal("code", BODY, {"fingerprint": text_key}))
    assert store.load(_key(1)) is None  # the body's fingerprint is not empty: no blob stands in for it
    store.warn = warnings.append
    assert store.get(_key(1)) is None and "a blob field this kind does not have" in warnings[0]


def test_a_text_is_hashed_once_when_its_entry_carries_the_digest(tmp_path, monkeypatch):
    """The codecs hand the store each text with the digest its entry carries: a cold build
    hashes an artifact once, not once per entry that holds it (issue 26's figures)."""
    import manifesto.store as store_module

    hashed = []
    real = store_module.digest
    monkeypatch.setattr(store_module, "digest", lambda data: hashed.append(len(data)) or real(data))
    store = Store(str(tmp_path))
    assert store.put(_result(1))
    assert len(TEXT.encode()) not in hashed
    monkeypatch.undo()
    assert store.get(_key(1)) == _result(1)  # a reader still checks the blob against its name


def test_an_entry_with_a_wrong_text_digest_reads_back_as_a_miss(tmp_path):
    store = Store(str(tmp_path))
    wrong = ResultEntry(_key(1), "render m1 @ c", Status.OK, ".yaml", TEXT, digest(b"other text"), "",
                   ("models/m.yaml",), (_key(99),), None, ())
    store.put(wrong)
    assert store.get(_key(1)) is None


def _same_shard(n: int) -> list[int]:
    """Entry numbers whose keys share the shard of ``_key(n)``."""
    return [m for m in range(2000) if _key(m)[:2] == _key(n)[:2]]


def test_a_confined_store_walks_to_a_shard_once_and_never_through_a_link_planted_later(tmp_path):
    import shutil

    root, outside = tmp_path / "ws", tmp_path / "elsewhere"
    outside.mkdir()
    root.mkdir()
    store = Store(str(root / "out" / ".cache" / "tasks"), root=str(root))
    first, second, third = _same_shard(1)[:3]
    assert store.put(_result(first, text="one\n"))
    shard = root / "out" / ".cache" / "tasks" / _key(first)[:2]
    shard.rename(shard.with_name("moved"))
    shard.symlink_to(outside, target_is_directory=True)
    assert store.put(_result(second, text="two\n"))
    assert list(outside.iterdir()) == []  # the folder it walked to, never the link
    shard.unlink()
    shutil.rmtree(shard.with_name("moved"))  # the shard went: the next write walks again
    assert store.put(_result(third, text="three\n"))
    assert store.get(_key(third)) == _result(third, text="three\n")
    shard.rename(shard.with_name("again"))
    shard.symlink_to(outside, target_is_directory=True)
    store.close()
    fresh = Store(str(root / "out" / ".cache" / "tasks"), root=str(root), warn=lambda m: None)
    assert not fresh.put(_result(first, text="four\n"))  # a new walk refuses the link
    assert list(outside.iterdir()) == []


def test_a_planted_chain_of_blobs_is_pruned_without_recursion(tmp_path):
    """3,000 blobs each holding the next (a planted chain, sealed as this user's would be):
    pruning the entry at its head frees them one after another, in a loop, not a recursion."""
    store = Store(str(tmp_path))
    keys = [f"{i:032x}" for i in range(1, 3001)]
    for here, nxt in zip(keys, keys[1:] + [None]):
        os.makedirs(os.path.dirname(store.path(here)), exist_ok=True)
        with open(store.path(here), "wb") as fh:
            fh.write(seal("blob", b"x", refs=() if nxt is None else (nxt,)))
    head = _key(1)
    os.makedirs(os.path.dirname(store.path(head)), exist_ok=True)
    with open(store.path(head), "wb") as fh:
        fh.write(seal("code", BODY, refs=(keys[0],)))
    pruned = store.prune(set(), max_bytes=0)
    assert pruned.removed == 3001 and _files(store) == {}


def test_a_folder_where_an_entry_belongs_is_a_miss_and_left_alone(tmp_path):
    store = Store(str(tmp_path), warn=lambda message: None)
    os.makedirs(store.path(_key(1)))
    assert store.get(_key(1)) is None and store.load(_key(1)) is None
    store.put(_result(2))
    assert store.prune(set(), max_bytes=0).removed == 2  # the entry and its text; the folder stays
    assert os.path.isdir(store.path(_key(1)))


def test_a_clones_blob_of_the_same_text_is_replaced_by_ours(tmp_path):
    """A cloned store may hold the blob of a text ours also holds, under the same digest but
    sealed with another key: a put replaces it, or every entry holding it would miss."""
    store = Store(str(tmp_path))
    text_key = digest(TEXT.encode())
    os.makedirs(os.path.dirname(store.path(text_key)), exist_ok=True)
    with open(store.path(text_key), "wb") as fh:
        fh.write(_forged(seal("blob", TEXT.encode())))
    assert store.put(_result(1)) and store.get(_key(1)) == _result(1)
