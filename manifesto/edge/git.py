"""git for ``diff --base`` and ``--changed-since``, and the artifacts of a working tree.

Everything here returns bytes already bounded and text already decoded; it never parses
YAML (the callers hand the texts to ``yamlio.parse_yaml``).

How git runs
    A fixed argv, no shell, ``--no-pager``; a revision the user typed goes through
    :func:`check_revision` (one that looks like an option is refused) and then only through
    ``rev-parse --verify --end-of-options``: every later command names the commit id it
    returned. Paths are literal (``--literal-pathspecs``) and come after ``--``. Blobs are
    read with ``cat-file --batch`` (raw bytes: no textconv, no external diff, no filters);
    ``git diff`` is given ``--no-ext-diff --no-textconv``. Every call has a deadline
    (:data:`TIMEOUT`) and a cap on what it may print; git is killed past either.

The environment git sees (the decision)
    The workspace decides the repository: git finds it from the workspace folder, exactly as
    ``cd WORKSPACE && git ...`` without any ``GIT_*`` variable would. Every ``GIT_*`` variable
    of the caller is dropped (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``,
    ``GIT_OBJECT_DIRECTORY``, ``GIT_ALTERNATE_OBJECT_DIRECTORIES``, ``GIT_CONFIG_*``,
    ``GIT_EXTERNAL_DIFF``, ``GIT_CEILING_DIRECTORIES``, ...), so a variable left over from a
    hook, a dotfiles alias or a hostile CI step cannot point ``diff --base`` at another
    repository or another object store. Only ``PATH``, ``HOME`` and ``XDG_CONFIG_HOME`` are
    kept (git itself, and the user's ``safe.directory`` setting); messages are in the C
    locale; no pager, no terminal prompt, no lazy fetch of a partial clone, no replace refs
    (the blob is the one the commit holds), ``core.fsmonitor`` off (no hook program runs).

The working tree
    :func:`worktree_texts` walks ``out/`` with directory descriptors and never follows a link:
    a symlink anywhere below it (or ``out`` itself being one) is refused, an artifact that is
    a FIFO, socket or device is refused without being opened for reading, each file is opened
    with ``O_NOFOLLOW | O_NONBLOCK`` and read up to a cap, and the text must be UTF-8.

Every refusal is one ``BuildError`` naming the artifact (``REV:out/x.yaml`` for a blob,
``out/x.yaml`` for a working-tree file), with names escaped for a terminal.
"""

from __future__ import annotations

import os

from manifesto.edge.escape import terminal
from manifesto.errors import BuildError, Origin

__all__ = ["Blob", "check_revision", "run", "toplevel", "show_prefix", "commit_of", "tree", "read_blobs",
           "worktree_texts", "names", "environment", "MAX_ARTIFACT_BYTES", "MAX_TOTAL_BYTES", "MAX_FILES", "TIMEOUT"]

#: The largest artifact read from either side (the largest rendered one, a monitoring target,
#: is about 400 KiB; the YAML loader reads about 0.5 MB/s on an artifact's scripts, so this also
#: bounds the time one artifact takes).
MAX_ARTIFACT_BYTES = 8 * 1024 * 1024
#: The most bytes of artifacts read from one side.
MAX_TOTAL_BYTES = 256 * 1024 * 1024
#: The most artifacts on one side (the bundled build writes a few dozen).
MAX_FILES = 20_000
#: Seconds one git command may take.
TIMEOUT = 60.0
#: The most a listing command (rev-parse, ls-tree, diff --name-only) may print.
MAX_LISTING_BYTES = 64 * 1024 * 1024
_MAX_REVISION = 1024
_MAX_STDERR = 64 * 1024
_KEPT = ("PATH", "HOME", "XDG_CONFIG_HOME")


def environment() -> dict[str, str]:
    """The environment every git command runs with (see the module's docstring)."""
    env = {k: os.environ[k] for k in _KEPT if k in os.environ}
    env.update(LC_ALL="C", LANGUAGE="C", GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0",
               GIT_NO_REPLACE_OBJECTS="1", GIT_NO_LAZY_FETCH="1", GIT_OPTIONAL_LOCKS="0")
    return env


def check_revision(rev: str, what: str) -> None:
    """Refuse a revision that git could read as an option, or that no person typed as one."""
    if not rev:
        raise BuildError(f"{what}: an empty git revision")
    if rev.startswith("-"):
        raise BuildError(f"{what}: '{terminal(rev, 200)}' looks like an option, not a git revision")
    if len(rev) > _MAX_REVISION or not rev.isprintable():
        raise BuildError(f"{what}: '{terminal(rev, 200)}' is not a git revision")


# -- running git ------------------------------------------------------------------------------

class _Result:
    __slots__ = ("returncode", "stdout", "stderr")

    def __init__(self, returncode: int, stdout: bytes, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _drain(stream, cap: int, sink: list, over: list) -> None:
    """Read ``stream`` to its end, keeping at most ``cap`` bytes; ``over`` gets True (and the
    reading stops) once more than ``cap`` came."""
    kept = 0
    try:
        while True:
            chunk = stream.read1(1 << 16)
            if not chunk:
                return
            if kept < cap:
                sink.append(chunk[: cap - kept])
            kept += len(chunk)
            if kept > cap:
                over.append(True)
                return
    except (OSError, ValueError):  # the pipe was closed after a kill
        return


def _feed(stream, data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except (OSError, ValueError):  # git stopped reading (it failed, or was killed)
        return


def run(root: str, args: list[str], *, what: str, cap: int = MAX_LISTING_BYTES, timeout: float | None = None,
        stdin: bytes | None = None) -> _Result:
    """git ``args`` in ``root``: its exit status, at most ``cap`` bytes of output and its
    messages. A BuildError when git is missing, prints more than ``cap`` or outlives ``timeout``
    (default :data:`TIMEOUT`)."""
    import subprocess
    import threading
    import time

    timeout = TIMEOUT if timeout is None else timeout
    # --literal-pathspecs: a folder name with `*` or `:(` is a name, not a pattern or magic
    argv = ["git", "--no-pager", "--literal-pathspecs", "-c", "core.fsmonitor=false", "-c", "core.quotePath=false",
            *args]
    try:
        proc = subprocess.Popen(argv, cwd=root, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    except FileNotFoundError:
        if not os.path.isdir(root):
            raise BuildError(f"{what}: the workspace folder {terminal(root)} does not exist") from None
        raise BuildError(f"{what} needs git, which is not installed") from None
    except OSError as exc:
        raise BuildError(f"{what}: cannot run git ({exc.strerror})") from None
    out: list[bytes] = []
    err: list[bytes] = []
    over: list[bool] = []
    workers = [threading.Thread(target=_drain, args=(proc.stdout, cap, out, over), daemon=True),
               threading.Thread(target=_drain, args=(proc.stderr, _MAX_STDERR, err, []), daemon=True)]
    if stdin is not None:
        workers.append(threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True))
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + timeout
    while not over and time.monotonic() < deadline:
        alive = [w for w in workers[:2] if w.is_alive()]
        if not alive:
            break
        alive[0].join(min(0.05, max(0.0, deadline - time.monotonic())))
    if over or any(w.is_alive() for w in workers[:2]):
        proc.kill()  # the readers end once git's pipes close; they are daemons either way
        proc.wait()
        if over:
            raise BuildError(f"{what}: git {args[0]} printed more than {_size(cap)}; stopped it")
        raise BuildError(f"{what}: git {args[0]} did not finish within {timeout:g} s; stopped it")
    try:
        code = proc.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise BuildError(f"{what}: git {args[0]} did not finish within {timeout:g} s; stopped it") from None
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    return _Result(code, b"".join(out), b"".join(err).decode("utf-8", "replace"))


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def _failure(result: _Result, root: str, what: str, command: str) -> BuildError:
    """git's own reason, with "not a git repository" said as such."""
    message = result.stderr.strip()
    if "not a git repository" in message.lower():
        return BuildError(f"{what}: the workspace {terminal(root)} is not in a git repository "
                          f"(`{what.split()[0]}` compares with a git revision; run it inside a clone)")
    if "dubious ownership" in message:
        return BuildError(f"{what}: git refuses the repository of {terminal(root)}: it is owned by another user "
                          "(git's safe.directory setting allows it)")
    last = message.splitlines()[-1] if message else f"git {command} failed (exit {result.returncode})"
    return BuildError(f"{what}: {terminal(last, 500)}")


def _checked(root: str, args: list[str], what: str, **kw) -> bytes:
    result = run(root, args, what=what, **kw)
    if result.returncode != 0:
        raise _failure(result, root, what, args[0])
    return result.stdout


def _text(raw: bytes) -> str:
    """git's output as text; a name that is not UTF-8 keeps its bytes (as the file system's do)."""
    return raw.decode("utf-8", "surrogateescape")


def names(root: str, args: list[str], what: str) -> list[str]:
    """The NUL-separated names git ``args`` (given ``-z``) prints; an error when git fails."""
    return [n for n in _text(_checked(root, args, what)).split("\0") if n]


def toplevel(root: str, what: str) -> str:
    """The top folder of the checkout holding ``root`` (an error outside a repository)."""
    return _text(_checked(root, ["rev-parse", "--show-toplevel"], what)).rstrip("\n")


def show_prefix(root: str, what: str) -> str:
    """``root`` relative to the top of its checkout, ending in ``/`` ("" at the top)."""
    return _text(_checked(root, ["rev-parse", "--show-prefix"], what)).rstrip("\n")


def commit_of(root: str, rev: str, what: str) -> str:
    """The commit id ``rev`` names, after :func:`check_revision` and a check that ``root`` is
    in a repository (so that case is not blamed on the revision)."""
    check_revision(rev, what)
    toplevel(root, what)
    result = run(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], what=what)
    sha = result.stdout.decode("ascii", "replace").strip()
    if result.returncode != 0 or not sha or not all(c in "0123456789abcdef" for c in sha):
        raise BuildError(f"{what.split()[0]}: unknown git revision '{terminal(rev, 200)}'")
    return sha


# -- a tree at a commit -------------------------------------------------------------------------

class Blob:
    """One entry of ``ls-tree -r -l``: path from the top of the checkout, mode, id and size."""

    __slots__ = ("path", "mode", "oid", "size")

    def __init__(self, path: str, mode: str, oid: str, size: int) -> None:
        self.path, self.mode, self.oid, self.size = path, mode, oid, size


_KINDS = {"120000": "a symlink", "160000": "a submodule (gitlink)"}


def tree(root: str, commit: str, prefix: str, label: str, what: str, *, suffixes: tuple[str, ...],
         skip: str = ".cache") -> list[Blob]:
    """The artifacts (names ending in ``suffixes``) below ``prefix`` (a folder from the top of
    the checkout, no trailing ``/``) at ``commit``, skipping ``skip`` folders. ``label`` names
    the commit in errors (``label:path``). A symlink or submodule anywhere below ``prefix``, or
    ``prefix`` itself being one, an oversized artifact, or too many, is an error."""
    top = _checked(root, ["ls-tree", "-z", "--full-tree", commit, "--", prefix], what)
    for entry in _entries(top, what):
        if entry.path == prefix and entry.mode in _KINDS:
            raise BuildError(f"is {_KINDS[entry.mode]} at {terminal(label)}, not a folder of artifacts; "
                             "diff --base never follows a link", Origin(f"{label}:{prefix}"))
    listing = _checked(root, ["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", f"{prefix}/"], what)
    found: list[Blob] = []
    total = 0
    for entry in _entries(listing, what):
        rel = entry.path[len(prefix) + 1:]
        if skip in rel.split("/")[:-1]:
            continue
        where = Origin(f"{label}:{entry.path}")
        if entry.mode in _KINDS:
            raise BuildError(f"is {_KINDS[entry.mode]}; out/ holds only rendered files and diff --base never "
                             "follows a link", where)
        if not entry.path.endswith(suffixes):
            continue
        if entry.size > MAX_ARTIFACT_BYTES:
            raise BuildError(f"{entry.size} bytes, larger than {_size(MAX_ARTIFACT_BYTES)}; not a rendered artifact",
                             where)
        total += entry.size
        found.append(entry)
        if len(found) > MAX_FILES or total > MAX_TOTAL_BYTES:
            raise BuildError(f"holds more than {MAX_FILES} artifacts or {_size(MAX_TOTAL_BYTES)}; not a build's output",
                             Origin(f"{label}:{prefix}"))
    return found


def _entries(raw: bytes, what: str):
    """``ls-tree -z`` records (with or without ``-l``) as Blobs."""
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, sep, name = record.partition(b"\t")
        fields = meta.split()
        if not sep or len(fields) not in (3, 4):
            raise BuildError(f"{what}: git ls-tree printed a line it should not ({terminal(record[:100])})")
        size = fields[3] if len(fields) == 4 else b"-"
        yield Blob(name.decode("utf-8", "surrogateescape"), fields[0].decode("ascii", "replace"),
                   fields[2].decode("ascii", "replace"), int(size) if size.isdigit() else 0)


def read_blobs(root: str, blobs: list[Blob], label: str, what: str) -> dict[str, str]:
    """path -> UTF-8 text of each blob (``cat-file --batch``: raw bytes, one git process).
    A blob that is not UTF-8 is an error naming it (``label:path``)."""
    if not blobs:
        return {}
    cap = sum(b.size + len(b.oid) + 32 for b in blobs)
    raw = _checked(root, ["cat-file", "--batch"], what, cap=cap, stdin="".join(f"{b.oid}\n" for b in blobs).encode())
    texts: dict[str, str] = {}
    pos = 0
    for blob in blobs:
        end = raw.find(b"\n", pos)
        header = raw[pos:end].split() if end >= 0 else []
        if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit() or int(header[2]) != blob.size:
            raise BuildError(f"git cat-file did not return the blob ({terminal(raw[pos:pos + 100])})",
                             Origin(f"{label}:{blob.path}"))
        body = raw[end + 1:end + 1 + blob.size]
        pos = end + 1 + blob.size + 1
        texts[blob.path] = _decoded(body, f"{label}:{blob.path}")
    return texts


def _decoded(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BuildError(f"not UTF-8 text ({exc.reason} at byte {exc.start}); a rendered artifact is UTF-8",
                         Origin(name)) from None


# -- the working tree ---------------------------------------------------------------------------

def worktree_texts(folder: str, label: str, *, suffixes: tuple[str, ...], skip: str = ".cache") -> dict[str, str]:
    """path relative to ``folder`` -> UTF-8 text of every artifact (name ending in ``suffixes``)
    below ``folder``, skipping ``skip`` folders; {} when ``folder`` does not exist. ``label``
    names ``folder`` in errors (``out``). Links are never followed: see the module docstring."""
    import stat

    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BuildError(f"cannot be read ({exc.strerror})", Origin(label)) from None
    if stat.S_ISLNK(st.st_mode):
        raise BuildError("is a symlink; diff --base reads only the workspace's own out/ folder and never "
                         "follows a link", Origin(label))
    if not stat.S_ISDIR(st.st_mode):
        raise BuildError("is not a folder", Origin(label))

    def fail(exc: OSError) -> None:
        raise BuildError(f"cannot be read ({exc.strerror})", Origin(_shown(label, folder, exc.filename)))

    texts: dict[str, str] = {}
    total = 0
    for path, dirs, files, dirfd in os.fwalk(folder, onerror=fail, follow_symlinks=False):
        dirs[:] = sorted(d for d in dirs if d != skip)
        rel_dir = os.path.relpath(path, folder)
        for name in sorted(dirs) + sorted(f for f in files if f != skip):  # fwalk lists a link to a folder as one
            rel = name if rel_dir == "." else os.path.join(rel_dir, name).replace(os.sep, "/")
            shown = f"{label}/{rel}"
            try:
                entry = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError as exc:
                raise BuildError(f"cannot be read ({exc.strerror})", Origin(shown)) from None
            if stat.S_ISLNK(entry.st_mode):
                raise BuildError(f"is a symlink; {label}/ holds only rendered files and diff --base never follows "
                                 "a link", Origin(shown))
            if stat.S_ISDIR(entry.st_mode) or not name.endswith(suffixes):
                continue
            text = _read(name, dirfd, shown)
            total += len(text)
            texts[rel] = text
            if len(texts) > MAX_FILES or total > MAX_TOTAL_BYTES:
                raise BuildError(f"holds more than {MAX_FILES} artifacts or {_size(MAX_TOTAL_BYTES)}; not a build's "
                                 "output", Origin(label))
    return texts


def _shown(label: str, folder: str, filename) -> str:
    if not filename:
        return label
    rel = os.path.relpath(os.fsdecode(filename), folder)
    return label if rel == "." else f"{label}/{rel}"


def _kind(mode: int) -> str:
    import stat

    return ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a folder" if stat.S_ISDIR(mode)
            else "not a regular file")


def _read(name: str, dirfd: int, shown: str) -> str:
    """The UTF-8 text of the regular file ``name`` in ``dirfd``: opened without following a link
    and without blocking (a FIFO swapped in after the walk looked is still refused), at most
    MAX_ARTIFACT_BYTES."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):  # checked before opening: opening a device can act
            raise BuildError(f"is {_kind(st.st_mode)}, not a rendered artifact; diff --base reads only regular "
                             "files", Origin(shown))
        fd = os.open(name, flags, dir_fd=dirfd)
    except OSError as exc:
        import errno

        if exc.errno == errno.ELOOP:
            raise BuildError("is a symlink; diff --base never follows a link", Origin(shown)) from None
        raise BuildError(f"cannot be read ({exc.strerror})", Origin(shown)) from None
    from manifesto.edge.files import read_fd

    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise BuildError(f"cannot be read ({exc.strerror})", Origin(shown)) from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise BuildError(f"is {_kind(st.st_mode)}, not a rendered artifact; diff --base reads only regular "
                         "files", Origin(shown))
    try:
        data = read_fd(fd, MAX_ARTIFACT_BYTES)
    except OSError as exc:
        raise BuildError(f"cannot be read ({exc.strerror})", Origin(shown)) from None
    if len(data) > MAX_ARTIFACT_BYTES:
        raise BuildError(f"larger than {_size(MAX_ARTIFACT_BYTES)}; not a rendered artifact", Origin(shown))
    return _decoded(data, shown)
