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
    # A server never decides an outcome (issue 35): what a record says beyond the text's digest
    # is checked against what the build knows here.
    if how == "status-failed":
        return json.dumps({**record, "status": "failed", "reason": "the server says so"}).encode()
    if how == "status-skipped":  # would prune the pair's artifact
        return json.dumps({**record, "status": "skipped", "suffix": "", "reason": "not here"}).encode()
    if how == "suffix-swapped":  # a Kubernetes pair's artifact renamed .sbatch (and the reverse)
        return json.dumps({**record, "suffix": ".sbatch" if record["suffix"] == ".yaml" else ".yaml"}).encode()
    if how == "reason-forges-lines":
        return json.dumps({**record, "reason": "x\nrendered    out/evil.yaml\nbuilt 99 artifacts"}).encode()
    if how == "budget-missing-keys":
        return json.dumps({**record, "budget": {"gpus": 1}}).encode()
    if how == "budget-huge":
        return json.dumps({**record, "budget": {**record["budget"], "gpus": 10 ** 400}}).encode()
    if how == "budget-does-not-add-up":
        return json.dumps({**record, "budget": {**record["budget"], "gpus": record["budget"]["gpus"] + 7}}).encode()
    if how == "budget-escapes":
        return json.dumps({**record, "budget": {**record["budget"], "accelerator": "b200\u001b[2J"}}).encode()
    if how == "budget-negative":
        roles = [{**r, "gpus": -r["gpus"]} for r in record["budget"]["roles"]]
        return json.dumps({**record, "budget": {**record["budget"], "roles": roles,
                                                "gpus": -record["budget"]["gpus"]}}).encode()
    if how == "field-named-like-the-token":  # a decoder's message names the unknown field
        return json.dumps({**record, TOKEN: 1}).encode()
    raise AssertionError(how)


INDEX_DAMAGE = {
    "inputs-dotdot": {"inputs": ["../../../etc/passwd"]},
    "inputs-absolute": {"inputs": ["/etc/passwd"]},
    "inputs-wrong-type": {"inputs": "models/qwen/qwen3-0.6b.yaml"},
    "inputs-nul": {"inputs": ["models/\u0000x.yaml"]},
    # Absolute paths outside the bundled catalog are never digested for a server (it would
    # learn whether they exist and could test guesses of their content), whatever they end in.
    "inputs-absolute-json": {"inputs": ["/etc/passwd.json", "clusters/example-h200.yaml"]},
    "inputs-home-yaml": {"inputs": ["/root/.kube/config.yaml"]},
    "inputs-generated": {"inputs": ["out/example-h200/qwen/aggregated.yaml"]},
    "inputs-hidden": {"inputs": [".git/config.yaml", "out/.cache/state.json"]},
    "inputs-not-yaml": {"inputs": ["models/qwen/aggregated.yaml", "README.md"]},
    # An index that leaves out the pair's own spec or cluster is not the build's.
    "inputs-without-the-pair": {"inputs": ["models/qwen/aggregated.yaml"]},
    "inputs-repeated": {"inputs": ["models/qwen/aggregated.yaml"] * 2},
    # A YAML or JSON file of the workspace outside every target's folder (a secret beside BUILD.yaml?).
    "inputs-outside-the-targets": {"inputs": ["secrets.json", "clusters/example-h200.yaml",
                                              "models/qwen/aggregated.yaml"]},
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
                                 "not-utf8", "unknown-field", "digest-not-sha256", "status-failed", "status-skipped",
                                 "suffix-swapped", "reason-forges-lines", "budget-missing-keys", "budget-huge",
                                 "budget-does-not-add-up", "budget-escapes", "budget-negative",
                                 "field-named-like-the-token"])
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
    # Every artifact comes from the cache; a skipped pair is found skipped here, never told.
    built = [row for row in report["pairs"] if row.get("artifact")]
    assert built and all(row.get("cached") == "remote" for row in built)
    assert all(row.get("cached") != "remote" for row in report["pairs"] if row["status"] == "skipped")
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


# -- the bearer token in a server's text (issue 35) ---------------------------------------------

def _echo_token_in_reason(server, conn, head):
    auth = next(line for line in head.split(b"\r\n") if line.lower().startswith(b"authorization:"))
    send(conn, b"HTTP/1.1 503 you sent " + auth.split(b":", 1)[1].strip() + b"\r\nContent-Length: 0\r\n"
               b"Connection: close\r\n\r\n")


def _echo_token_in_host(server, conn, head):
    send(conn, f"HTTP/1.1 302 Found\r\nLocation: http://{TOKEN}.example.com/ac/x\r\nContent-Length: 0\r\n"
               "Connection: close\r\n\r\n".encode())


def _echo_token_in_status_line(server, conn, head):
    send(conn, f"HTTP/1.1 2x0 {TOKEN}\r\n\r\n".encode())


@pytest.mark.parametrize("answer", [_echo_token_in_reason, _echo_token_in_host, _echo_token_in_status_line],
                         ids=["reason", "redirect-host", "status-line"])
def test_a_server_echoing_the_token_never_gets_it_printed(tmp_path, monkeypatch, answer):
    server = Hostile(answer)
    try:
        work = _checkout(tmp_path, "work")
        before = _snapshot(tmp_path)
        report, stderr = _build(work, monkeypatch, server.url, timeout="5")
        warning = _check_one_warning_and_nothing_else(tmp_path, work, before, stderr, report)
        assert TOKEN.lower() not in warning.lower() and TOKEN[:8] not in warning, warning
    finally:
        server.stop()


def test_an_index_naming_a_file_outside_the_workspace_is_refused_before_it_is_read(tmp_path, monkeypatch, warm):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "guess.json"
    secret.write_text('{"password": "hunter2"}\n')
    records = _records(warm)
    for path in list(warm.entries):
        if path.startswith("/ac/") and path not in records:
            inputs = json.loads(warm.entries[path])["inputs"]
            warm.entries[path] = json.dumps({"inputs": sorted([*inputs, str(secret)])}).encode()
    work = _checkout(tmp_path, "second")
    before = _snapshot(tmp_path)
    report, stderr = _build(work, monkeypatch, warm.url)
    warning = _check_one_warning_and_nothing_else(tmp_path, work, before, stderr, report)
    assert "is not a valid record (an input is not a normal path to a workspace or catalog file)" in warning
    assert str(secret) not in json.dumps(report)
