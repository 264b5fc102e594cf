"""Reading a file from outside: confined, bounded, regular, strictly decoded.

:func:`read_text` is the one way manifesto reads an input file (a spec, a profile,
BUILD.yaml, a ``config.json``). It refuses, with one line naming the file:

- anything but a regular file: a FIFO would block, a device never end, a directory is not
  text; the file is opened non-blocking and checked on its descriptor, so it cannot turn
  into something else between the check and the read;
- with ``roots`` (a build's workspace, ``confinement(...)``): a file whose real path is
  outside every root, and any symlink below the root on the way to it: every directory is
  opened without following links (``edge.fs.open_below``), so a link planted in a pull
  request, or swapped in while the build runs, is never followed;
- more than ``limit`` bytes (:data:`manifesto.edge.limits.MAX_TEXT_BYTES` by default);
- bytes that are not UTF-8 (no replacement characters, no guessing); a UTF-8 byte-order
  mark is dropped, as YAML and JSON readers do.

Without ``roots`` (a single render: the user named the file) a symlink to a regular file is
followed, as a shell would.
"""

from __future__ import annotations

import errno
import os
import stat

from manifesto.edge.limits import MAX_TEXT_BYTES, size_problem
from manifesto.edge.raw import TooLarge, read_fd, read_lenient, read_regular  # noqa: F401 (the edge's API)
from manifesto.errors import InputError, Origin

__all__ = ["read_text", "read_bytes", "read_stream", "read_regular", "read_fd", "read_lenient", "TooLarge", "file_problem",
           "confinement", "outside_problem", "decode"]


def confinement(roots) -> tuple[str, ...]:
    """``roots`` as the ``roots`` value of the readers: real paths ending in a separator.
    A reader given one refuses a file whose real path is outside every root (the build
    graph renders only what its workspace holds); the empty tuple allows any file."""
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots)


def outside_problem(path, roots: tuple[str, ...] = ()) -> str | None:
    """Why ``path`` may not be read under ``roots`` (it resolves outside them), or None."""
    if not roots:
        return None
    real = os.path.realpath(path)
    if any(real.startswith(root) for root in roots):
        return None
    return (f"resolves to {real}, outside the build workspace {roots[0].rstrip('/')}; a build reads only "
            "files inside it (copy the file in, or render it with `manifesto render manifest`)")


def file_problem(path, what: str = "YAML file") -> str | None:
    """Why ``path`` is not a readable regular file ("file not found", "symlink loop", "is a
    directory", ...), or None when it is one. ``what`` names the expected kind."""
    try:
        st = os.stat(path)
    except ValueError:  # a NUL in the name
        return "not a file name (it holds a NUL character)"
    except FileNotFoundError:
        if os.path.islink(path):
            return f"broken symlink (to {os.readlink(path)})"
        return "file not found"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop (following the links leads back to a link already followed)"
        if exc.errno == errno.ENOTDIR:
            return "file not found (a directory in its path is a file)"
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISDIR(st.st_mode):
        return f"is a directory, expected a {what}"
    if not stat.S_ISREG(st.st_mode):
        from manifesto.edge.fs import kind_of

        return f"is {kind_of(st.st_mode)}, expected a regular {what}"
    return None


def read_bytes(path, name: str, roots: tuple[str, ...] = (), *, limit: int = MAX_TEXT_BYTES,
               what: str = "YAML file", error=InputError) -> bytes:
    """The bytes of the regular file ``path`` under the checks above; ``name`` is how errors
    name it, ``error`` the ManifestoError class they are raised as."""
    problem = file_problem(path, what) or outside_problem(path, roots)
    if problem:
        raise error(problem, Origin(name))
    try:
        fd = _open(path, roots)
    except OSError as exc:
        raise error(_open_problem(exc, path, roots, what), Origin(name)) from None
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot be read ({exc.strerror})", Origin(name)) from None
    if len(raw) > limit:
        kind = f"a {what.split()[0]} input"  # "a YAML input", "a JSON input"
        raise error(size_problem(len(raw), kind) if limit == MAX_TEXT_BYTES
                    else f"larger than {limit} bytes; not {kind}", Origin(name))
    return raw


def read_text(path, name: str, roots: tuple[str, ...] = (), *, limit: int = MAX_TEXT_BYTES,
              what: str = "YAML file", error=InputError) -> str:
    """The UTF-8 text of ``path`` (see :func:`read_bytes`)."""
    return decode(read_bytes(path, name, roots, limit=limit, what=what, error=error), name, error=error)


def read_stream(path, name: str, *, error=InputError) -> str:
    """A pipe or terminal the user named on the command line (bash's ``<(...)``, ``-``), read
    once like a file: bounded, strict UTF-8. Only for a name given as such (``StreamPath``)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise error(f"cannot be read ({exc.strerror})", Origin(name)) from None
    problem = size_problem(len(raw))
    if problem:
        raise error(problem, Origin(name))
    return decode(raw, name, error=error)


def decode(raw: bytes, name: str, *, error=InputError) -> str:
    """``raw`` as strict UTF-8, a leading byte-order mark dropped."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc.reason})", Origin(name)) from None
    return text[1:] if text.startswith("\ufeff") else text


def _open(path, roots: tuple[str, ...]) -> int:
    """A descriptor of the regular file ``path``; under ``roots`` every component below the
    root is opened without following a link."""
    if not roots:  # the user named it: a link is followed, to a regular file only
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            from manifesto.edge.fs import UnsafePath, kind_of

            os.close(fd)
            raise UnsafePath(errno.ENOTDIR, f"is {kind_of(st.st_mode)}", os.fspath(path))
        os.set_blocking(fd, True)
        return fd
    from manifesto.edge.fs import open_below

    root, parts = _below(path, roots)
    dir_fd = open_below(root, parts[:-1], create=False)
    try:
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            from manifesto.edge.fs import UnsafePath, kind_of

            st = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
            link = os.readlink(parts[-1], dir_fd=dir_fd) if stat.S_ISLNK(st.st_mode) else None
            shown = os.path.join(root, *parts)
            raise UnsafePath(errno.ELOOP, f"is a symlink (to {link})" if link is not None
                             else f"is {kind_of(st.st_mode)}", shown) from None
        raise
    finally:
        os.close(dir_fd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        from manifesto.edge.fs import UnsafePath, kind_of

        os.close(fd)
        raise UnsafePath(errno.ENOTDIR, f"is {kind_of(st.st_mode)}", os.path.join(root, *parts))
    os.set_blocking(fd, True)
    return fd


def _below(path, roots: tuple[str, ...]) -> tuple[str, list[str]]:
    """(root, components below it) of ``path``: as written when it lies below a root (so a
    link on the way is seen), else as its real path (it reached the root through a link
    above it, such as a symlinked temporary directory)."""
    for candidate in (os.path.abspath(path), os.path.realpath(path)):
        for root in roots:
            if candidate.startswith(root):
                parts = [p for p in candidate[len(root):].split(os.sep) if p not in ("", ".")]
                if parts and ".." not in parts:
                    return root, parts
    raise FileNotFoundError(errno.ENOENT, "not below the build workspace", os.fspath(path))


def _open_problem(exc: OSError, path, roots: tuple[str, ...], what: str) -> str:
    from manifesto.edge.fs import UnsafePath

    if isinstance(exc, UnsafePath):
        shown = exc.filename
        for root in roots:
            if isinstance(shown, str) and shown.startswith(root):
                shown = shown[len(root):]
        reason = exc.strerror.split(";")[0]
        if roots:
            return f"{shown} {reason}; a build reads no symlink or special file inside its workspace"
        return f"{reason}, expected a regular {what}"
    if exc.errno == errno.ELOOP:
        return "symlink loop (following the links leads back to a link already followed)"
    if isinstance(exc, FileNotFoundError):
        return "file not found"
    return f"cannot be read ({exc.strerror})"
