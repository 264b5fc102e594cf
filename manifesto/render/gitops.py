"""Argo CD delivery of deployment targets: the objects of ``out/gitops/<name>.yaml``.

A gitops target in BUILD.yaml names deployment targets, the repository holding this
workspace and the revision Argo CD follows. Its artifact holds, in this order:

- a patch of Argo CD's ``argocd-cm`` ConfigMap with the health checks of the kinds Argo CD
  does not know (the build passes every ``resource_customizations/<group>/<Kind>/health.lua``
  bundled in ``manifesto/data/argocd``; ``resource.customizations.health.<group>_<Kind>`` keys,
  and ``resource.customizations.useOpenLibs.<group>_<Kind>`` for a check that needs Lua's
  standard libraries), never pruned or deleted by Argo CD;
- the root Application ``<name>`` (app of apps): this very file at that revision, synced into
  Argo CD's namespace with pruning, so that a target removed from BUILD.yaml loses its
  Application, and that Application's resources finalizer removes what it deployed;
- an Application per deployment target: the target's ``out/deploy/<name>.yaml`` at that
  revision, synced server-side to the target's cluster and namespace (created when missing),
  ignoring exactly the fields the instance's idle-shutdown controller owns
  (``render.k8s.idle_owned``), so that they are no drift and self-heal leaves them alone;
- an Application per monitoring target on the clusters of those deployments: its
  ``out/monitoring/<name>.yaml``.

Everything here is a function of its arguments (it reads no input file): the build passes each
deployment's objects, the health checks' texts, and the declaration as BUILD.yaml wrote it.
"""

from __future__ import annotations

import re

__all__ = ["APP_VERSION", "FINALIZER", "GITOPS_OPTIONS", "GitopsSettings", "OPEN_LIBS", "ROOT_OPTIONS", "application",
           "argocd_cm_patch", "ignore_differences", "needs_open_libs", "render_gitops", "root_application"]


class GitopsSettings:
    """What a ``kind: gitops`` target declares, as BUILD.yaml's loader checked it
    (``build_graph.buildfile``): ``repo_url``, ``revision`` and ``path`` of the repository Argo
    CD syncs, the Applications' ``namespace`` and ``project``, the ``destination`` (None, or
    ``{"name" | "server": value}``) and whether sync is ``automated``. The build manifest keeps
    it as a plain dict (:meth:`plain`); the GITOPS task and :func:`render_gitops` read it."""

    __slots__ = ("repo_url", "revision", "path", "namespace", "project", "destination", "automated")

    def __init__(self, repo_url: str, revision: str, path: str, namespace: str, project: str,
                 destination: dict | None, automated: bool) -> None:
        self.repo_url, self.revision, self.path = repo_url, revision, path
        self.namespace, self.project, self.destination, self.automated = namespace, project, destination, automated

    def plain(self) -> dict:
        """The settings as a dict of plain values (the manifest's row)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other) -> bool:
        return type(other) is GitopsSettings and other.plain() == self.plain()

    __hash__ = None

    def __repr__(self) -> str:
        return f"GitopsSettings({self.plain()!r})"


APP_VERSION = "argoproj.io/v1alpha1"
#: ``syncOptions`` of every deployment's and monitoring target's Application: server-side
#: apply (the instance's objects are large, and a field manager per writer is how the
#: idle-shutdown controller's changes stay its own), and the destination namespace created
#: when it is missing. Not ApplyOutOfSyncOnly (a new revision would wake only the objects it
#: changed) nor RespectIgnoreDifferences (a new revision would never wake an idle instance):
#: README, "GitOps with Argo CD".
GITOPS_OPTIONS = ("ServerSideApply=true", "CreateNamespace=true")
#: ``syncOptions`` of the root Application: server-side apply, so that the argocd-cm patch owns
#: its keys only.
ROOT_OPTIONS = ("ServerSideApply=true",)
#: Deleting an Application with it first deletes what the Application deployed
#: (pkg/apis/application/v1alpha1/application_defaults.go ResourcesFinalizerName).
FINALIZER = "resources-finalizer.argocd.argoproj.io"
#: A resource-level sync option: Argo CD never prunes argocd-cm, nor deletes it with the root.
KEEP = "Prune=false,Delete=false"
#: Where Argo CD runs, as every Argo CD names it (its in-cluster destination).
IN_CLUSTER = "https://kubernetes.default.svc"
PART_OF_LABEL = "app.kubernetes.io/part-of"


#: The Lua libraries Argo CD opens for a check from ``argocd-cm`` only with
#: ``resource.customizations.useOpenLibs.<group>_<Kind>: "true"`` (util/lua/lua.go at v3.5.1:
#: ``lua.NewState(lua.Options{SkipOpenLibs: !vm.UseOpenLibs})``, then package, base and table;
#: its "safe os" is registered under the table library's name and so never becomes ``os``).
OPEN_LIBS = ("string", "os", "math", "io", "debug", "coroutine", "channel")
_LIBRARY_USE = re.compile(r"\b(?:" + "|".join(OPEN_LIBS) + r")\s*\.")


def needs_open_libs(script: str) -> bool:
    """Whether a check's code (its ``--`` comments aside) names one of ``OPEN_LIBS``."""
    code = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
    return _LIBRARY_USE.search(code) is not None


def argocd_cm_patch(namespace: str, checks: list[tuple[str, str, str]]) -> dict:
    """The ``argocd-cm`` keys that install ``checks`` ((group, Kind, Lua text) each): the
    script, and ``useOpenLibs`` for a script that needs the standard libraries."""
    data = {}
    for group, kind, text in checks:
        data[f"resource.customizations.health.{group}_{kind}"] = text
        if needs_open_libs(text):
            data[f"resource.customizations.useOpenLibs.{group}_{kind}"] = "true"
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm", "namespace": namespace,
                         "labels": {"app.kubernetes.io/name": "argocd-cm", PART_OF_LABEL: "argocd"},
                         "annotations": {"argocd.argoproj.io/sync-options": KEEP,
                                         "argocd.argoproj.io/sync-wave": "-1"}},
            "data": data}


def _pointer(path: tuple[str, ...]) -> str:
    """An RFC 6901 JSON pointer (``/spec/replicas``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def ignore_differences(objs: list[dict]) -> list[dict]:
    """One ``ignoreDifferences`` entry per object whose fields the idle-shutdown controller owns
    (none without a controller), each naming the object and exactly those fields."""
    from manifesto.render.k8s.idle_owned import owned_fields

    owned, _deleted = owned_fields(objs)
    return [{"group": o.group, "kind": o.kind, "name": o.name, "namespace": o.namespace,
             "jsonPointers": [_pointer(p) for p in o.paths]} for o in owned]


def _sync(settings: GitopsSettings, options: tuple[str, ...]) -> dict:
    sync: dict = {}
    if settings.automated:
        sync["automated"] = {"prune": True, "selfHeal": True}
    sync["syncOptions"] = list(options)
    return sync


def _app(name: str, part_of: str, settings: GitopsSettings, folder: str, include: str, destination: dict,
         sync: dict, finalizer: bool = True) -> dict:
    import posixpath

    meta: dict = {"name": name, "namespace": settings.namespace,
                  "labels": {"app.kubernetes.io/managed-by": "manifesto", PART_OF_LABEL: part_of}}
    if finalizer:
        meta["finalizers"] = [FINALIZER]
    return {"apiVersion": APP_VERSION, "kind": "Application",
            "metadata": meta,
            "spec": {"project": settings.project,
                     "source": {"repoURL": settings.repo_url, "targetRevision": settings.revision,
                                "path": posixpath.normpath(posixpath.join(settings.path, "out", folder)),
                                "directory": {"include": include}},
                     "destination": destination,
                     "syncPolicy": sync}}


def application(name: str, settings: GitopsSettings, deployment: dict, objs: list[dict], folder: str = "deploy") -> dict:
    """The Application of one deployment target (or, with ``folder="monitoring"``, of a
    monitoring target). ``deployment``: name, namespace, file, destination ({"server": ...} or
    {"name": ...}); ``settings``: the gitops target's declaration."""
    app = _app(deployment["name"], name, settings, folder, deployment["file"],
               {**deployment["destination"], "namespace": deployment["namespace"]}, _sync(settings, GITOPS_OPTIONS))
    ignored = ignore_differences(objs)
    if ignored:
        app["spec"]["ignoreDifferences"] = ignored
    return app


def root_application(name: str, settings: GitopsSettings) -> dict:
    """The root Application: the artifact ``out/gitops/<name>.yaml`` itself, on Argo CD's own
    cluster. It owns the Applications (and itself, and the argocd-cm patch): pruning removes
    the Application of a target BUILD.yaml no longer has. No resources finalizer: it is one
    of its own resources, and Argo CD v3.5.1 deletes an Application's resources only once none
    of them has a deletion timestamp (controller/appcontroller.go finalizeApplicationDeletion),
    its own included, so a cascading delete of the root would never finish."""
    return _app(name, name, settings, "gitops", f"{name}.yaml",
                {"server": IN_CLUSTER, "namespace": settings.namespace}, _sync(settings, ROOT_OPTIONS),
                finalizer=False)


def header(name: str, settings: GitopsSettings) -> str:
    lines = [
        f"# Argo CD delivery of BUILD.yaml's gitops target //:{name}: an argocd-cm patch with the health",
        "# checks of the kinds Argo CD does not know, the root Application of this file, and an",
        "# Application per deployment and monitoring target.",
        f"# Built by `manifesto build //:{name}`; an edit is overwritten by the next build.",
        f"# Install once: kubectl apply --server-side -n {settings.namespace} -f out/gitops/{name}.yaml",
        f"# (then the root Application //:{name} syncs this file from the repository).",
    ]
    return "\n".join(lines) + "\n"


def render_gitops(name: str, settings: GitopsSettings, deployments: list[tuple[dict, list[dict]]],
                  checks: list[tuple[str, str, str]], monitoring: list[dict] = ()) -> str:
    """The artifact text: the argocd-cm patch, the root Application, the deployments'
    Applications in the order given, then the monitoring targets' ones."""
    from manifesto.errors import BuildError
    from manifesto.util.yamlemit import dump_all

    objs = [argocd_cm_patch(settings.namespace, checks), root_application(name, settings)]
    objs += [application(name, settings, dep, dep_objs) for dep, dep_objs in deployments]
    objs += [application(name, settings, mon, [], "monitoring") for mon in monitoring]
    seen: set[str] = set()
    for app in objs[1:]:
        if app["metadata"]["name"] in seen:
            raise BuildError(f"gitops target //:{name}: two Applications would be named "
                             f"'{app['metadata']['name']}'")
        seen.add(app["metadata"]["name"])
    return header(name, settings) + dump_all(objs)
