"""The one vocabulary for what became of a pair or a render task."""

from __future__ import annotations

from enum import Enum

__all__ = ["Status"]


class Status(str, Enum):
    """A task's outcome, as the store, the build manifest and the build's items keep it.

    The report shows ``OK`` as "rendered" or "up to date" (whether this build produced it).
    """

    OK = "ok"  # an artifact
    SKIPPED = "skipped"  # the pair is incompatible (the reason says why)
    FAILED = "failed"  # bad input or a renderer error (the reason says which)

    def __str__(self) -> str:
        return self.value
