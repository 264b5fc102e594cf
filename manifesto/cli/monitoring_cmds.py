"""``render monitoring``: PodMonitors, Prometheus/Grafana configuration, RBAC and dashboards."""

from __future__ import annotations

import sys

__all__ = ["register"]


def register(render, add) -> None:
    from manifesto.cli.hints import CATALOG

    p = add(render, "monitoring", help="render namespace-scoped monitoring (PodMonitors, Prometheus and "
            "Grafana configuration and RBAC, dashboards) for the instances of SPECs")
    p.add_argument("specs", nargs="+", metavar="SPEC", help="model specs whose instances to monitor"
                   ).complete = CATALOG["models"]
    p.add_argument("--cluster", "-c", help="cluster profile: a path or catalog name "
                   "(default: MANIFESTO_CLUSTER or the kube context)").complete = CATALOG["clusters"]
    p.add_argument("--context", help="kube context used to pick a cluster profile and namespace")
    p.add_argument("--user", help="user the instances were rendered for (default: $USER)")
    p.add_argument("--namespace", "-n", help="namespace (default: MANIFESTO_NAMESPACE or the kube context's)")
    p.add_argument("--routing-profile", help="EPP routing profile the instances use").complete = CATALOG["routing"]
    p.set_defaults(func=_render_monitoring)


def _render_monitoring(args) -> int:
    from manifesto.cli import settings as cli_settings
    from manifesto.cli.common import load_cluster_for, search_of
    from manifesto.service import monitoring_text
    from manifesto.spec import load_spec

    env = cli_settings.settings()
    cluster = load_cluster_for(args, env)
    options = cli_settings.options(args, env)
    specs = [load_spec(s, cluster, search=search_of(args)) for s in args.specs]
    text, _ = monitoring_text(specs, cluster, options)
    from manifesto.cli.provenance import with_source

    sys.stdout.write(with_source(text, env))
    return 0
