"""Atomic file writes: a reader sees the old bytes or the new ones, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["target_problem", "write_atomic"]


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


def target_problem(path: str | os.PathLike) -> str | None:
    """Why a user's output file should not be replaced: it is a directory, a symlink or
    another non-regular file (None when it is a regular file or absent)."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be used ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return (f"is a symlink (to {os.readlink(path)}); refusing to replace it: remove it, "
                "or name the file it points to")
    if stat.S_ISDIR(st.st_mode):
        return "is a directory; name a file to write"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file; name a file to write"
    return None
