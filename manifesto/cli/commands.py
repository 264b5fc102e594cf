"""Subcommand definitions (argparse only) and their handlers (lazy imports inside)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["register"]


def _spec_args(p: argparse.ArgumentParser, render: bool = True) -> None:
    from manifesto.cli.completion import CATALOG

    p.add_argument("spec", metavar="SPEC", help="model spec: a path or a catalog name such as qwen/aggregated"
                   ).complete = CATALOG["models"]
    p.add_argument("--cluster", "-c", help="cluster profile: a path or catalog name "
                   "(default: MANIFESTO_CLUSTER or the kube context)").complete = CATALOG["clusters"]
    p.add_argument("--context", help="kube context used to pick a cluster profile and namespace")
    p.add_argument("--user", help="user for identity, labels and paths (default: $USER)")
    p.add_argument("--namespace", "-n", help="namespace (default: MANIFESTO_NAMESPACE or the kube context's)")
    p.add_argument("--accelerator", help="accelerator profile of the cluster (default: spec, then cluster default)")
    if not render:
        return
    p.add_argument("--vllm-env", help="absolute path of an existing vllm-envs worktree to run instead of the image's vLLM")
    p.add_argument("--user-root", help="override the cluster's user root path")
    p.add_argument("--log-root", help="override the cluster's log root path")
    p.add_argument("--cache-root", help="override the cluster's compiled-cache root path")
    p.add_argument("--pre-launch", action="append", metavar="CMD", help="shell command run before vLLM starts (repeatable)")
    p.add_argument("--routing-profile", help="EPP routing profile name or path (default: MANIFESTO_ROUTING_PROFILE)"
                   ).complete = CATALOG["routing"]
    p.add_argument("--idle-timeout", metavar="DURATION", help="idle-shutdown timeout, e.g. 15m or 2h")
    idle = p.add_mutually_exclusive_group()
    idle.add_argument("--idle-shutdown", action="store_true", help="add the idle-shutdown controller even when "
                      "the spec turns it off")
    idle.add_argument("--no-idle-shutdown", action="store_true", help="leave the idle-shutdown controller out")


def _add(sub, name: str, **kwargs):
    """A subcommand parser whose help is sized without importing shutil."""
    from manifesto.build_graph.cli import formatter

    return sub.add_parser(name, formatter_class=formatter(), **kwargs)


def register(sub) -> None:
    p = _add(sub, "explain", help="show how a spec resolves: features, layout, env provenance")
    _spec_args(p)
    p.add_argument("--output", "-o", choices=("text", "json"), default="text")
    p.set_defaults(func=_explain)

    render = _add(sub, "render", help="render artifacts").add_subparsers(dest="what", metavar="WHAT")
    render.required = True
    p = _add(render, "manifest", help="render a spec to stdout (Kubernetes YAML or sbatch script)")
    _spec_args(p)
    p.set_defaults(func=_render_manifest)
    p = _add(render, "file", help="render a spec to a file (default /tmp/manifesto.yaml or MANIFESTO_RENDER_OUT)")
    _spec_args(p)
    p.add_argument("--output", "-o", help="file to write")
    p.set_defaults(func=_render_file)

    p = _add(render, "routing", help="render only the llm-d routing layer of a spec")
    _spec_args(p)
    p.set_defaults(func=_render_routing)
    p = _add(render, "bootstrap", help="render namespace prerequisites of a cluster (shared cache PVC)")
    p.add_argument("--cluster", "-c", help="cluster profile: a path or catalog name")
    p.add_argument("--context", help="kube context used to pick a cluster profile and namespace")
    p.add_argument("--namespace", "-n", help="namespace (default: MANIFESTO_NAMESPACE or the kube context's)")
    p.set_defaults(func=_render_bootstrap)
    from manifesto.cli import workload_cmds

    workload_cmds.register(render, _add)

    config = _add(sub, "config", help="inspect and validate the user and bundled catalogs")
    csub = config.add_subparsers(dest="action", metavar="ACTION")
    csub.required = True
    p = _add(csub, "validate", help="validate a spec against a cluster offline, running the full renderer")
    _spec_args(p)
    p.set_defaults(func=_config_validate)
    p = _add(csub, "home", help="print the user catalog folder")
    p.set_defaults(func=_config_home)
    p = _add(csub, "list", help="list catalog entries and where each comes from")
    p.add_argument("kind", choices=("models", "clusters", "routing"))
    p.add_argument("--output", "-o", choices=("text", "name", "json"), default="text")
    p.set_defaults(func=_config_list)
    p = _add(csub, "resolve", help="print the file a catalog name resolves to")
    p.add_argument("kind", choices=("models", "clusters", "routing"))
    p.add_argument("name")
    p.set_defaults(func=_config_resolve)
    from manifesto.cli import catalog_cmds, completion

    catalog_cmds.register(csub, _add)
    completion.register(sub, _add)
    from manifesto.cli import e2e_cmds, ops_cmds, slurm_cmds

    ops_cmds.register(sub, _add)
    e2e_cmds.register(sub, _add)
    slurm_cmds.register(sub, _add, _spec_args)

    try:
        from manifesto.build_graph.cli import register as register_build
    except ImportError:  # the build package is optional in a partial install
        return
    register_build(sub)


def _load_pair(args):
    from manifesto.cli import settings as cli_settings
    from manifesto.cluster import load_cluster
    from manifesto.spec import load_spec

    env = cli_settings.settings()
    cluster = load_cluster(cli_settings.pick_cluster(args.cluster, env, args.context))
    spec = load_spec(args.spec, cluster)
    return spec, cluster, cli_settings.options(args, env)


def _explain(args) -> int:
    from manifesto.service import plan_for

    spec, cluster, opts = _load_pair(args)
    plan, _ = plan_for(spec, cluster, opts)
    if args.output == "json":
        import json

        from manifesto.resolve.plan import to_builtins

        print(json.dumps(to_builtins(plan), indent=2))
        return 0
    from manifesto.explain import explain_text

    sys.stdout.write(explain_text(plan))
    return 0


def _render(args, command: str = "render manifest") -> tuple[str, str]:
    """(text, suffix) of a render, served from the local render cache when inputs are unchanged."""
    import os
    import time

    from manifesto import rendercache
    from manifesto.catalog import find
    from manifesto.cli import settings as cli_settings

    started = time.time()
    env = cli_settings.settings()
    cluster_path = os.path.abspath(find("clusters", cli_settings.pick_cluster(args.cluster, env, args.context)))
    spec_path = os.path.abspath(find("models", args.spec))
    raw = cli_settings.raw_options(args, env)
    # Names resolve through the catalogs, so key on the files they resolve to: a user entry
    # that starts shadowing a bundled one must not be answered from the old entry.
    routing = os.path.abspath(find("routing", raw["routing_profile"])) if raw["routing_profile"] else None
    request = {"command": command, "spec": spec_path, "cluster": cluster_path, "routing": routing, "options": raw}
    # A pipe (`<(...)`, `-`) can be read only once and has no stable identity: never cached.
    regular = all(p is None or os.path.isfile(p) for p in (spec_path, cluster_path, routing))
    directory = rendercache.cache_dir(env) if regular else None
    hit = rendercache.lookup(directory, request)
    if hit is not None:
        suffix, _, text = hit.partition("\n")
        return text, suffix

    from manifesto.cluster import load_cluster
    from manifesto.service import render_text
    from manifesto.spec import load_spec

    cluster = load_cluster(cluster_path)
    spec = load_spec(spec_path, cluster)
    text, suffix, inputs = render_text(spec, cluster, cli_settings.options(args, env, raw))
    # A file edited while we rendered must not be remembered with the old text.
    if directory is not None and all(os.stat(p).st_mtime < started for p in inputs):
        rendercache.store(directory, request, inputs, f"{suffix}\n{text}")
    return text, suffix


def _render_manifest(args) -> int:
    text, _ = _render(args)
    sys.stdout.write(text)
    return 0


def _render_routing(args) -> int:
    from manifesto.errors import ResolveError
    from manifesto.service import expanded_inputs, plan_for
    from manifesto.render.k8s import render_routing

    spec, cluster, opts = _load_pair(args)
    plan, _ = plan_for(spec, cluster, opts)
    if plan.platform == "slurm":
        raise ResolveError("render routing is for Kubernetes clusters; Slurm batch scripts embed their router")
    if plan.routing is None:
        raise ResolveError(f"{args.spec} has routing disabled; there is no routing layer to render",
                           spec.where(("routing",)), "routing")
    sys.stdout.write(render_routing(plan, *expanded_inputs(spec, cluster), options=opts,
                                    routing_yaml=plan.routing.config_files[0][1] if opts.routing_profile else None))
    return 0


def _render_bootstrap(args) -> int:
    from manifesto.cli import settings as cli_settings
    from manifesto.cluster import load_cluster
    from manifesto.errors import ResolveError
    from manifesto.render.k8s.bootstrap import render_bootstrap
    from manifesto.render.yamlemit import dump_yaml

    env = cli_settings.settings()
    cluster = load_cluster(cli_settings.pick_cluster(args.cluster, env, args.context))
    if cluster.platform == "slurm":
        raise ResolveError(f"cluster '{cluster.name}' is a Slurm cluster; bootstrap objects are Kubernetes-only")
    namespace = cli_settings.pick_namespace(args.namespace, env, args.context)
    try:
        text = render_bootstrap(cluster.profile, namespace, dump_yaml(cluster.loaded.data))
    except ResolveError as exc:
        raise ResolveError(exc.message, cluster.where(("storage", "shared_claim")), exc.path) from None
    sys.stdout.write(text)
    return 0


def _render_file(args) -> int:
    from manifesto.cli import settings as cli_settings
    from manifesto.fsutil import write_atomic

    text, suffix = _render(args)
    target = args.output or cli_settings.settings().get("MANIFESTO_RENDER_OUT") or f"/tmp/manifesto{suffix}"
    write_atomic(target, text)
    print(f"wrote {target}", file=sys.stderr)
    return 0


def _config_validate(args) -> int:
    from manifesto.service import render_text

    spec, cluster, opts = _load_pair(args)
    text, suffix, _ = render_text(spec, cluster, opts)
    kind = "batch script" if suffix == ".sbatch" else "Kubernetes manifest"
    print(f"ok: {args.spec} renders against {cluster.name} ({kind}, {len(text.splitlines())} lines)")
    return 0


def _config_home(args) -> int:
    from manifesto.catalog import config_home

    print(config_home())
    return 0


def _config_list(args) -> int:
    from manifesto.catalog import entries

    rows = entries(args.kind)
    if args.output == "name":
        for name, *_ in rows:
            print(name)
    elif args.output == "json":
        import json

        print(json.dumps([{"name": n, "source": o, "path": str(p), "shadows_bundled": s} for n, o, p, s in rows], indent=2))
    else:
        width = max((len(r[0]) for r in rows), default=0)
        for name, origin, path, _ in rows:
            print(f"{name.ljust(width)}  {origin}")
    return 0


def _config_resolve(args) -> int:
    from manifesto.catalog import find

    print(find(args.kind, args.name))
    return 0
