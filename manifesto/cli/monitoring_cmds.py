"""``render monitoring``: PodMonitors, Prometheus/Grafana configuration, RBAC and dashboards."""

from __future__ import annotations

import sys

__all__ = ["register"]


def register(render, add) -> None:
    from manifesto.cli.common import spec_args

    p = add(render, "monitoring", help="render namespace-scoped monitoring (PodMonitors, Prometheus and "
            "Grafana configuration and RBAC, dashboards) for the instances of SPECs")
    # The options of the renders being monitored: they shape the plans the monitoring is built from.
    spec_args(p, specs_help="model specs whose instances to monitor")
    p.set_defaults(func=_render_monitoring)


def _render_monitoring(args) -> int:
    import manifesto.cli.settings as cli_settings
    from manifesto.cli.common import load_cluster_for, search_of
    from manifesto.spec import load_spec
    from manifesto.store import Store
    from manifesto.tasks.core import LoadedMonitoringRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    env = cli_settings.settings()
    cluster = load_cluster_for(args, env)
    options = cli_settings.options(args, env)
    specs = [load_spec(s, cluster, search=search_of(args)) for s in args.specs]
    # The MONITORING task on the loaded specs, as a build's monitoring target runs it; a
    # routing profile name resolves in the environment's catalogs (search None), as it did.
    request = LoadedMonitoringRequest(tuple(specs), cluster, options)
    text = run(Task.MONITORING, request, Tasks(Store(None), "")).ok().text
    from manifesto.cli.provenance import with_source

    sys.stdout.write(with_source(text, env))
    return 0
