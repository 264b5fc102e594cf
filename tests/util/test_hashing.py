"""``manifesto.util.hashing`` gives hashlib's digests without importing it."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from manifesto.util.hashing import blake2b_hex, sha256_hex


def test_the_digests_are_hashlibs():
    for data in (b"", b"x", bytes(range(256)) * 40, "pool-ĳ".encode()):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
        for size in (8, 16, 32, 64):
            assert blake2b_hex(data, size) == hashlib.blake2b(data, digest_size=size).hexdigest()


@pytest.mark.integration
def test_hashing_never_imports_hashlib():
    code = ("import sys\nfrom manifesto.util.hashing import blake2b_hex, sha256_hex\n"
            "sha256_hex(b'a'); blake2b_hex(b'a', 16)\nprint('hashlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.integration
def test_for_many_switches_to_openssl_with_the_same_digests():
    """A build about to hash many artifacts takes hashlib's (OpenSSL's) SHA-256: same digests."""
    code = ("import sys\nfrom manifesto.util import hashing\nbefore = hashing.sha256_hex(b'a' * 70000)\n"
            "assert 'hashlib' not in sys.modules\nhashing.for_many()\n"
            "print(hashing.sha256_hex(b'a' * 70000) == before, hashing._sha256.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "True" and out.stdout.split()[1] in ("_hashlib", "_sha256", "_sha2")


@pytest.mark.integration
def test_a_small_build_does_not_import_hashlib_and_a_big_one_does(tmp_path, monkeypatch):
    """``executor.run_jobs`` pays OpenSSL's import only from ``_MANY`` jobs on."""
    from manifesto.build_graph import executor

    calls = []
    monkeypatch.setattr("manifesto.util.hashing.for_many", lambda: calls.append(1))
    monkeypatch.setattr(executor, "execute", lambda *args: None)
    settings = executor.JobSettings(str(tmp_path), "real", str(tmp_path / "out"), str(tmp_path / "t"), False, 0, "c")
    executor.run_jobs([object()] * (executor._MANY - 1), settings, 1, lambda r: None, render=lambda *a: None)
    assert calls == []
    executor.run_jobs([object()] * executor._MANY, settings, 1, lambda r: None, render=lambda *a: None)
    assert calls == [1]
