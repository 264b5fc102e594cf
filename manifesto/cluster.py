"""Public API: load a cluster profile.

    from manifesto.cluster import load_cluster
    cluster = load_cluster("clusters/example-gb200.yaml")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Cluster", "load_cluster"]


class Cluster:
    """A validated cluster profile with the positions of its fields."""

    __slots__ = ("profile", "loaded", "path")

    def __init__(self, profile, loaded, path: str) -> None:
        self.profile = profile
        self.loaded = loaded
        self.path = path

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def platform(self) -> str:
        return self.profile.platform

    def where(self, path: tuple):
        return self.loaded.locs.find(path)


def load_cluster(ref: str | Path, *, search=None) -> Cluster:
    """Load a cluster profile by path or catalog name (``search``: a catalog.SearchPath)."""
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import load_cluster_file

    path = find("clusters", str(ref), search=search)
    profile, loaded = load_cluster_file(path, within(search))
    return Cluster(profile, loaded, str(path))
