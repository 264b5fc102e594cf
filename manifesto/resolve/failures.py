"""Errors about an input field, shared by every resolution step."""

from __future__ import annotations

from typing import Callable

from manifesto.errors import ManifestoError, Origin, ResolveError, Several, format_path

__all__ = ["Where", "fail", "raise_all", "ResolveErrors"]

#: Maps a field path of an input file to where it was written.
Where = Callable[[tuple], Origin]


def fail(message: str, where: Where, path: tuple, cls=ResolveError, flag: str | None = None) -> ManifestoError:
    """An error about the input field ``path`` (placed by ``where``), or, when the value came
    from a CLI flag, about that flag: ``--accelerator 'h100' is not offered ...``."""
    if flag:
        return cls(f"{flag} {message}")
    return cls(message, where(path), format_path(path))


class ResolveErrors(Several, ResolveError):
    """Several errors of one resolution step (every argument error of a spec, say), reported
    together, one per line, in the order they were found."""


def raise_all(errors: list[ManifestoError]) -> None:
    """Raise ``errors`` (duplicates dropped, in file order): the one error itself, or all together."""
    unique = sorted({e.format(): e for e in errors}.values(),
                    key=lambda e: (e.origin.file, e.origin.line, e.origin.col) if e.origin else ("", 0, 0))
    if len(unique) == 1:
        raise unique[0]
    if unique:
        raise ResolveErrors(unique)
