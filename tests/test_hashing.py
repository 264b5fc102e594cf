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
