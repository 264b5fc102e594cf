"""``--changed-since REV``: the files that differ from a git revision.

Tracked files changed between REV and the working tree (staged or not), plus
untracked files that are not ignored. Renames count as a removal and an addition.
"""

from __future__ import annotations

import os

__all__ = ["changed_files", "git"]


def changed_files(root: str, rev: str) -> set[str]:
    """Absolute paths of files that changed since ``rev`` in the checkout holding ``root``."""
    from manifesto.errors import BuildError

    if rev.startswith("-"):
        raise BuildError(f"--changed-since: '{rev}' is not a git revision")
    top = git(root, "rev-parse", "--show-toplevel").strip()
    if git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False) is None:
        raise BuildError(f"--changed-since: unknown git revision '{rev}'")
    names = git(root, "diff", "--name-only", "--no-renames", "-z", rev, "--").split("\0")
    names += git(root, "ls-files", "--others", "--exclude-standard", "--full-name", "-z").split("\0")
    return {os.path.realpath(os.path.join(top, n)) for n in names if n}


def git(root: str, *args: str, check: bool = True, what: str = "--changed-since") -> str | None:
    """git's stdout in ``root``; a BuildError prefixed with ``what`` (the option that needed
    it) when git fails, or None with ``check=False``."""
    import subprocess

    from manifesto.errors import BuildError

    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    except FileNotFoundError:
        raise BuildError(f"{what} needs git, which is not installed") from None
    if proc.returncode != 0:
        if not check:
            return None
        message = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"git {args[0]} failed"
        raise BuildError(f"{what}: {message}")
    return proc.stdout
