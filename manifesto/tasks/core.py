"""The tasks' typed requests and products (:func:`manifesto.tasks.runner.run` runs them).

Every route to rendered text goes through ``run``: ``render manifest``, ``render
file``, ``config validate`` and ``explain`` (``manifesto.tasks.commands``), the build's
executor (``manifesto.build_graph.executor``, with the store and code fingerprint of the
build) and the build's library API on top of it. A pair's outcome is one
:class:`Outcome`: its status, text, the files it read and the keys of the products it
kept in the store, and the error when there is one. Nothing about it travels on an
exception or a module attribute.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import msgspec

from manifesto.errors import ManifestoError
from manifesto.resolve.options import Options
from manifesto.tasks.status import Status

if TYPE_CHECKING:
    from manifesto.cluster import Cluster
    from manifesto.load.catalog import SearchPath
    from manifesto.load.inputs import LoadedSpec
    from manifesto.load.yamlio import Locations
    from manifesto.render.products import Artifact
    from manifesto.render.gitops import GitopsSettings
    from manifesto.resolve.plan import Plan

__all__ = ["Task", "FileRequest", "FileDigest", "ParseRequest", "ParsedFile", "PairRequest", "MonitoringRequest",
           "GitopsDeployment", "GitopsMonitoring", "GitopsRequest",
           "Outcome"]


class Task(str, enum.Enum):
    """What to make. ``DIGEST`` and ``PARSE`` are the per-file tasks the others stand on;
    ``RESOLVE`` makes a pair's Plan, ``RENDER`` its artifact's text (kept in the store),
    ``ARTIFACT`` its :class:`~manifesto.render.products.Artifact` (objects and text, for the
    commands that apply, test or deliver them), ``EXPLAIN`` its explanation,
    ``MONITORING`` the monitoring of several specs on one cluster and ``GITOPS`` the Argo CD
    objects of a gitops target."""

    DIGEST = "digest"
    PARSE = "parse"
    RESOLVE = "resolve"
    RENDER = "render"
    ARTIFACT = "artifact"
    EXPLAIN = "explain"
    MONITORING = "monitoring"
    GITOPS = "gitops"


class FileRequest(msgspec.Struct, frozen=True):
    """The digest task's request: one input file, by path."""

    path: str


class FileDigest(msgspec.Struct, frozen=True):
    """The digest task's product: what one read of ``path`` saw. ``signature`` is
    ``edge.signatures.signature``'s ``(mtime_ns, size, inode, ctime_ns)`` and ``trusted``
    says whether a later run may trust it (``edge.signatures.hash_file``); both are None/False, and
    ``digest`` is None, when the file cannot be read."""

    path: str
    signature: tuple[int, int, int, int] | None
    digest: str | None
    trusted: bool = False


class ParseRequest(msgspec.Struct, frozen=True):
    """The parse task's request: the YAML file at ``path``, its positions named ``name``,
    read only below ``within`` (``yamlio.confinement``; empty: anywhere)."""

    path: str
    name: str
    within: tuple[str, ...] = ()


class ParsedFile(msgspec.Struct, frozen=True):
    """The parse task's product: the plain data of one YAML file and the positions of its
    keys and list items (a ``yamlio.Locations``), named after the file as requested."""

    name: str
    data: dict | list | str | int | float | bool | None  # the file's YAML value, as plain data
    locations: Locations


class PairRequest(msgspec.Struct, frozen=True):
    """One spec on one cluster, with the render options: the one request of the RESOLVE,
    RENDER, ARTIFACT and EXPLAIN tasks.

    ``spec`` and ``cluster`` each refer to an input either by path (or, with ``catalogs``, a
    name the user's catalogs resolve, as the single commands take them) or as the caller
    already loaded it: a ``manifesto.load.inputs.LoadedSpec`` (such as the public
    ``manifesto.spec.Spec``, or ``manifesto plan``'s candidate layout, a spec that is data,
    not a file) and a ``manifesto.cluster.Cluster``, used as they are, not read again.
    ``roots``: a build's workspace; every file read must resolve below one of them or the
    bundled catalog, and no catalog name is looked up. ``search`` (a
    ``load.catalog.SearchPath``) is where names resolve when the caller knows it; None: from
    ``roots`` and ``catalogs``. ``hf_home``: a Hugging Face cache ``explain`` may read a
    config.json from (renders and builds never pass one, so they stay hermetic). ``layer``:
    what the ARTIFACT task makes, "manifest" (the whole instance) or "routing" (its routing
    layer)."""

    spec: str | LoadedSpec
    cluster: str | Cluster
    options: Options
    roots: tuple[str, ...] = ()
    catalogs: bool = False
    search: SearchPath | None = None
    hf_home: str | None = None
    layer: str = "manifest"


class MonitoringRequest(msgspec.Struct, frozen=True):
    """The monitoring of the instances of ``specs`` on ``cluster`` (each a path or a loaded
    input, as in :class:`PairRequest`; ``roots``, ``catalogs`` and ``search`` too). ``explicit``: the caller
    named each spec (``render monitoring``), so one the cluster cannot run is the outcome's
    error; a build's monitoring target leaves such a spec out."""

    specs: tuple[str | LoadedSpec, ...]
    cluster: str | Cluster
    options: Options
    roots: tuple[str, ...] = ()
    catalogs: bool = False
    search: SearchPath | None = None
    explicit: bool = False


class GitopsDeployment(msgspec.Struct, frozen=True):
    """One deployment target a gitops target delivers: its name, spec and cluster paths, the
    options it renders with and its kube context (None: the cluster's name stands for it)."""

    name: str
    spec: str
    cluster: str
    options: Options
    context: str | None = None


class GitopsMonitoring(msgspec.Struct, frozen=True):
    """One monitoring target a gitops target delivers: its name, cluster path and namespace,
    and the kube context of the first delivered deployment on that cluster (None: the
    cluster's name stands for it), so that both go to the same Argo CD cluster."""

    name: str
    cluster: str
    namespace: str
    context: str | None = None


class GitopsRequest(msgspec.Struct, frozen=True):
    """The Argo CD objects of gitops target ``name``: its declaration's ``settings`` (a
    ``render.gitops.GitopsSettings``, as BUILD.yaml's loader checked them), whether it named its ``deployments`` (``explicit``) or
    covers every one, ``buildfile``, where the declaration lives (an input), and the
    ``monitoring`` targets on the clusters of its deployments."""

    name: str
    settings: GitopsSettings
    explicit: bool
    buildfile: str
    deployments: tuple[GitopsDeployment, ...]
    roots: tuple[str, ...] = ()
    monitoring: tuple[GitopsMonitoring, ...] = ()


class Outcome(msgspec.Struct, frozen=True):
    """What running a pair's task came to.

    ``status``: OK (``text`` with ``suffix``; for RESOLVE, ``plan``), SKIPPED (the pair is
    incompatible) or FAILED; ``reason`` is the error's text. ``inputs``: the absolute paths
    of every file read, the error's included (empty: unknown, so the outcome cannot be kept
    against them). ``products``: the store keys of the resolve and render products it made
    or reused. ``error``: the ManifestoError, when this process raised it (a failure read
    back from the store has only its ``reason``). ``cluster_name`` is the cluster's name
    when it was loaded; ``budget`` the Plan's GPU budget as plain data; ``text_digest`` the
    digest of ``text``, when known (the build stores and records it without hashing it again);
    ``artifact`` the ARTIFACT task's :class:`~manifesto.render.products.Artifact` (None when
    the plan has no such layer: the routing layer of a plan without routing, or of a Slurm plan).
    ``warnings``: the checks the resolution could not make, and why
    (``tasks.inputs.plan.plan_warnings``), as data: the caller says them (the CLI once in its
    run, the library on stderr, a build once however many workers found them)."""

    status: Status
    text: str = ""
    suffix: str = ""
    reason: str = ""
    inputs: tuple[str, ...] = ()
    products: tuple[str, ...] = ()
    budget: dict | None = None
    cluster_name: str = ""
    plan: Plan | None = None
    error: ManifestoError | None = None
    text_digest: str = ""  # the digest of ``text`` (load.digest.digest) when the render product has it
    artifact: Artifact | None = None
    warnings: tuple[str, ...] = ()

    def ok(self) -> Outcome:
        """This outcome when its status is OK; else its error, raised (a failure read back
        from the store has only its ``reason``: a ManifestoError of that text)."""
        if self.status == Status.OK:
            return self
        raise self.error if self.error is not None else ManifestoError(self.reason)
