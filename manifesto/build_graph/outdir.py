"""The ``out/`` tree: the build lock, and finding artifacts that no pair produces.

Artifacts are ``out/<cluster>/<model path>`` + ``.yaml`` or ``.sbatch``. Anything
else in ``out/`` (dot files, READMEs) is left alone, except the temporary files of
an interrupted atomic write, which a later build removes.
"""

from __future__ import annotations

import os

from manifesto.edge.fs import TMP_MARK

__all__ = ["SUFFIXES", "BuildLock", "has_leftovers", "names_in", "remove", "remove_cache_leftovers", "scan",
           "split_artifact", "unfinished"]

SUFFIXES = (".yaml", ".sbatch")


#: What a build that writes ``out/`` or the store keeps in ``out/.lock`` until it ends: a
#: build that finds it knows the last one was killed, and only then looks for the temporary
#: files it may have left in the store's 256 folders.
_MARK = b"a build is writing out/ (if none is running, it was killed: the next build cleans up)\n"


class BuildLock:
    """An exclusive ``flock`` on ``out/.lock``: one build writes ``out/`` at a time."""

    def __init__(self, path: str, wait_message=None) -> None:
        self.path = path
        self.wait_message = wait_message
        self.fd = -1

    def acquire(self, blocking: bool = True) -> bool:
        import fcntl

        from manifesto.edge.fs import open_regular

        # never through a planted symlink (out/ or out/.lock), never a FIFO (no hang)
        self.fd = open_regular(self.path, os.O_RDWR | os.O_CREAT, 0o644, root=os.sep)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if not blocking:
                self.release()
                return False
        if self.wait_message:
            self.wait_message(f"waiting for another build to finish ({self.path})")
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return True

    def begin_writes(self) -> bool:
        """Mark the lock file (held): this build may now write ``out/`` and the store. Returns
        whether the last build's mark was still there: it was killed, or stopped on an error,
        before ``end_writes``, and may have left temporary files behind."""
        unfinished = os.fstat(self.fd).st_size > 0
        if not unfinished:
            os.pwrite(self.fd, _MARK, 0)
        return unfinished

    def end_writes(self) -> None:
        """Clear the mark: every write of this build ended (and what a killed one left is gone)."""
        os.ftruncate(self.fd, 0)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "BuildLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def split_artifact(rel: str) -> tuple[str, str] | None:
    """``("cluster/model", ".yaml")`` for an artifact path, None for other files."""
    for suffix in SUFFIXES:
        if rel.endswith(suffix):
            return rel[: -len(suffix)], suffix
    return None


def scan(out_dir: str) -> tuple[list[str], list[str]]:
    """``(artifacts, leftovers)`` below ``out_dir``, relative to it, sorted.

    Artifacts live in a cluster directory, so files directly in ``out_dir`` are
    not artifacts. Leftovers are temporary files of interrupted writes; dot
    directories (``.cache``) are not entered.
    """
    import stat

    artifacts, leftovers = [], []
    try:
        if stat.S_ISLNK(os.lstat(out_dir).st_mode):  # os.walk would follow it out of the workspace
            from manifesto.edge.fs import UnsafePath, safe_problem

            raise UnsafePath(0, safe_problem(out_dir, stat.S_IFLNK, True, os.readlink(out_dir)), out_dir)
    except FileNotFoundError:
        return [], []
    for top, dirs, files in os.walk(out_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel_top = os.path.relpath(top, out_dir)
        prefix = "" if rel_top == "." else rel_top.replace(os.sep, "/") + "/"
        for name in files:
            if name.startswith("."):
                if name.endswith(TMP_MARK):
                    leftovers.append(prefix + name)
            elif prefix and name.endswith(SUFFIXES):
                artifacts.append(prefix + name)
    return sorted(artifacts), sorted(leftovers)


def remove(out_dir: str, rel: str) -> None:
    """Delete ``out_dir/rel`` and the directories it leaves empty (not ``out_dir``), walking
    from ``out_dir`` without following a link (a folder swapped for a link since the scan
    stops it with ``UnsafePath``; the file itself, if a link, goes as a link)."""
    from manifesto.edge.fs import remove_below

    remove_below(out_dir, os.path.join(out_dir, rel), prune_to=out_dir)


def unfinished(lock_path: str) -> bool:
    """Whether ``out/.lock`` holds the mark of a build that did not end (see ``BuildLock``);
    never through a link (a build refuses a planted one: a no-op need not meet it)."""
    import stat

    try:
        st = os.lstat(lock_path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > 0


def remove_cache_leftovers(cache_dir: str, tasks_dir: str, shards: bool = True) -> int:
    """Delete temporary files a killed build left in ``out/.cache`` (the manifest's) and, with
    ``shards`` or when ``out/.cache`` held one, in the task cache's shards. Call it under the
    build lock; returns how many went. Every folder is opened from ``out/`` without following
    a link (a shard linked to a folder elsewhere is passed over), and only the files its
    listing found go, by name in that folder."""
    from manifesto.edge.fs import UnsafePath, open_dir_below, open_dir_in

    out_dir = os.path.dirname(cache_dir)
    try:
        cache = open_dir_below(out_dir, cache_dir, create=False)
    except (OSError, UnsafePath):
        return 0
    try:
        removed = _remove_leftovers(cache)
        tasks = open_dir_in(cache, os.path.basename(tasks_dir)) if shards or removed else None
        if tasks is not None:
            try:
                for shard in os.listdir(tasks):
                    fd = open_dir_in(tasks, shard)
                    if fd is not None:
                        try:
                            removed += _remove_leftovers(fd)
                        finally:
                            os.close(fd)
            finally:
                os.close(tasks)
    finally:
        os.close(cache)
    return removed


def _remove_leftovers(dir_fd: int) -> int:
    from manifesto.edge.fs import unlink_in

    removed = 0
    for name in os.listdir(dir_fd):
        if name.startswith(".") and name.endswith(TMP_MARK):
            try:
                removed += unlink_in(dir_fd, name)
            except OSError:
                pass
    return removed


def _list(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []


def names_in(directory: str) -> frozenset | bool:
    """The names in ``directory`` (empty when it does not exist), or False when it cannot be
    listed (then each name must be looked up on its own)."""
    try:
        return frozenset(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()
    except OSError:
        return False


def has_leftovers(directory: str) -> bool:
    """Whether ``directory`` holds a temporary file of an interrupted write (one listing)."""
    return any(n.startswith(".") and n.endswith(TMP_MARK) for n in _list(directory))
