"""BUILD.yaml's target generators as typed records, one class per kind.

``buildfile.parse_buildfile`` makes one record of each entry of ``targets:``;
``graph.build_graph`` turns them into targets and pairs. The manifest (``state.py``) is
written with ``marshal``, which keeps no class instances, so it holds each record as a
plain row, ``(kind, field, ...)``: :func:`to_rows` and :func:`from_rows` convert. This module
imports nothing at the top (a gitops row's settings become ``render.gitops.GitopsSettings``, a
module of plain Python): the no-op build reads its records back on every run.
"""

from __future__ import annotations

__all__ = ["SourceGenerator", "DeploymentGenerator", "MonitoringGenerator", "GitopsGenerator",
           "SOURCE_KINDS", "from_rows", "to_rows"]

#: The kinds whose targets are files found under a directory (the others are declared in BUILD.yaml).
SOURCE_KINDS = ("model", "cluster", "routing")


class _Generator:
    """Slotted fields, compared and printed by value; ``kind`` names the generator's kind."""

    __slots__ = ()
    kind: str

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._values() == self._values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class SourceGenerator(_Generator):
    """``kind: model | cluster | routing``: the files under ``path`` (a directory relative to
    BUILD.yaml) that match a pattern of ``includes`` and none of ``excludes``. Only model
    generators have ``clusters`` (addresses; None: every cluster target) and ``options`` (the
    render option values, in ``OPTION_FIELDS`` order); both are None for the other kinds."""

    __slots__ = ("kind", "path", "includes", "excludes", "clusters", "options")

    def __init__(self, kind: str, path: str, includes: tuple, excludes: tuple, clusters=None,
                 options=None) -> None:
        self.kind, self.path, self.includes, self.excludes = kind, path, includes, excludes
        self.clusters, self.options = clusters, options


class DeploymentGenerator(_Generator):
    """``kind: deployment``: target ``//:name``, one artifact of the ``model`` target (an address
    or root-relative path) on the ``cluster`` target (a name or address), for the kube
    ``context`` or the ``slurm_host`` (at most one of them; None when not given), rendered with
    ``options`` (values in ``OPTION_FIELDS`` order, the target's own user and namespace applied)."""

    __slots__ = ("name", "model", "cluster", "context", "slurm_host", "options")
    kind = "deployment"

    def __init__(self, name: str, model: str, cluster: str, context, slurm_host, options: tuple) -> None:
        self.name, self.model, self.cluster = name, model, cluster
        self.context, self.slurm_host, self.options = context, slurm_host, options


class MonitoringGenerator(_Generator):
    """``kind: monitoring``: target ``//:name``, the monitoring stack of one ``cluster`` target
    for the model targets ``models`` (addresses) name, rendered with ``options`` (as for a
    deployment)."""

    __slots__ = ("name", "models", "cluster", "options")
    kind = "monitoring"

    def __init__(self, name: str, models: tuple, cluster: str, options: tuple) -> None:
        self.name, self.models, self.cluster, self.options = name, models, cluster, options


class GitopsGenerator(_Generator):
    """``kind: gitops``: target ``//:name``, Argo CD delivery of the deployment targets
    ``deployments`` names (addresses; None: every one without a Slurm host). ``settings``: a
    ``render.gitops.GitopsSettings`` (repo_url, revision, path, namespace, project,
    destination and automated); its row holds them as a plain dict."""

    __slots__ = ("name", "deployments", "settings")
    kind = "gitops"

    def __init__(self, name: str, deployments, settings) -> None:
        self.name, self.deployments, self.settings = name, deployments, settings


_DECLARED = {cls.kind: cls for cls in (DeploymentGenerator, MonitoringGenerator, GitopsGenerator)}


def to_rows(generators) -> tuple:
    """The manifest's form of ``generators``: a ``(kind, field, ...)`` tuple each."""
    return tuple(_row(g) for g in generators)


def _row(g) -> tuple:
    if type(g) is SourceGenerator:
        return g._values()
    if type(g) is GitopsGenerator:  # marshal keeps no instances: the settings as a plain dict
        return (g.kind, g.name, g.deployments, g.settings.plain())
    return (g.kind, *g._values())


def from_rows(rows) -> list | None:
    """The records of a manifest's ``rows``; None when they are not rows this module wrote
    (a damaged or planted manifest: the caller parses BUILD.yaml again)."""
    if type(rows) is not tuple:
        return None
    out: list = []
    for row in rows:
        if type(row) is not tuple or not row or not _well_formed(row):
            return None
        if row[0] in SOURCE_KINDS:
            out.append(SourceGenerator(*row))
        elif row[0] == "gitops":
            from manifesto.render.gitops import GitopsSettings

            out.append(GitopsGenerator(row[1], row[2], GitopsSettings(**row[3])))
        else:
            out.append(_DECLARED[row[0]](*row[1:]))
    return out


def _strs(value) -> bool:
    return type(value) is tuple and all(type(v) is str and _printable(v) for v in value)


def _printable(value: str) -> bool:
    return 0 < len(value) <= 4096 and value.isprintable()


def _name(value) -> bool:
    """A declared target's name as BUILD.yaml's grammar has it (``buildfile.Reader.name``)."""
    import re

    return type(value) is str and value != "all" and re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", value) is not None


def folder_ok(value) -> bool:
    """A folder relative to BUILD.yaml in the normal form ``buildfile.Reader.base_path`` gives:
    ``.`` or parts that are neither empty, ``.`` nor ``..``, and no leading ``/``."""
    if type(value) is not str or not _printable(value) or "\\" in value:
        return False
    return value == "." or (not value.startswith("/") and all(p not in ("", ".", "..") for p in value.split("/")))


def _well_formed(row: tuple) -> bool:
    """Each field of the row of the type its record holds, names and folders in BUILD.yaml's
    grammar (a verified manifest is still data: the option values are checked by the renderer
    that reads them, as when they come from BUILD.yaml)."""
    kind, values = row[0], row[1:]
    if kind in SOURCE_KINDS:
        if len(values) != 5:
            return False
        path, includes, excludes, clusters, options = values
        return (folder_ok(path) and _strs(includes) and _strs(excludes)
                and (clusters is None or _strs(clusters)) and (options is None or type(options) is tuple))
    if kind == "deployment" and len(values) == 6:
        name, model, cluster, context, slurm_host, options = values
        return (_name(name) and _strs((model, cluster)) and type(options) is tuple
                and all(v is None or (type(v) is str and _printable(v)) for v in (context, slurm_host)))
    if kind == "monitoring" and len(values) == 4:
        name, models, cluster, options = values
        return _name(name) and _strs(models) and _strs((cluster,)) and type(options) is tuple
    if kind == "gitops" and len(values) == 3:
        name, deployments, settings = values
        return (_name(name) and (deployments is None or _strs(deployments)) and type(settings) is dict
                and _gitops_settings_ok(settings) and folder_ok(settings.get("path")))
    return False


_GITOPS_SETTINGS = frozenset(("repo_url", "revision", "path", "namespace", "project", "destination", "automated"))


def _gitops_settings_ok(settings: dict) -> bool:
    """A gitops row's settings as ``buildfile`` makes them: its keys, and the URLs, revision,
    project and destination of the grammar BUILD.yaml's are checked with (a planted manifest
    cannot put a URL with credentials or a revision YAML would retype into out/gitops/)."""
    import manifesto.build_graph.gitops_rules as rules

    if set(settings) != _GITOPS_SETTINGS or type(settings["automated"]) is not bool:
        return False
    if type(settings["namespace"]) is not str or rules.path_problem(settings["path"]) is not None:
        return False
    destination = settings["destination"]
    if destination is not None:
        if type(destination) is not dict or len(destination) != 1 or not set(destination) <= {"name", "server"}:
            return False
        (key, value), = destination.items()
        if (rules.server_problem if key == "server" else rules.cluster_name_problem)(value) is not None:
            return False
    return (rules.repo_url_problem(settings["repo_url"]) is None and rules.revision_problem(settings["revision"]) is None
            and rules.project_problem(settings["project"]) is None)
