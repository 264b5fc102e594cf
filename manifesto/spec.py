"""Public API: load a model spec (following ``extends``).

    from manifesto.spec import load_spec
    spec = load_spec("models/qwen/qwen3-0.6b.yaml", cluster)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Spec", "load_spec"]


class Spec:
    """A validated model spec, its merged data and positions, and the files it was read from."""

    __slots__ = ("model", "loaded", "path", "cluster")

    def __init__(self, model, loaded, path: str, cluster=None) -> None:
        self.model = model
        self.loaded = loaded
        self.path = path
        self.cluster = cluster

    @property
    def files(self) -> list[str]:
        return self.loaded.files

    def where(self, path: tuple):
        return self.loaded.locs.find(path)

    def resolve(self, cluster, options):
        """(Plan, files read) of this spec on ``cluster`` with ``options`` (a resolve.plan.Options)."""
        from manifesto.tasks.inputs import plan_for

        return plan_for(self, cluster, options)


def load_spec(ref: str | Path, cluster=None, *, search=None) -> Spec:
    """Load a model spec by path or catalog name (``search``: a catalog.SearchPath).
    ``cluster`` (optional) is remembered for render()."""
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import load_model

    path = find("models", str(ref), search=search)
    model, loaded = load_model(path, within(search))
    return Spec(model, loaded, str(path), cluster)
