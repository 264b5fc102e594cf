"""Where a build lives: the root holding BUILD.yaml, ``out/`` and ``out/.cache``."""

from __future__ import annotations

import os

__all__ = ["BUILD_FILE", "Workspace", "find_workspace", "os_error"]

BUILD_FILE = "BUILD.yaml"


class Workspace:
    """The paths of one build root."""

    __slots__ = ("root", "buildfile", "out_dir", "cache_dir", "state_path", "tasks_dir", "lock_path")

    def __init__(self, root: str) -> None:
        self.root = root
        self.buildfile = os.path.join(root, BUILD_FILE)
        self.out_dir = os.path.join(root, "out")
        self.cache_dir = os.path.join(self.out_dir, ".cache")
        self.state_path = os.path.join(self.cache_dir, "state")
        self.tasks_dir = os.path.join(self.cache_dir, "tasks")
        self.lock_path = os.path.join(self.out_dir, ".lock")

    @property
    def display_buildfile(self) -> str:
        """BUILD.yaml as errors name it: relative to the working directory when below it."""
        rel = os.path.relpath(self.buildfile)
        return self.buildfile if rel.startswith("..") else rel

    def out_key(self, rel: str) -> str:
        """The stat-cache key of the artifact ``out/<rel>``."""
        return f"out/{rel}"

    def layout_problem(self) -> str | None:
        """What is in the way in ``out/``: a file where a directory belongs, or the reverse."""
        wanted = ((self.out_dir, True), (self.cache_dir, True), (self.tasks_dir, True),
                  (self.state_path, False), (self.lock_path, False))
        for path, is_dir in wanted:
            problem = wrong_type(path, is_dir)
            if problem:
                hint = " (or run `manifesto clean`)" if path.startswith(self.cache_dir) else ""
                return f"{self.show(path)} {problem}; remove it{hint}"
        return None

    def show(self, path: str) -> str:
        """``path`` as messages name it: relative to the workspace root when inside it."""
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel


def wrong_type(path: str, is_dir: bool) -> str | None:
    """"is a file, expected a directory" (or the reverse, or "is a symlink (to X)...") when
    ``path`` exists as something a build may not use there. Symlinks are not followed: a
    build never writes through one (``out/`` is committed, so a pull request could plant
    ``out/deploy -> ../../victim``)."""
    import stat

    from manifesto.edge.fs import kind_of

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be used ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return f"is a symlink (to {os.readlink(path)}); refusing to go through it"
    if is_dir and not stat.S_ISDIR(st.st_mode):
        return f"is {kind_of(st.st_mode)}, expected a directory"
    if not is_dir and not stat.S_ISREG(st.st_mode):
        return f"is {kind_of(st.st_mode)}, expected a file"
    return None


def os_error(ws: Workspace, exc: OSError):
    """A BuildError for an OSError the build met in ``ws``: the path in the way, else the
    file and the system's reason."""
    from manifesto.errors import BuildError

    from manifesto.edge.fs import UnsafePath

    problem = ws.layout_problem()
    if problem is None and isinstance(exc, UnsafePath):
        problem = f"{ws.show(exc.filename)} {exc.strerror}; remove it"
    if problem is None:
        where = ws.show(exc.filename) if exc.filename else "out/"
        problem = f"{where}: {exc.strerror or exc}"
    return BuildError(problem)


def find_workspace(start: str | None = None) -> Workspace:
    """The workspace whose BUILD.yaml is in ``start`` (default: cwd) or above it."""
    here = os.path.realpath(start or os.getcwd())
    probe = here
    while True:
        candidate = os.path.join(probe, BUILD_FILE)
        if os.path.isfile(candidate):
            return Workspace(probe)
        if os.path.lexists(candidate):  # a FIFO (it would hang the read), a socket, a directory
            from manifesto.errors import BuildError

            problem = (f"is a broken symlink (to {os.readlink(candidate)})" if os.path.islink(candidate)
                       else wrong_type(candidate, False))
            raise BuildError(f"{os.path.relpath(candidate)} {problem}")
        parent = os.path.dirname(probe)
        if parent == probe:
            from manifesto.errors import BuildError

            raise BuildError(f"no {BUILD_FILE} in {here} or any parent directory")
        probe = parent
