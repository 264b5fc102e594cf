"""Atomic file writes that stay where they were aimed.

A reader sees the old bytes or the new ones, never half. A confined write (``root=``)
walks from ``root`` to the file one component at a time through directory descriptors
opened with ``O_NOFOLLOW``, so a symlink (or a FIFO, a device, a file where a directory
belongs) anywhere below ``root`` stops the write with ``UnsafePath`` naming it, instead of
carrying it out of the tree: ``out/`` is committed, and a pull request can plant links.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["NAME_MAX", "UnsafePath", "kind_of", "open_below", "open_dir_below", "open_dir_in", "open_in", "open_regular",
           "remove_below", "remove_tree", "rmdir_in", "safe_problem", "target_problem", "unlink_in",
           "temp_name", "write_atomic", "write_in", "make_dir", "make_dirs", "touch_in", "TMP_MARK"]

#: Temporary files of the build's and the store's atomic writes end with this; a later build
#: removes ones a killed process left.
TMP_MARK = ".tmp~"


class UnsafePath(OSError):
    """A path a confined write refuses; ``filename`` is the component in the way and
    ``strerror`` says why ("is a symlink (to ../x); ..."), so existing OSError
    reporting names both."""


_KINDS = ((stat.S_ISLNK, "a symlink"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISREG, "a file"))


def kind_of(mode: int) -> str:
    """"a symlink", "a directory", "a FIFO", "a socket", "a device" or "a file"."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def safe_problem(path: str, mode: int, want_dir: bool, link: str | None = None) -> str:
    """Why ``path`` of ``mode`` cannot be written through (the ``strerror`` of UnsafePath)."""
    if stat.S_ISLNK(mode):
        return f"is a symlink (to {link}); refusing to go through it"
    return f"is {kind_of(mode)}, expected {'a directory' if want_dir else 'a file'}"


def _refuse(dir_fd: int, name: str, shown: str, want_dir: bool) -> UnsafePath:
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    link = os.readlink(name, dir_fd=dir_fd) if stat.S_ISLNK(st.st_mode) else None
    return UnsafePath(errno.ELOOP if link is not None else errno.ENOTDIR, safe_problem(shown, st.st_mode, want_dir, link),
                      shown)


def _parts(root: str, path: str) -> list[str]:
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel) or ".." in parts:
        raise UnsafePath(0, f"is outside {root}; refusing to write it", str(path))
    return parts


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def open_below(root: str | os.PathLike, parts: list[str], create: bool = True) -> int:
    """A descriptor of the directory ``root/parts...``, every component opened without
    following symlinks (missing ones are made when ``create``). Raises UnsafePath for a
    symlink or a non-directory on the way, FileNotFoundError when one is missing."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts):
            try:
                nxt = _open_dir(fd, part, root, parts[: i + 1])
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nxt = _open_dir(fd, part, root, parts[: i + 1])
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_dir_below(root: str, path: str, create: bool = True) -> int:
    """A descriptor of directory ``path`` below ``root`` (or ``root`` itself), made if missing
    when ``create``, every component opened as ``open_below`` does (``write_in`` writes files
    into it)."""
    return open_below(root, _parts(root, path), create=create)


def _open_dir(fd: int, part: str, root, shown_parts: list[str]) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # the path is named only when refused
            raise _refuse(fd, part, os.path.join(root, *shown_parts), True) from None
        raise


def open_regular(path: str | os.PathLike, flags: int = os.O_RDONLY, mode: int = 0o644, *, root=None,
                 follow: bool = False) -> int:
    """Open ``path`` as a regular file: never a FIFO (no hang), device or directory; never
    a symlink unless ``follow`` (then the file it leads to must be regular); with ``root``,
    never through a symlinked directory below it. Raises UnsafePath naming the problem."""
    flags |= os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    path = os.fspath(path)
    if follow and root is None:
        try:
            fd = os.open(path, flags, mode)
        except OSError as exc:
            if exc.errno not in (errno.ENXIO, errno.ELOOP):  # a socket; a symlink loop
                raise
            st = os.lstat(path)
            raise UnsafePath(exc.errno, safe_problem(path, st.st_mode, False, "a link in a loop"), path) from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise UnsafePath(errno.ENOTDIR, safe_problem(path, st.st_mode, False), path)
        os.set_blocking(fd, True)
        return fd
    if root is None:
        parent, name, dir_fd = os.path.dirname(path) or ".", os.path.basename(path), None
        fd_parent = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    else:
        parts = _parts(root, path)
        name = parts[-1]
        fd_parent = open_below(root, parts[:-1], create=bool(flags & os.O_CREAT))
    try:
        return _open_regular_in(fd_parent, name, flags, mode, path)
    finally:
        os.close(fd_parent)


def _open_regular_in(dir_fd: int, name: str, flags: int, mode: int, shown: str) -> int:
    """``name`` in ``dir_fd`` opened with ``flags`` (non-blocking), kept only when it is a
    regular file (then made blocking); ``UnsafePath`` naming ``shown`` otherwise."""
    try:
        fd = os.open(name, flags, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.ENOTDIR):
            raise _refuse(dir_fd, name, shown, False) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _refuse(dir_fd, name, shown, False)
    os.set_blocking(fd, True)
    return fd


def write_atomic(path: str | os.PathLike, data: str | bytes, mode: int = 0o644, *,
                 suffix: str = ".tmp", durable: bool = True, root: str | os.PathLike | None = None) -> None:
    """Write through a temporary file in the same directory and ``os.replace``.

    ``suffix`` names the temporary file (so a cleaner can find ones a killed process left);
    ``durable`` fsyncs before the rename, worth it for a user's file, not for a cache.
    With ``root``, the write is confined: no component below ``root`` (the file itself
    included) may be a symlink or of the wrong type (``UnsafePath`` names it).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if root is not None:
        _write_confined(os.fspath(root), os.fspath(path), raw, mode, suffix, durable)
        return
    from pathlib import Path  # not at the top: a no-op build imports this module only to read

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    name, fd = _create_temp(None, target.name, suffix, str(target.parent))
    tmp = os.path.join(target.parent, name)
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


def _write_confined(root: str, path: str, raw: bytes, mode: int, suffix: str, durable: bool) -> None:
    parts = _parts(root, path)
    if not parts:
        raise UnsafePath(0, "is the root itself, expected a file below it", path)
    dir_fd = open_below(root, parts[:-1])
    try:
        write_in(dir_fd, parts[-1], raw, path, mode, suffix=suffix, durable=durable)
    finally:
        os.close(dir_fd)


def write_in(dir_fd: int, name: str, raw: bytes, shown: str, mode: int = 0o644, *, suffix: str = ".tmp",
             durable: bool = True) -> None:
    """``write_atomic`` of file ``name`` in the directory open as ``dir_fd`` (opened by
    ``open_below``: a caller writing many files to one directory walks to it once). The
    file itself must be a regular file or absent; ``shown`` is the path errors name."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _refuse(dir_fd, name, shown, False)
    tmp, fd = _create_temp(dir_fd, name, suffix)
    try:
        try:  # os.write, not a file object: no fstat, ioctl or buffer for a file written once
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise


#: The longest file name (bytes) Linux file systems take; a temporary name must fit too.
NAME_MAX = 255


def temp_name(name: str, suffix: str, token: str) -> str:
    """``.NAME.TOKEN SUFFIX``, with NAME cut (at a character boundary) so the whole stays
    within NAME_MAX bytes: a legal 255-byte target still gets a legal temporary name. The
    leading dot and the suffix, which cleaners look for, are always kept."""
    room = NAME_MAX - len(f"..{token}{suffix}".encode())
    size = len(name.encode("utf-8", "surrogateescape"))
    while size > room and name:  # a character at a time: never half of a multi-byte one
        size -= len(name[-1].encode("utf-8", "surrogateescape"))
        name = name[:-1]
    return f".{name}.{token}{suffix}"


def _create_temp(dir_fd: int | None, name: str, suffix: str, directory: str | None = None) -> tuple[str, int]:
    """A new temporary file next to ``name`` (in ``dir_fd``, else in ``directory``): its name and descriptor."""
    for _ in range(100):
        tmp = temp_name(name, suffix, os.urandom(6).hex())
        where = tmp if dir_fd is not None else os.path.join(directory or ".", tmp)
        try:
            return tmp, os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                                dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name}")


def target_problem(path: str | os.PathLike) -> str | None:
    """Why a user's output file should not be replaced: it is a directory, a symlink or
    another non-regular file (None when it is a regular file or absent)."""
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


# -- changes other than writes: each one confined, on the entry a walk found ----------------

def open_in(dir_fd: int, name: str, flags: int = os.O_RDONLY) -> int:
    """Open the regular file ``name`` in the directory open as ``dir_fd``: never a symlink,
    FIFO, device or directory (``UnsafePath``; FileNotFoundError when absent)."""
    return _open_regular_in(dir_fd, name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644, name)


def open_dir_in(dir_fd: int, name: str) -> int | None:
    """A descriptor of the directory ``name`` in ``dir_fd``; None when it is absent, a
    symlink or not a directory (a walk passes over it, never through it)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def unlink_in(dir_fd: int, name: str) -> bool:
    """Delete the entry ``name`` of the directory open as ``dir_fd`` when it is not a
    directory (a symlink goes itself: what it points to is never touched). True when it went."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            return False
        os.unlink(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False


def rmdir_in(dir_fd: int, name: str) -> bool:
    """Delete the empty directory ``name`` of ``dir_fd`` (never a link); True when it went."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            return False
        os.rmdir(name, dir_fd=dir_fd)
        return True
    except OSError:
        return False


def _clear(dir_fd: int) -> None:
    """Delete everything in the directory open as ``dir_fd``, without following any link:
    a symlink is removed as an entry, a directory entered by descriptor."""
    for name in os.listdir(dir_fd):
        if unlink_in(dir_fd, name):
            continue
        sub = open_dir_in(dir_fd, name)
        if sub is None:
            continue
        try:
            _clear(sub)
        finally:
            os.close(sub)
        rmdir_in(dir_fd, name)


def remove_tree(root: str, path: str) -> bool:
    """Delete ``path`` (a directory below ``root``, or any other entry) and all it holds,
    confined: the walk from ``root`` refuses a link on the way (``UnsafePath``), and inside
    nothing is followed, so a planted link to a folder elsewhere is removed, never entered.
    True when something went."""
    parts = _parts(root, path)
    if not parts:
        raise UnsafePath(0, "is the root itself; refusing to remove it", path)
    try:
        parent = open_below(root, parts[:-1], create=False)
    except FileNotFoundError:
        return False
    try:
        if unlink_in(parent, parts[-1]):
            return True
        sub = open_dir_in(parent, parts[-1])
        if sub is None:
            return False
        try:
            _clear(sub)
        finally:
            os.close(sub)
        return rmdir_in(parent, parts[-1])
    finally:
        os.close(parent)


def remove_below(root: str, path: str, prune_to: str | None = None) -> bool:
    """Delete the file ``path`` below ``root`` (never through a link: ``UnsafePath``), then the
    directories it leaves empty up to, not including, ``prune_to``. True when the file went."""
    parts = _parts(root, path)
    if not parts:
        raise UnsafePath(0, "is the root itself; refusing to remove it", path)
    keep = len(_parts(root, prune_to)) if prune_to is not None else len(parts) - 1
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                fds.append(_open_dir(fds[-1], part, root, parts[: i + 1]))
            except FileNotFoundError:
                return False
        gone = unlink_in(fds[-1], parts[-1])
        for depth in range(len(parts) - 1, keep, -1):  # the folders it leaves empty, innermost first
            if not rmdir_in(fds[depth - 1], parts[depth - 1]):
                break
        return gone
    finally:
        for fd in fds:
            os.close(fd)


def make_dirs(path: str | os.PathLike, mode: int = 0o777) -> None:
    """Make the folder ``path`` and its missing parents (``mkdir -p``): a folder the user named
    (the workspace ``init`` makes, a Slurm job's log folder, a store of its own)."""
    os.makedirs(path, mode=mode, exist_ok=True)


def make_dir(path: str | os.PathLike, mode: int = 0o777) -> None:
    """Make the folder ``path``, which must not exist (FileExistsError)."""
    os.mkdir(path, mode)


def touch_in(dir_fd: int, name: str) -> None:
    """Set the times of ``name`` in the directory open as ``dir_fd`` to now, never through a link."""
    os.utime(name, dir_fd=dir_fd, follow_symlinks=False)
