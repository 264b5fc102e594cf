"""The two hash functions Manifesto uses, from CPython's builtin modules when it has them.

``import hashlib`` loads OpenSSL, about 2 ms of a process that renders one manifest; the
builtin ``_blake2`` and ``_sha2`` (``_sha256`` before Python 3.12) modules give the same
digests without it. hashlib stays the fallback for interpreters without them.
"""

from __future__ import annotations

__all__ = ["blake2b_hex", "digest", "sha256_hex", "for_many"]

_blake2b = None
_sha256 = None


def blake2b_hex(data: bytes, size: int) -> str:
    """BLAKE2b of ``data`` with a ``size``-byte digest, in hex (content digests, the store's keys)."""
    global _blake2b
    if _blake2b is None:
        try:
            from _blake2 import blake2b
        except ImportError:  # pragma: no cover - other interpreters
            from hashlib import blake2b
        _blake2b = blake2b
    return _blake2b(data, digest_size=size).hexdigest()


def digest(data: bytes) -> str:
    """THE content digest (of an input, an artifact, a store entry's text): BLAKE2b-128 of
    ``data``, in hex. ``manifesto.load.digest`` builds the code fingerprint on it, and the
    edge's file signatures (``manifesto.edge.signatures``) hash files with it."""
    return blake2b_hex(data, 16)


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data``, in hex: what the names and checksums artifacts carry are defined
    with (the shadow Service name Istio derives, a script's checksum)."""
    global _sha256
    if _sha256 is None:
        try:
            from _sha2 import sha256  # Python 3.12 and later
        except ImportError:
            try:
                from _sha256 import sha256  # Python 3.11
            except ImportError:  # pragma: no cover - other interpreters
                from hashlib import sha256
        _sha256 = sha256
    return _sha256(data).hexdigest()


def for_many() -> None:
    """Hash with OpenSSL's SHA-256 from now on (``hashlib``), for a process about to hash a
    great deal: a build hashes every artifact it renders, and the builtin module, which
    spares a single render OpenSSL's import, runs at a fraction of OpenSSL's speed (about
    240 against 40 microseconds for a 60 KB artifact). The digests are the same."""
    global _sha256
    try:
        from hashlib import sha256
    except ImportError:  # pragma: no cover - an interpreter without hashlib
        return
    _sha256 = sha256
