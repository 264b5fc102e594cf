"""Public API: load a model spec (following ``extends``).

    from manifesto.spec import load_spec
    spec = load_spec("models/qwen/qwen3-0.6b.yaml", cluster)
    spec.release, spec.model.id, spec.roles[0].parallelism.tp   # the spec's own fields

The spec's fields are the validated records of ``manifesto.schema`` (typed, frozen: setting
one raises); what ``extends`` merged in and the defaults the schema fills are there too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from manifesto.load.inputs import LoadedSpec

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Spec", "load_spec"]


#: What a Spec holds besides the spec's fields; every other attribute is one of those fields.
_OWN = frozenset({"validated", "loaded", "path", "cluster"})


class Spec(LoadedSpec):
    """A validated model spec: its fields as attributes (``spec.release``, ``spec.roles``,
    ``spec.model.id``: ``validated``'s, read-only), and besides them ``path``, ``files`` (the
    files it was read from, ``extends`` parents included), ``where(field path)`` (the position
    of a field), ``cluster`` (the one it was loaded for, if any), ``loaded`` (the merged data)
    and ``resolve``."""

    __slots__ = ("cluster",)

    def __init__(self, validated, loaded, path: str, cluster=None) -> None:
        super().__init__(validated, loaded, path)
        self.cluster = cluster

    def __getattr__(self, name: str):
        # Only for names that are not attributes of the Spec itself: the spec's own fields.
        if name in _OWN or name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(self.validated, name)
        except AttributeError:
            raise AttributeError(f"'Spec' object has no attribute {name!r} (a spec's fields: "
                                 f"{', '.join(self.validated.__dict__)})") from None

    def __setattr__(self, name: str, value) -> None:
        if name not in _OWN:
            raise AttributeError(f"Spec is read-only: {name} cannot be set (edit the spec file, or "
                                 "`extends` it)")
        object.__setattr__(self, name, value)

    def __dir__(self):
        return sorted({*super().__dir__(), *self.validated.__dict__})

    def resolve(self, cluster, options):
        """(Plan, files read) of this spec on ``cluster`` with ``options`` (a resolve.plan.Options)."""
        outcome = self._outcome("resolve", cluster, options)
        return outcome.plan, list(outcome.inputs)

    def _outcome(self, task: str, cluster, options):
        """The OK outcome of the pair's ``task`` ("resolve" or "render": a ``tasks.core.Task``
        value) on this spec as loaded (``manifesto.tasks.runner.run`` on a PairRequest of it,
        the way every command resolves and renders a pair); its error is raised. The public
        API's one way to the tasks: ``manifesto.render``'s functions, in the pure renderer
        package below the tasks, reach them through the spec they are given."""
        from manifesto.store import Store
        from manifesto.tasks.core import PairRequest, Task
        from manifesto.tasks.memo import Tasks
        from manifesto.tasks.runner import run

        # No store: a library call keeps nothing on disk (and so needs no code fingerprint).
        from manifesto.errors import say_warnings

        return say_warnings(run(Task(task), PairRequest(self, cluster, options, catalogs=True),
                                Tasks(Store(None), ""))).ok()


def load_spec(ref: str | Path, cluster=None, *, search=None) -> Spec:
    """Load a model spec by path or catalog name (``search``: a catalog.SearchPath).
    ``cluster`` (optional) is remembered for render()."""
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import load_model

    from manifesto.errors import ManifestoError, say_warnings

    path = find("models", str(ref), search=search)
    try:
        model, loaded = load_model(path, within(search))
    except ManifestoError as exc:
        raise say_warnings(exc)  # loading's warnings (data on what it returns or raises): said here
    say_warnings(loaded)
    return Spec(model, loaded, str(path), cluster)
