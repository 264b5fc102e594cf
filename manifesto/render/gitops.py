"""Argo CD delivery of deployment targets: the objects of ``out/gitops/<name>.yaml``.

A gitops target in BUILD.yaml names deployment targets, the repository holding this
workspace and the revision Argo CD follows. Its artifact holds:

- a patch of Argo CD's ``argocd-cm`` ConfigMap with the health checks of the kinds Argo CD
  does not know (the build passes every ``resource_customizations/<group>/<Kind>/health.lua``
  bundled in ``manifesto/data/argocd``; ``resource.customizations.health.<group>_<Kind>`` keys);
- an Application per deployment target: the target's ``out/deploy/<name>.yaml`` at that
  revision, synced server-side to the target's cluster and namespace, ignoring exactly the
  fields the instance's idle-shutdown controller owns (``render.k8s.idle_owned``), so
  self-heal does not scale an idle instance back up.

Everything here is a function of its arguments (it reads no input file): the build passes each
deployment's objects, the health checks' texts, and the declaration as BUILD.yaml wrote it.
"""

from __future__ import annotations

import re

__all__ = ["APP_VERSION", "GITOPS_OPTIONS", "OPEN_LIBS", "application", "argocd_cm_patch", "ignore_differences",
           "needs_open_libs", "render_gitops"]

APP_VERSION = "argoproj.io/v1alpha1"
#: ``syncOptions`` of every Application: server-side apply (the instance's objects are large,
#: and a field manager per writer is how the idle-shutdown controller's changes stay its own).
GITOPS_OPTIONS = ("ServerSideApply=true",)
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
                         "labels": {"app.kubernetes.io/name": "argocd-cm", PART_OF_LABEL: "argocd"}},
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


def application(name: str, settings: dict, deployment: dict, objs: list[dict]) -> dict:
    """The Application of one deployment target. ``deployment``: name, namespace, destination
    ({"server": ...} or {"name": ...}); ``settings``: the gitops target's declaration."""
    import posixpath

    folder = posixpath.normpath(posixpath.join(settings["path"], "out", "deploy"))
    sync: dict = {}
    if settings["automated"]:
        sync["automated"] = {"prune": True, "selfHeal": True}
    sync["syncOptions"] = list(GITOPS_OPTIONS)
    spec: dict = {
        "project": settings["project"],
        "source": {"repoURL": settings["repo_url"], "targetRevision": settings["revision"], "path": folder,
                   "directory": {"include": deployment["file"]}},
        "destination": {**deployment["destination"], "namespace": deployment["namespace"]},
        "syncPolicy": sync,
    }
    ignored = ignore_differences(objs)
    if ignored:
        spec["ignoreDifferences"] = ignored
    return {"apiVersion": APP_VERSION, "kind": "Application",
            "metadata": {"name": deployment["name"], "namespace": settings["namespace"],
                         "labels": {"app.kubernetes.io/managed-by": "manifesto", PART_OF_LABEL: name}},
            "spec": spec}


def header(name: str, settings: dict) -> str:
    lines = [
        f"# Argo CD delivery of BUILD.yaml's gitops target //:{name}: an argocd-cm patch with the health",
        "# checks of the kinds Argo CD does not know, and an Application per deployment target.",
        f"# Built by `manifesto build //:{name}`; an edit is overwritten by the next build.",
        f"# Install: kubectl apply --server-side -n {settings['namespace']} -f out/gitops/{name}.yaml",
    ]
    return "\n".join(lines) + "\n"


def render_gitops(name: str, settings: dict, deployments: list[tuple[dict, list[dict]]],
                  checks: list[tuple[str, str, str]]) -> str:
    """The artifact text: the argocd-cm patch, then the Applications in the order given."""
    from manifesto.util.yamlemit import dump_all

    objs = [argocd_cm_patch(settings["namespace"], checks)]
    objs += [application(name, settings, dep, dep_objs) for dep, dep_objs in deployments]
    return header(name, settings) + dump_all(objs)
