"""The job of a pair the build evaluates: which task it runs and on what request.

A model target's pair runs RENDER on its spec and cluster, a monitoring target's MONITORING
over every model whose instances it monitors, a gitops target's GITOPS over the deployments
it delivers. Each request is made from the graph, the workspace root and the renderer's
``RenderOptions`` alone; the executor (``executor.run_jobs``) runs the jobs.
"""

from __future__ import annotations

import os

__all__ = ["gitops_request", "job"]


def job(item, ws, graph, renderer: str):
    """The ``executor.Job`` of ``item`` (a ``planning.Item``) in workspace ``ws``, with the
    render options of the renderer module ``renderer``."""
    import manifesto.build_graph.renderer as renderers
    from manifesto.build_graph.executor import Job
    from manifesto.tasks import MonitoringRequest, PairRequest, Task

    model, cluster = item.pair
    root = ws.root
    options = dict(graph.options(model))
    if options.get("routing_profile"):
        options["routing_profile"] = os.path.join(root, options["routing_profile"])
    options = renderers.load(renderer).RenderOptions(**options)
    cluster_path = os.path.join(root, graph.clusters[cluster].path)
    mon = graph.monitors.get(model)
    if mon is not None:  # the path of every model whose instances it monitors
        specs = tuple(os.path.join(root, m) for m in mon.models)
        task, request = Task.MONITORING, MonitoringRequest(specs, cluster_path, options, (root,))
    elif model in graph.gitops:
        task, request = Task.GITOPS, gitops_request(graph.gitops[model], ws, graph, renderer)
    else:
        task, request = Task.RENDER, PairRequest(os.path.join(root, graph.source(model)), cluster_path,
                                                 options, (root,))
    return Job(item.pair, task, request, item.context, graph.out_base(item.pair))


def gitops_request(gitops, ws, graph, renderer: str):
    """The GITOPS request of the gitops target ``gitops``: the declaration, BUILD.yaml (its
    input: the declaration lives there), each covered deployment's name, model and cluster
    files, render options and kube context, and the monitoring targets on those clusters."""
    import manifesto.build_graph.renderer as renderers
    from manifesto.tasks import GitopsDeployment, GitopsMonitoring, GitopsRequest

    root = ws.root
    make = renderers.load(renderer).RenderOptions
    deployments = []
    for key in gitops.deployments:
        dep = graph.deployments[key]
        values = dict(graph.options(key))
        if values.get("routing_profile"):
            values["routing_profile"] = os.path.join(root, values["routing_profile"])
        deployments.append(GitopsDeployment(dep.name, os.path.join(root, dep.model),
                                            os.path.join(root, graph.clusters[dep.cluster].path),
                                            make(**values), dep.context))
    # The monitoring targets on the clusters it delivers deployments to get Applications too.
    contexts: dict = {}
    for key in gitops.deployments:
        contexts.setdefault(graph.deployments[key].cluster, graph.deployments[key].context)
    monitoring = tuple(GitopsMonitoring(mon.name, os.path.join(root, graph.clusters[mon.cluster].path),
                                        graph.options(key)["namespace"], contexts[mon.cluster])
                       for key, mon in sorted(graph.monitors.items()) if mon.cluster in contexts)
    return GitopsRequest(gitops.name, gitops.settings, gitops.explicit, ws.buildfile,
                         tuple(deployments), (root,), monitoring)
