"""``--changed-since REV``: the files that differ from a git revision.

Tracked files changed between REV and the working tree (staged or not), plus
untracked files that are not ignored. Renames count as a removal and an addition.
git runs through :mod:`manifesto.edge.git` (a revision that looks like an option is
refused, "not a git repository" is said as such, the caller's ``GIT_*`` variables are not
passed on, every call is bounded in time and output).
"""

from __future__ import annotations

import os

__all__ = ["changed_files"]

WHAT = "--changed-since"


def changed_files(root: str, rev: str) -> set[str]:
    """Absolute paths of files that changed since ``rev`` in the checkout holding ``root``."""
    from manifesto.edge import git

    commit = git.commit_of(root, rev, WHAT)
    top = git.toplevel(root, WHAT)
    names = git.names(root, ["diff", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", "-z", commit,
                             "--"], WHAT)
    names += git.names(root, ["ls-files", "--others", "--exclude-standard", "--full-name", "-z"], WHAT)
    return {os.path.realpath(os.path.join(top, n)) for n in names}
