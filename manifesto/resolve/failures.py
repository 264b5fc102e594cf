"""Errors about an input field, shared by every resolution step."""

from __future__ import annotations

from typing import Callable

from manifesto.errors import ManifestoError, Origin, ResolveError, format_path

__all__ = ["Where", "fail"]

#: Maps a field path of an input file to where it was written.
Where = Callable[[tuple], Origin]


def fail(message: str, where: Where, path: tuple, cls=ResolveError, flag: str | None = None) -> ManifestoError:
    """An error about the input field ``path`` (placed by ``where``), or, when the value came
    from a CLI flag, about that flag: ``--accelerator 'h100' is not offered ...``."""
    if flag:
        return cls(f"{flag} {message}")
    return cls(message, where(path), format_path(path))
