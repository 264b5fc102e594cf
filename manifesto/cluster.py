"""Public API: load a cluster profile.

    from manifesto.cluster import load_cluster
    cluster = load_cluster("clusters/example-gb200.yaml")
    cluster.name, cluster.accelerators.default, cluster.pod_defaults   # the profile's own fields

The profile's fields are the validated records of ``manifesto.schema`` (typed, frozen), with
the defaults the schema fills.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Cluster", "load_cluster"]


#: What a Cluster holds besides the profile's fields; every other attribute is one of those fields.
_OWN = frozenset({"profile", "loaded", "path"})


class Cluster:
    """A validated cluster profile: its fields as attributes (``cluster.accelerators``,
    ``cluster.pod_defaults``: ``profile``'s, read-only), and besides them ``path``,
    ``where(field path)`` (the position of a field) and ``loaded`` (the data as read)."""

    __slots__ = ("profile", "loaded", "path")

    def __init__(self, profile, loaded, path: str) -> None:
        self.profile = profile
        self.loaded = loaded
        self.path = path

    def __getattr__(self, name: str):
        # Only for names that are not attributes of the Cluster itself: the profile's own fields.
        if name in _OWN or name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(self.profile, name)
        except AttributeError:
            raise AttributeError(f"'Cluster' object has no attribute {name!r} (a cluster profile's fields: "
                                 f"{', '.join(self.profile.__dict__)})") from None

    def __setattr__(self, name: str, value) -> None:
        if name not in _OWN:
            raise AttributeError(f"Cluster is read-only: {name} cannot be set (edit the profile file)")
        object.__setattr__(self, name, value)

    def __dir__(self):
        return sorted({*super().__dir__(), *self.profile.__dict__})

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

    from manifesto.errors import ManifestoError, say_warnings

    path = find("clusters", str(ref), search=search)
    try:
        profile, loaded = load_cluster_file(path, within(search))
    except ManifestoError as exc:
        raise say_warnings(exc)  # loading's warnings (data on what it returns or raises): said here
    say_warnings(loaded)
    return Cluster(profile, loaded, str(path))
