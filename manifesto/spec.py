"""Public API: load a model spec (following ``extends``).

    from manifesto.spec import load_spec
    spec = load_spec("models/qwen/qwen3-0.6b.yaml", cluster)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from manifesto.load.inputs import LoadedSpec

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Spec", "load_spec"]


class Spec(LoadedSpec):
    """A validated model spec, its merged data and positions, and the files it was read from."""

    __slots__ = ("cluster",)

    def __init__(self, model, loaded, path: str, cluster=None) -> None:
        super().__init__(model, loaded, path)
        self.cluster = cluster

    def resolve(self, cluster, options):
        """(Plan, files read) of this spec on ``cluster`` with ``options`` (a resolve.plan.Options)."""
        outcome = self._outcome("resolve", cluster, options)
        return outcome.plan, list(outcome.inputs)

    def _outcome(self, task: str, cluster, options):
        """The OK outcome of the pair's ``task`` ("resolve" or "render": a ``tasks.core.Task``
        value) on this spec as loaded (``manifesto.tasks.runner.run`` on a LoadedPairRequest,
        the way every command resolves and renders a pair); its error is raised. The public
        API's one way to the tasks: ``manifesto.render``'s functions, in the pure renderer
        package below the tasks, reach them through the spec they are given."""
        from manifesto.store import Store
        from manifesto.tasks.core import LoadedPairRequest, Task
        from manifesto.tasks.memo import Tasks
        from manifesto.tasks.runner import run

        # No store: a library call keeps nothing on disk (and so needs no code fingerprint).
        return run(Task(task), LoadedPairRequest(self, cluster, options), Tasks(Store(None), "")).ok()


def load_spec(ref: str | Path, cluster=None, *, search=None) -> Spec:
    """Load a model spec by path or catalog name (``search``: a catalog.SearchPath).
    ``cluster`` (optional) is remembered for render()."""
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import load_model

    path = find("models", str(ref), search=search)
    model, loaded = load_model(path, within(search))
    return Spec(model, loaded, str(path), cluster)
