"""Where a build lives: the root holding BUILD.yaml, ``out/`` and ``out/.cache``."""

from __future__ import annotations

import os

__all__ = ["BUILD_FILE", "Workspace", "find_workspace"]

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


def find_workspace(start: str | None = None) -> Workspace:
    """The workspace whose BUILD.yaml is in ``start`` (default: cwd) or above it."""
    here = os.path.realpath(start or os.getcwd())
    probe = here
    while True:
        if os.path.isfile(os.path.join(probe, BUILD_FILE)):
            return Workspace(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            from manifesto.errors import BuildError

            raise BuildError(f"no {BUILD_FILE} in {here} or any parent directory")
        probe = parent
