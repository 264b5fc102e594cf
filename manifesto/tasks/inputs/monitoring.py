"""The monitoring artifact's text for loaded specs on one cluster, and its refusal of a Slurm
cluster (monitoring objects are Kubernetes-only)."""

from __future__ import annotations

__all__ = ["refuse_slurm", "monitoring_text"]


def refuse_slurm(cluster) -> None:
    """Monitoring objects are Kubernetes-only: a Slurm ``cluster`` is refused."""
    from manifesto.errors import ResolveError

    if cluster.platform == "slurm":
        raise ResolveError(f"cluster '{cluster.name}' is a Slurm cluster; monitoring objects are Kubernetes-only")


def monitoring_text(specs, cluster, options, resolved) -> tuple[str, list[str]]:
    """(monitoring YAML, files read) for the loaded ``specs`` on a Kubernetes ``cluster``;
    ``resolved`` is each spec's (Plan, files read), from its resolve task."""
    from manifesto.render import expanded_inputs
    from manifesto.render.monitoring import render_monitoring

    refuse_slurm(cluster)
    plans, files, models = [], list(cluster.loaded.files), []
    cluster_yaml = expanded_inputs(specs[0], cluster)[1] if specs else None
    routing_yaml = None
    for spec, (plan, read) in zip(specs, resolved, strict=True):
        plans.append(plan)
        files += read
        models.append(expanded_inputs(spec, cluster)[0])
        if options.routing_profile and plan.routing is not None:
            routing_yaml = plan.routing.config_files[0][1]
    if cluster_yaml is None:
        from manifesto.util.yamlemit import dump_yaml

        cluster_yaml = dump_yaml(cluster.loaded.data)
    text = render_monitoring(plans, options, models, cluster_yaml, routing_yaml)
    return text, sorted(set(files))
