"""Content digests and the code fingerprint, one definition for the build graph's task
cache and the CLI's render cache: both must agree on what "unchanged" means."""

from __future__ import annotations

import os

__all__ = ["digest", "file_digest", "combine", "code_files", "code_fingerprint"]

_blake2b = None


def digest(data: bytes) -> str:
    """BLAKE2b-128 of ``data``, in hex."""
    global _blake2b
    if _blake2b is None:
        try:  # the builtin module avoids loading OpenSSL through hashlib
            from _blake2 import blake2b
        except ImportError:  # pragma: no cover - other interpreters
            from hashlib import blake2b
        _blake2b = blake2b
    return _blake2b(data, digest_size=16).hexdigest()


def file_digest(path: str) -> str | None:
    """The digest of a file's bytes, or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return digest(fh.read())
    except OSError:
        return None


def combine(label: str, names, digests) -> str:
    """One digest for a set of named digests (order-independent)."""
    lines = [label] + sorted(f"{n}\0{d}" for n, d in zip(names, digests))
    return digest("\n".join(lines).encode())


def code_files() -> list[str]:
    """The files whose bytes define the renderer: the package's Python code, its runtime
    tables and the bundled image catalog, as absolute paths in a stable order."""
    root = os.path.dirname(os.path.abspath(__file__))
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        # The runtime tables (data/*.json) decide which specs render, so they key the cache too.
        out += [os.path.join(dirpath, name) for name in sorted(filenames)
                if name.endswith(".py") or (name.endswith(".json") and os.path.basename(dirpath) == "data")]
    from manifesto.catalog import images_path

    out.append(str(images_path()))
    return sorted(out)


def code_fingerprint(label: str = "manifesto-code/1") -> str:
    """One digest of every code file's bytes (named relative to the package's parent, so two
    checkouts of one commit agree)."""
    files = code_files()
    base = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return combine(label, [os.path.relpath(p, base) for p in files], [file_digest(p) for p in files])
