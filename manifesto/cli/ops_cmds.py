"""Kubernetes workflow commands: file diff/apply, deploy, servers, stop, ready.

argparse only at registration; the handlers import ``manifesto.ops`` lazily.
"""

from __future__ import annotations

import argparse

__all__ = ["register"]

_DEPLOY_USAGE = ("manifesto deploy SPEC [options]\n"
                 "       manifesto deploy routing SPEC [options]\n"
                 "       manifesto deploy bootstrap [--cluster C] [--namespace N]")


def _kube_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--context", help="kube context passed to kubectl")
    p.add_argument("--namespace", "-n", help="namespace (default: MANIFESTO_NAMESPACE or the kube context's)")


def register(sub, add) -> None:
    from manifesto.cli.commands import _spec_args
    from manifesto.numbers import seconds_arg

    files = add(sub, "file", help="diff or apply a rendered manifest file against the cluster")
    fsub = files.add_subparsers(dest="action", metavar="ACTION")
    fsub.required = True
    for name, func, what in (("diff", _file_diff, "kubectl diff a rendered file (exit 1 when it differs)"),
                             ("apply", _file_apply, "ensure hf-secret, then kubectl apply a rendered file as-is")):
        p = add(fsub, name, help=what)
        p.add_argument("--output", "-o", metavar="FILE",
                       help="the rendered file (default: MANIFESTO_RENDER_OUT or /tmp/manifesto.yaml)")
        p.add_argument("--cluster", "-c", help="cluster profile, only to refuse Slurm clusters")
        _kube_args(p)
        p.set_defaults(func=func)

    p = add(sub, "deploy", usage=_DEPLOY_USAGE,
            help="render a spec and apply it (or: deploy routing SPEC, deploy bootstrap)")
    _spec_args(p)
    p.add_argument("spec_rest", nargs="?", metavar="SPEC", help=argparse.SUPPRESS)
    p.set_defaults(func=_deploy)

    p = add(sub, "servers", help="list live Manifesto instances in the namespace")
    p.add_argument("--output", "-o", choices=("text", "name", "json"), default="text")
    p.add_argument("--cluster", "-c", help="cluster profile, only to refuse Slurm clusters")
    _kube_args(p)
    p.set_defaults(func=_servers)

    p = add(sub, "stop", help="delete the live objects of an instance (interactive picker without a target)")
    p.add_argument("spec", nargs="?", metavar="SPEC", help="model spec whose instance to stop")
    from manifesto.cli.completion import INSTANCES

    p.add_argument("--instance", help="live instance ID (see `manifesto servers`)").complete = INSTANCES
    p.add_argument("--now", action="store_true", help="force-delete: --grace-period=0 --force")
    p.add_argument("--cluster", "-c", help="cluster profile: a path or catalog name")
    p.add_argument("--user", help="user for the instance identity (default: $USER)")
    p.add_argument("--accelerator", help=argparse.SUPPRESS)
    _kube_args(p)
    p.set_defaults(func=_stop)

    p = add(sub, "ready", help="wait until a spec's model pods and routing frontend are ready")
    _spec_args(p, render=False)
    p.add_argument("--timeout", type=seconds_arg, default=3600.0, metavar="SECONDS", help="give up after this long")
    p.add_argument("--interval", type=seconds_arg, default=5.0, help=argparse.SUPPRESS)
    p.set_defaults(func=_ready)


# -- shared edges -----------------------------------------------------------------------

def _settings():
    from manifesto.cli import context

    return context.settings()


def _kube(env, namespace, kube_context):
    from manifesto.ops.kubectl import Kube, settings_from_env

    return Kube(namespace=namespace, context=kube_context, **settings_from_env(env))


def _refuse_slurm_cluster(cluster, command: str) -> None:
    from manifesto.errors import OpsError

    if cluster.platform == "slurm":
        raise OpsError(f"cluster '{cluster.name}' is a Slurm cluster; `manifesto {command}` is Kubernetes-only, "
                       "use `manifesto slurm ...` instead")


def _refuse_slurm_if_named(args, env, command: str) -> None:
    """Without a spec only an explicitly named cluster (flag or MANIFESTO_CLUSTER) is checked."""
    name = getattr(args, "cluster", None) or env.get("MANIFESTO_CLUSTER")
    if name:
        from manifesto.cluster import load_cluster

        _refuse_slurm_cluster(load_cluster(name), command)


def _plan(args, env, command: str):
    """(plan, spec, cluster) of a Kubernetes cluster; Slurm clusters are refused."""
    from manifesto.cli import context
    from manifesto.cluster import load_cluster
    from manifesto.pipeline import plan_for
    from manifesto.spec import load_spec

    cluster = load_cluster(context.pick_cluster(args.cluster, env, args.context))
    _refuse_slurm_cluster(cluster, command)
    spec = load_spec(args.spec, cluster)
    plan, _ = plan_for(spec, cluster, context.options(args, env))
    return plan, spec, cluster


def _namespace(args, env) -> str:
    from manifesto.cli import context

    return context.pick_namespace(args.namespace, env, args.context)


# -- file -------------------------------------------------------------------------------

def _file_target(args, env) -> str:
    return args.output or env.get("MANIFESTO_RENDER_OUT") or "/tmp/manifesto.yaml"


def _file_namespace(args, env, path: str) -> str:
    """--namespace, else the one namespace the file's objects name, else the default pick."""
    import re
    from pathlib import Path

    if args.namespace:
        return args.namespace
    try:
        found = set(re.findall(r"(?m)^  namespace: *['\"]?([A-Za-z0-9.-]+)", Path(path).read_text(encoding="utf-8")))
    except OSError:
        found = set()
    return found.pop() if len(found) == 1 else _namespace(args, env)


def _file_diff(args) -> int:
    from manifesto.ops.deploy import file_diff

    env = _settings()
    _refuse_slurm_if_named(args, env, "file diff")
    return file_diff(_kube(env, args.namespace, args.context), _file_target(args, env))


def _file_apply(args) -> int:
    from manifesto.ops.deploy import file_apply, manifest_file

    env = _settings()
    _refuse_slurm_if_named(args, env, "file apply")
    path = manifest_file(_file_target(args, env))
    file_apply(_kube(env, args.namespace, args.context), path, env,
               secret_namespace=_file_namespace(args, env, path))
    return 0


# -- deploy -----------------------------------------------------------------------------

def _deploy(args) -> int:
    from manifesto.errors import OpsError

    env = _settings()
    if args.spec == "bootstrap":
        if args.spec_rest:
            raise OpsError("deploy bootstrap takes no SPEC; pass --cluster and --namespace")
        return _deploy_bootstrap(args, env)
    if args.spec == "routing":
        if not args.spec_rest:
            raise OpsError("deploy routing needs a SPEC: manifesto deploy routing SPEC")
        args.spec = args.spec_rest
        return _deploy_routing(args, env)
    if args.spec_rest:
        raise OpsError(f"unexpected argument '{args.spec_rest}'; deploy takes one SPEC")
    from manifesto.cli import context
    from manifesto.cluster import load_cluster

    if load_cluster(context.pick_cluster(args.cluster, env, args.context)).platform == "slurm":
        from manifesto.cli.slurm_cmds import submit

        args.test_only = False  # on Slurm, deploying is submitting the batch script
        return submit(args)
    from manifesto.ops.deploy import deploy
    from manifesto.render.k8s import objects

    plan, _, _ = _plan(args, env, "deploy")
    deploy(_kube(env, plan.namespace, args.context), plan, objects(plan), env)
    return 0


def _deploy_routing(args, env) -> int:
    from manifesto.errors import OpsError
    from manifesto.ops.deploy import deploy_routing
    from manifesto.render.k8s import routing_only

    plan, _, _ = _plan(args, env, "deploy routing")
    if plan.routing is None:
        raise OpsError(f"{args.spec} has routing disabled; there is no routing layer to deploy")
    deploy_routing(_kube(env, plan.namespace, args.context), plan, routing_only(plan))
    return 0


def _deploy_bootstrap(args, env) -> int:
    import sys

    from manifesto.cli import context
    from manifesto.cluster import load_cluster
    from manifesto.ops.deploy import apply_objects
    from manifesto.render.k8s.bootstrap import bootstrap_objects

    cluster = load_cluster(context.pick_cluster(args.cluster, env, args.context))
    _refuse_slurm_cluster(cluster, "deploy bootstrap")
    namespace = _namespace(args, env)
    objs = bootstrap_objects(cluster.profile, namespace)
    if not objs:
        print(f"manifesto: cluster '{cluster.name}' declares no namespace prerequisites", file=sys.stderr)
        return 0
    apply_objects(_kube(env, namespace, args.context), objs)
    return 0


# -- servers / stop / ready -------------------------------------------------------------

def _servers(args) -> int:
    from manifesto.ops.discovery import discover, group_by_instance
    from manifesto.ops.lifecycle import print_servers

    env = _settings()
    _refuse_slurm_if_named(args, env, "servers")
    namespace = _namespace(args, env)
    print_servers(group_by_instance(discover(_kube(env, namespace, args.context))), args.output, namespace)
    return 0


def _stop(args) -> int:
    import shutil
    import sys

    from manifesto.errors import OpsError
    from manifesto.ops.lifecycle import pick, stop

    env = _settings()
    if args.spec and args.instance:
        raise OpsError("pass either SPEC or --instance, not both")
    if args.spec:
        plan, _, _ = _plan(args, env, "stop")
        return stop(_kube(env, plan.namespace, args.context), plan.instance, now=args.now)
    _refuse_slurm_if_named(args, env, "stop")
    kube = _kube(env, _namespace(args, env), args.context)
    if args.instance:
        return stop(kube, args.instance, now=args.now)
    from manifesto.ops.discovery import discover, group_by_instance

    instances = list(group_by_instance(discover(kube)))
    if not instances:
        print(f"manifesto: no Manifesto servers in namespace {kube.namespace}", file=sys.stderr)
        return 0
    choice = pick(instances, fzf=shutil.which("fzf"))
    if choice is None:
        print("manifesto: nothing selected", file=sys.stderr)
        return 1
    return stop(kube, choice, now=args.now)


def _ready(args) -> int:
    from manifesto.ops.lifecycle import wait_ready

    env = _settings()
    plan, _, _ = _plan(args, env, "ready")
    wait_ready(_kube(env, plan.namespace, args.context), plan, args.timeout, args.interval)
    return 0
