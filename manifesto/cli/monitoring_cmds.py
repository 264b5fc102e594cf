"""``render monitoring``: PodMonitors, Prometheus/Grafana configuration, RBAC and dashboards."""

from __future__ import annotations

import sys
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]


def register(render, add) -> None:
    from manifesto.cli.common import spec_args

    p = add(render, "monitoring", help=SUMMARIES["render monitoring"])
    # The options of the renders being monitored: they shape the plans the monitoring is built from.
    spec_args(p, specs_help="model specs whose instances to monitor")
    p.set_defaults(func=_render_monitoring)


def _render_monitoring(args) -> int:
    import manifesto.cli.settings as cli_settings
    from manifesto.cli.common import load_cluster_for, search_of

    env = cli_settings.settings()
    cluster = load_cluster_for(args, env)
    options = cli_settings.options(args, env)
    from manifesto.cli.provenance import with_source

    # a routing profile name resolves in the environment's catalogs (search None), as it did
    sys.stdout.write(with_source(monitoring_text(args.specs, cluster, options, search_of(args)), env))
    return 0


def monitoring_text(specs, cluster, options, search, routing_search=None) -> str:
    """The monitoring of ``specs`` (paths or names ``search`` finds) on the loaded ``cluster``:
    the MONITORING task on the loaded specs, as a build's monitoring target runs it;
    ``routing_search``: where a routing profile name resolves (None: the user's catalogs)."""
    from manifesto.errors import say_warnings
    from manifesto.spec import load_spec
    from manifesto.store import Store
    from manifesto.tasks.core import MonitoringRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    loaded = [load_spec(s, cluster, search=search) for s in specs]
    request = MonitoringRequest(tuple(loaded), cluster, options, catalogs=True, search=routing_search,
                                explicit=True)
    return say_warnings(run(Task.MONITORING, request, Tasks(Store(None), ""))).ok().text
