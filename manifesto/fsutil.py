"""Atomic file writes: a reader sees the old bytes or the new ones, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike, data: str | bytes, mode: int = 0o644, *,
                 suffix: str = ".tmp", durable: bool = True) -> None:
    """Write through a temporary file in the same directory and ``os.replace``.

    ``suffix`` names the temporary file (so a cleaner can find ones a killed process left);
    ``durable`` fsyncs before the rename, worth it for a user's file, not for a cache.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
