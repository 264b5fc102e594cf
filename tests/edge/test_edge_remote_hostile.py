"""The remote cache against hostile servers the tests start on 127.0.0.1, and planted entries.

Each behaviour costs exactly one warning line; the build's out/ equals a cache-less build
(the committed out/, which a cache-less build of the checkout leaves as it is); nothing is
written outside out/ (the whole sandbox is compared before and after); the bearer token
appears in no output, no file and no request to another origin; no raw escape reaches the
terminal.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from kit import REPO_ROOT, cli_in_process
from manifesto.store import seal
from store_kit import entry_files, read_entry
from servers.hostile import Hostile, Storing, drip, send

pytestmark = pytest.mark.integration

TOKEN = "tok-S3CRET-2f9a"
ADDRESS = "//models/qwen:"  # a few pairs of each kind (rendered and skipped), quick to build
CANARY = "manifesto-edge-canary"


def _checkout(root: Path, name: str) -> Path:
    work = root / name
    work.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "BUILD.yaml", work)
    for sub in ("models", "clusters", "routing", "out"):
        shutil.copytree(REPO_ROOT / sub, work / sub, ignore=shutil.ignore_patterns(".cache", ".lock"))
    return work


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".cache" not in p.parts and p.name != ".lock"}


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _outside_out(snapshot: dict[str, str], work: Path, root: Path) -> dict[str, str]:
    out = str((work / "out").relative_to(root))
    return {k: v for k, v in snapshot.items() if not (k == out or k.startswith(out + "/"))}


def _build(work: Path, monkeypatch, url: str, *args: str, timeout: str = "0.5", budget: str | None = None):
    monkeypatch.chdir(work)
    monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TOKEN", TOKEN)
    monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_TIMEOUT", timeout)
    if budget:
        monkeypatch.setenv("MANIFESTO_REMOTE_CACHE_BUDGET", budget)
    result = cli_in_process("build", "--jobs", "1", "--output", "json", "--remote-cache", url, ADDRESS, *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def _check_one_warning_and_nothing_else(tmp_path: Path, work: Path, before: dict, stderr: str, stdout_report) -> str:
    warnings = [line for line in stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, stderr
    assert "Traceback" not in stderr and "\x1b" not in stderr and "\x07" not in stderr
    assert TOKEN not in stderr and TOKEN not in json.dumps(stdout_report)
    assert _tree(work / "out") == _tree(REPO_ROOT / "out")  # what a build without the cache leaves
    after = _snapshot(tmp_path)
    assert _outside_out(after, work, tmp_path) == _outside_out(before, work, tmp_path)
    for path in tmp_path.rglob("*"):
        assert CANARY not in path.name
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert not list(Path("/tmp").glob(f"{CANARY}*")) and not list(tmp_path.parent.glob(f"{CANARY}*"))
    return warnings[0]


def _redirect_to(target: str):
    def answer(server, conn, head):
        send(conn, f"HTTP/1.1 302 Found\r\nLocation: {target}/ac/stolen\r\nContent-Length: 0\r\n"
                   "Connection: close\r\n\r\n".encode())
    return answer


def _answer(raw: bytes):
    def answer(server, conn, head):
        send(conn, raw)
    return answer


BEHAVIOURS = {
    # A Content-Length no build should read, with the start of the body.
    "huge-content-length": (_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999\r\n\r\n" + b"x" * 4096),
                            "over the 1048576-byte limit"),
    # A body that ends before its Content-Length.
    "truncated-body": (_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b'{"inputs": ['),
                       "a reply cut short"),
    # Headers that never end, one byte at a time, each well within the read timeout.
    "slow-drip-headers": (lambda s, c, h: drip(s, c, b"HTTP/1.1 200 OK\r\nX-Drip: "), "timed out"),
    # A body that never ends, one byte at a time.
    "slow-drip-body": (lambda s, c, h: drip(s, c, b"HTTP/1.1 200 OK\r\nContent-Length: 900000\r\n\r\n"),
                       "timed out"),
    "not-http": (_answer(b"SSH-2.0-OpenSSH_9.2p1\r\n\x00\xff\xfe binary"), "a reply that is not HTTP"),
    "over-long-header-line": (_answer(b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 200_000 + b"\r\n\r\n"),
                              "header line over 64 KiB"),
    "too-many-headers": (_answer(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(500)) + b"\r\n"),
                         "a reply that is not valid HTTP (got more than 100 headers)"),
    # Terminal escapes in the reason phrase: a title change, a bell, a screen clear.
    "500-with-escapes": (_answer(b"HTTP/1.1 500 \x1b]0;pwned\x07\x1b[2J\x1b[31mboom\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n"), "answered HTTP 500 (\\x1b]0;pwned\\x07"),
    "closes-at-once": (lambda s, c, h: None, "closed the connection without a reply"),
    "gzip-bomb-header": (_answer(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n"
                                 + b"\x1f\x8b" + b"\x00" * 18), "not a valid record"),
}


@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_a_hostile_server_costs_one_warning_line(tmp_path, monkeypatch, behaviour):
    answer, expected = BEHAVIOURS[behaviour]
    server = Hostile(answer)
    try:
        work = _checkout(tmp_path, "work")
        before = _snapshot(tmp_path)
        started = time.monotonic()
        # Only the drips are about time; the rest get a request timeout a loaded machine meets.
        report, stderr = _build(work, monkeypatch, server.url, timeout="0.5" if "drip" in behaviour else "5")
        assert time.monotonic() - started < 60
        warning = _check_one_warning_and_nothing_else(tmp_path, work, before, stderr, report)
        assert warning.startswith(f"warning: remote cache {server.url}: ") and expected in warning, warning
        assert warning.endswith("; building without it")
        assert all(TOKEN.encode() in seen for seen in server.seen)  # the token went to its origin only
    finally:
        server.stop()


def test_a_redirect_to_another_port_never_carries_the_token(tmp_path, monkeypatch):
    other = Storing()
    server = Hostile(_redirect_to(other.url))
    try:
        work = _checkout(tmp_path, "work")
        before = _snapshot(tmp_path)
        report, stderr = _build(work, monkeypatch, server.url)
        warning = _check_one_warning_and_nothing_else(tmp_path, work, before, stderr, report)
        assert warning == (f"warning: remote cache {server.url}: GET failed: redirected to another origin "
                           f"(http://127.0.0.1:{other.url.rsplit(':', 1)[1]}); not followed; building without it")
        assert other.seen == []  # not asked at all, so never shown the token
    finally:
        server.stop()
        other.stop()


def test_a_slow_drip_is_cut_by_the_build_budget_too(tmp_path, monkeypatch):
    server = Hostile(lambda s, c, h: drip(s, c, b"HTTP/1.1 200 OK\r\nX-Drip: ", every=0.05))
    try:
        work = _checkout(tmp_path, "work")
        before = _snapshot(tmp_path)
        started = time.monotonic()
        report, stderr = _build(work, monkeypatch, server.url, timeout="30", budget="1")
        assert time.monotonic() - started < 25  # the 30 s per request never ran out: the 1 s budget did
        warning = _check_one_warning_and_nothing_else(tmp_path, work, before, stderr, report)
        assert "timed out (its replies took over 1s in all)" in warning
    finally:
        server.stop()


# -- entries that pass HTTP but not the edge ---------------------------------------------------

def _evil(record: dict, how: str):
    """``record`` (a pair's result record, as JSON data) damaged one way; bytes."""
    if how == "suffix-dotdot":
        return json.dumps({**record, "suffix": f"/../../../../{CANARY}.yaml"}).encode()
    if how == "suffix-absolute":
        return json.dumps({**record, "suffix": f"/tmp/{CANARY}.yaml"}).encode()
    if how == "suffix-odd":
        return json.dumps({**record, "suffix": ".yaml/../../x"}).encode()
    if how == "wrong-types":
        return json.dumps({**record, "status": 1, "suffix": ["/etc"], "reason": None}).encode()
    if how == "deep-budget":
        return json.dumps(record).encode()[:-1] + b', "budget": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"
    if how == "not-utf8":
        return json.dumps(record).encode().replace(b'"', b'"\xff', 1)
    if how == "unknown-field":
        return json.dumps({**record, "write_to": "/etc/passwd"}).encode()
    if how == "digest-not-sha256":
        return json.dumps({**record, "text_sha256": "../../etc/passwd"}).encode()
    raise AssertionError(how)


INDEX_DAMAGE = {
    "inputs-dotdot": {"inputs": ["../../../etc/passwd"]},
    "inputs-absolute": {"inputs": ["/etc/passwd"]},
    "inputs-wrong-type": {"inputs": "models/qwen/qwen3-0.6b.yaml"},
    "inputs-nul": {"inputs": ["models/\u0000x.yaml"]},
}


@pytest.fixture
def warm(tmp_path, monkeypatch):
    """An honest cache, filled by a build of one checkout."""
    store = Storing()
    _build(_checkout(tmp_path, "first"), monkeypatch, store.url)
    assert any(k.startswith("/cas/") for k in store.entries)
    yield store
    store.stop()


def _records(store: Storing) -> dict[str, dict]:
    found = {}
    for path, data in store.entries.items():
        if path.startswith("/ac/"):
            value = json.loads(data)
            if "status" in value:
                found[path] = value
    return found


@pytest.mark.parametrize("how", ["suffix-dotdot", "suffix-absolute", "suffix-odd", "wrong-types", "deep-budget",
                                 "not-utf8", "unknown-field", "digest-not-sha256"])
def test_a_damaged_result_record_is_a_miss_never_a_write(tmp_path, monkeypatch, warm, how):
    for path, record in _records(warm).items():
        warm.entries[path] = _evil(record, how)
    work = _checkout(tmp_path, "second")
    before = _snapshot(tmp_path)
    report, stderr = _build(work, monkeypatch, warm.url)
    warning = _check_one_warning_and_nothing_else(tmp_path, work, before, stderr, report)
    assert "is not a valid record" in warning and warning.endswith("; building without it"), warning
    assert not any(row.get("cached") == "remote" for row in report["pairs"])


@pytest.mark.parametrize("how", sorted(INDEX_DAMAGE))
def test_a_damaged_index_record_is_a_miss(tmp_path, monkeypatch, warm, how):
    records = _records(warm)
    for path in list(warm.entries):
        if path.startswith("/ac/") and path not in records:
            warm.entries[path] = json.dumps(INDEX_DAMAGE[how]).encode()
    work = _checkout(tmp_path, "second")
    before = _snapshot(tmp_path)
    report, stderr = _build(work, monkeypatch, warm.url)
    warning = _check_one_warning_and_nothing_else(tmp_path, work, before, stderr, report)
    assert "is not a valid record" in warning, warning


def test_an_honest_cache_still_serves_and_sees_the_token(tmp_path, monkeypatch, warm):
    work = _checkout(tmp_path, "second")
    report, stderr = _build(work, monkeypatch, warm.url)
    assert "warning" not in stderr
    assert sum(row.get("cached") == "remote" for row in report["pairs"]) == len(report["pairs"])
    assert _tree(work / "out") == _tree(REPO_ROOT / "out")
    assert all(seen.endswith(f"Bearer {TOKEN}") for seen in warm.seen)


# -- entries planted in a committed out/.cache -------------------------------------------------

@pytest.mark.parametrize("how", ["suffix-dotdot", "suffix-absolute", "wrong-types", "deep-budget", "not-utf8",
                                 "oversized"])
def test_planted_store_entries_are_a_miss_never_a_write(tmp_path, monkeypatch, how):
    from manifesto.load.digest import digest

    work = _checkout(tmp_path, "work")
    monkeypatch.chdir(work)
    assert cli_in_process("build", "--jobs", "1", ADDRESS).returncode == 0
    planted = 0
    for entry in entry_files(work / "out/.cache/tasks"):
        data = read_entry(entry)
        if data.get("kind") != "result" or data.get("status") != "ok" or (how == "oversized" and planted):
            continue  # one oversized entry is enough (64 MiB each)
        text = f"kind: Secret\n# {CANARY}\n"
        data.update(text=text, text_digest=digest(text.encode()))
        if how == "oversized":
            blob = json.dumps(data).encode()[:-1] + b', "pad": "' + b" " * (64 << 20) + b'"}'
        elif how == "suffix-dotdot" or how == "suffix-absolute":
            blob = json.dumps({**data, "suffix": json.loads(_evil({}, how))["suffix"]}).encode()
        else:
            blob = _evil(data, how)
        entry.write_bytes(seal("result", blob))  # in its envelope: the entry's own checks must catch it
        planted += 1
    assert planted
    for artifact in [*(work / "out").rglob("*.yaml"), *(work / "out").rglob("*.sbatch")]:
        artifact.unlink()  # restored from the store: what it holds is read
    before = _snapshot(tmp_path)
    result = cli_in_process("build", "--jobs", "1", "--output", "json", ADDRESS)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "corrupt cache entry" in warnings[0] and "Traceback" not in result.stderr
    after = _snapshot(tmp_path)
    assert _outside_out(after, work, tmp_path) == _outside_out(before, work, tmp_path)
    assert not [p for p in tmp_path.rglob("*") if CANARY in p.name or (p.is_file() and p.stat().st_size < 1 << 20
                                                                        and CANARY.encode() in p.read_bytes()
                                                                        and ".cache" not in p.parts)]
    assert not list(Path("/tmp").glob(f"{CANARY}*"))
    built = _tree(work / "out")
    assert {k: v for k, v in built.items() if k in _qwen_artifacts()} == _qwen_artifacts()


def _qwen_artifacts() -> dict[str, bytes]:
    return {k: v for k, v in _tree(REPO_ROOT / "out").items() if "/qwen/" in f"/{k}"}
