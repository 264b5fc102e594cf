"""The build's vocabularies: one enum per question, each word with one meaning.

- :class:`Status`: what a render task came to (the store, the manifest, an item's outcome).
- :class:`Need`: what the build must do for a pair, decided from its record before any work.
- :class:`Source`: where this build got a pair's outcome from.
- :class:`Reported`: the word the build report prints for a pair (derived from the three above).

All are ``str`` enums: they compare equal to their values and serialise as them (JSON output,
the manifest). Kept in this tiny module (stdlib ``enum`` only) so a no-op build can use them.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Status", "Need", "Source", "Reported"]


class _Word(str, Enum):
    def __str__(self) -> str:
        return self.value


class Status(_Word):
    """A task's outcome, as the store, the build manifest and the build's items keep it.

    The report shows ``OK`` as "rendered" or "up to date" (whether this build produced it).
    """

    OK = "ok"  # an artifact
    SKIPPED = "skipped"  # the pair is incompatible (the reason says why)
    FAILED = "failed"  # bad input or a renderer error (the reason says which)


class Need(_Word):
    """What a pair needs from this build, judged from its manifest record and out/."""

    STALE = "stale"  # no usable record, or an input, the code or the options changed: evaluate it
    FRESH = "fresh"  # the record holds and out/ has its artifact: nothing to do
    SETTLED = "settled"  # the record holds and says skipped or failed: nothing to render (its status says which)
    RESTORE = "restore"  # the record holds but out/ lacks its artifact: write it again from the store
    MISMATCH = "mismatch"  # as RESTORE, under --check: report it, write nothing


class Source(_Word):
    """Where this build took a pair's outcome from."""

    RECORD = "record"  # the manifest: nothing it read changed
    STORE = "store"  # the store held the task's result for the current inputs
    RENDER = "render"  # the renderer ran
    REMOTE = "remote"  # the shared remote cache held the task's result (build_graph.remote)


class Reported(_Word):
    """The build report's word for a pair."""

    RENDERED = "rendered"  # this build rendered or wrote the artifact
    UP_TO_DATE = "up to date"  # the artifact was already what the inputs render to
    SKIPPED = "skipped"  # incompatible pair, matched by a pattern
    FAILED = "failed"  # an error, or an incompatible pair named explicitly
