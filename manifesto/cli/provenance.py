"""The source commit in the header of a single render, when Manifesto runs from a git checkout.

Only single renders (``render manifest``, ``render file``, ``render routing``, ``render
monitoring``) carry it; build artifacts never do, because out/ is committed and a commit hash
there would change with every commit, related or not (and could never name the commit that
holds it). The commit is read from the checkout's files (no ``git`` process, so the warm render
path stays fast): the branch HEAD points at, through a worktree's common directory and
``packed-refs``. ``MANIFESTO_SOURCE_COMMIT=off`` leaves it out.
"""

from __future__ import annotations

import os
import re

__all__ = ["source_commit", "with_source", "without_source"]

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_MARK = "\n# Source: llm-manifesto "
#: What the note says after the commit: true of a clean tree as of one with edits, which the note
#: cannot tell apart without running git (and before 0.1.0's header wording changed, the old words).
_CAVEAT = "any uncommitted changes are not recorded here"
#: The note ``with_source`` adds after the version, at the end of the line (either wording).
_NOTE = re.compile(r" \(checkout at git commit [0-9a-f]{40}(?:[0-9a-f]{24})?; "
                   r"(?:any uncommitted changes are not recorded here|uncommitted changes not shown)\)\Z")


def _read(path: str) -> str | None:
    """A git file's text (HEAD, a ref, packed-refs): a regular file of bounded size, or None."""
    from manifesto.edge.raw import read_lenient

    text = read_lenient(path)
    return None if text is None else text.strip()


def _git_dir(root: str) -> str | None:
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    text = _read(dot) if os.path.isfile(dot) else None  # a worktree: "gitdir: <path>"
    if text and text.startswith("gitdir: "):
        return os.path.join(root, text[len("gitdir: "):])  # an absolute path stays as it is
    return None


def source_commit(package_dir: str | os.PathLike | None = None) -> str | None:
    """The commit the checkout holding the package is at, or None (an installed copy, a
    checkout whose HEAD cannot be read)."""
    import manifesto

    package = os.fspath(package_dir) if package_dir else os.path.dirname(os.path.realpath(manifesto.__file__))
    git = _git_dir(os.path.dirname(os.path.normpath(package)))
    if git is None:
        return None
    head = _read(os.path.join(git, "HEAD"))
    if head is None:
        return None
    if _SHA.fullmatch(head):
        return head
    if not head.startswith("ref: "):
        return None
    ref = head[len("ref: "):]
    common = git
    shared = _read(os.path.join(git, "commondir"))
    if shared:
        common = os.path.join(git, shared)  # an absolute path stays as it is
    for base in (git, common):
        sha = _read(os.path.join(base, ref))
        if sha and _SHA.fullmatch(sha):
            return sha
    packed = _read(os.path.join(common, "packed-refs")) or ""
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA.fullmatch(sha):
            return sha
    return None


def with_source(text: str, env: dict[str, str]) -> str:
    """``text`` with the commit on its header's ``# Source:`` line, when there is one."""
    if env.get("MANIFESTO_SOURCE_COMMIT", "").lower() in ("off", "0", "false", "no"):
        return text
    commit = source_commit()
    if commit is None:
        return text
    head, sep, rest = text.partition(_MARK)
    if not sep:
        return text
    version, nl, tail = rest.partition("\n")
    return f"{head}{sep}{version} (checkout at git commit {commit}; {_CAVEAT}){nl}{tail}"


def without_source(text: str) -> str:
    """``text`` with the note ``with_source`` adds taken off its header's ``# Source:`` line
    (the first one, as ``with_source`` writes it): provenance of the copy that rendered it,
    not content. ``regen`` compares a file with a fresh render through this, so a render
    from a checkout compares equal to the same render from a wheel; the version stays."""
    head, sep, rest = text.partition(_MARK)
    if not sep:
        return text
    line, nl, tail = rest.partition("\n")
    m = _NOTE.search(line)
    if m is None:
        return text
    return f"{head}{sep}{line[:m.start()]}{nl}{tail}"
