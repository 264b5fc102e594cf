"""Kubernetes workflow commands: file diff/apply, deploy, servers, stop, ready.

argparse only at registration; the handlers import ``manifesto.ops`` lazily.
"""

from __future__ import annotations

import argparse

from manifesto.cli.common import (artifact_for_args, info, kube, kube_args, load_cluster_for, pick_namespace, plan_for_args,
                                  refuse_slurm_cluster, refuse_slurm_if_named, settings, slurm_submit, spec_args,
                                  target_args)
from manifesto.cli.hints import DEPLOYMENTS, FILES, INSTANCES, MODELS
from manifesto.cli.target_cmds import target_command
from manifesto.cli.flags import add_output, file_arg
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]

_DEPLOY_USAGE = ("manifesto deploy [manifest] SPEC [options]\n"
                 "       manifesto deploy ADDR|out/deploy/NAME.yaml [--build] [--dry-run] [--take-over] [--context C]\n"
                 "       manifesto deploy routing SPEC [options]\n"
                 "       manifesto deploy bootstrap [--cluster C] [--namespace N]")


def register(sub, add) -> None:
    from manifesto.cli.flags import seconds_arg

    files = add(sub, "file", help=SUMMARIES["file"])
    fsub = files.add_subparsers(dest="action", metavar="ACTION")
    fsub.required = True
    for name, func, what in (("diff", _file_diff, "kubectl diff a rendered file (exit 1 when it differs)"),
                             ("apply", _file_apply, "ensure hf-secret, then kubectl apply a rendered file as-is"),
                             ("delete", _file_delete, "kubectl delete the objects of a rendered file (hf-secret "
                              "stays)")):
        p = add(fsub, name, help=what)
        p.add_argument("file", nargs="?", metavar="FILE", type=file_arg,
                       help="the rendered file (default: MANIFESTO_RENDER_OUT or /tmp/manifesto.yaml)").complete = FILES
        p.add_argument("--filename", "-f", metavar="FILE", type=file_arg, help="the rendered file, as with kubectl -f"
                       ).complete = FILES
        p.add_argument("--output", "-o", dest="old_output", metavar="FILE", type=file_arg, help=argparse.SUPPRESS)
        p.add_argument("--cluster", "-c", help="cluster profile, only to refuse Slurm clusters")
        p.add_argument("--user", help="refuse a file whose objects another user's render owns (their "
                       "llm-d.ai/owner label)")
        if name == "delete":
            p.add_argument("--now", action="store_true", help="force-delete: --grace-period=0 --force")
        kube_args(p)
        p.set_defaults(func=func)

    p = add(sub, "deploy", usage=_DEPLOY_USAGE,
            help=SUMMARIES["deploy"])
    spec_args(p)
    p.add_argument("spec_rest", nargs="?", metavar="SPEC", help=argparse.SUPPRESS)
    target_args(p)
    p.add_argument("--take-over", action="store_true", help="modify live objects of the same names that another "
                   "instance or user owns (default: refuse, naming the owner)")
    p.set_defaults(func=_deploy)

    p = add(sub, "servers", help=SUMMARIES["servers"])
    p.add_argument("spec", nargs="?", metavar="ADDR", help="a deployment target: report in-sync, drifted or missing"
                   ).complete = DEPLOYMENTS
    p.add_argument("--instance", help="only this live instance ID, with its objects").complete = INSTANCES
    add_output(p, table=True)
    p.add_argument("--cluster", "-c", help="cluster profile, only to refuse Slurm clusters")
    kube_args(p)
    p.set_defaults(func=_servers)

    p = add(sub, "stop", help=SUMMARIES["stop"])
    p.add_argument("spec", nargs="?", metavar="SPEC", help="model spec (or deployment target address) whose "
                   "instance to stop").complete = MODELS
    p.add_argument("--instance", help="live instance ID (see `manifesto servers`)").complete = INSTANCES
    p.add_argument("--now", action="store_true", help="force-delete: --grace-period=0 --force")
    p.add_argument("--take-over", action="store_true", help="stop an instance whose objects another user owns "
                   "(default: refuse, naming the owner)")
    p.add_argument("--cluster", "-c", help="cluster profile: a path or catalog name")
    p.add_argument("--user", help="user for the instance identity and the owner check (default: $USER)")
    p.add_argument("--accelerator", help=argparse.SUPPRESS)
    kube_args(p)
    add_output(p)
    p.set_defaults(func=_stop)

    p = add(sub, "ready", help=SUMMARIES["ready"])
    spec_args(p, render=False)
    p.add_argument("--timeout", type=seconds_arg, default=3600.0, metavar="SECONDS", help="give up after this long")
    p.add_argument("--gateway-timeout", type=seconds_arg, default=120.0, metavar="SECONDS",
                   help="once the model pods are ready, how long the routing frontend (EPP, Gateway) may take "
                   "to follow (default: 120)")
    p.add_argument("--interval", type=seconds_arg, default=5.0, help=argparse.SUPPRESS)
    target_args(p, dry_run=False)
    p.set_defaults(func=_ready)


# -- file -------------------------------------------------------------------------------

def _file_target(args, env) -> str:
    """FILE, -f, the deprecated -o (with a warning), MANIFESTO_RENDER_OUT, /tmp/manifesto.yaml."""
    from manifesto.errors import InputError

    given = [f for f in (args.file, args.filename, args.old_output) if f]
    if len(set(given)) > 1:
        raise InputError(f"file {args.action}: name the rendered file once (FILE or -f), not {' and '.join(given)}")
    if args.old_output and not (args.file or args.filename):
        import sys

        print(f"manifesto: warning: `file {args.action} -o FILE` is deprecated (-o is the output format "
              f"elsewhere); use `manifesto file {args.action} FILE` or -f FILE", file=sys.stderr)
    return (given[0] if given else None) or env.get("MANIFESTO_RENDER_OUT") or "/tmp/manifesto.yaml"


def _file_namespace(args, env, path: str) -> str:
    """--namespace, else the one namespace the file's objects name (read as kubectl reads the
    file: JSON or YAML in any layout), else the default pick."""
    from manifesto.edge.files import read_lenient
    from manifesto.ops.deploy import file_namespaces

    text = read_lenient(path) or ""  # kubectl judges the bytes; this only looks for a namespace
    found = file_namespaces(text, path)
    if args.namespace:
        if len(found) == 1 and args.namespace not in found:
            from manifesto.errors import OpsError

            raise OpsError(f"--namespace {args.namespace}: the objects in {path} name namespace {found.pop()}; "
                           "kubectl would apply them there and put hf-secret in another namespace. Render the "
                           "file for that namespace (or deploy a deployment target) instead")
        return args.namespace
    return found.pop() if len(found) == 1 else pick_namespace(args, env)


def _file_checked(args, env) -> str:
    """The rendered file of ``file ACTION``: a Kubernetes manifest, rendered for --user if given."""
    from manifesto.ops.deploy import check_file_owner, manifest_file

    refuse_slurm_if_named(args, env, f"file {args.action}")
    path = manifest_file(_file_target(args, env))
    if args.user is not None:
        check_file_owner(path, args.user)
    return path


def _file_diff(args) -> int:
    from manifesto.ops.deploy import file_diff

    env = settings(args)
    return file_diff(kube(args, env, args.namespace, args.context), _file_checked(args, env))


def _file_apply(args) -> int:
    from manifesto.ops.deploy import file_apply

    env = settings(args)
    path = _file_checked(args, env)
    file_apply(kube(args, env, args.namespace, args.context), path, env,
               secret_namespace=_file_namespace(args, env, path))
    return 0


def _file_delete(args) -> int:
    from manifesto.ops.deploy import file_delete

    env = settings(args)
    path = _file_checked(args, env)
    file_delete(kube(args, env, args.namespace, args.context), path, now=args.now)
    return 0


# -- deploy -----------------------------------------------------------------------------

def _deploy(args) -> int:
    from manifesto.errors import OpsError

    env = settings(args)
    if args.spec == "bootstrap":
        if args.spec_rest:
            raise OpsError("deploy bootstrap takes no SPEC; pass --cluster and --namespace")
        return _deploy_bootstrap(args, env)
    if args.spec == "manifest":  # the reference's spelling of `deploy SPEC`
        if not args.spec_rest:
            raise OpsError("deploy manifest needs a SPEC: manifesto deploy manifest SPEC")
        args.spec, args.spec_rest = args.spec_rest, None
    elif args.spec == "routing":
        if not args.spec_rest:
            raise OpsError("deploy routing needs a SPEC: manifesto deploy routing SPEC")
        args.spec = args.spec_rest
        return _deploy_routing(args, env)
    if args.spec_rest:
        raise OpsError(f"unexpected argument '{args.spec_rest}'; deploy takes one SPEC")
    done = target_command(args, "deploy")
    if done is not None:
        return done
    cluster = load_cluster_for(args, env)
    if cluster.platform == "slurm":
        args.test_only = False  # on Slurm, deploying is submitting the batch script
        return slurm_submit(args, cluster)
    from manifesto.ops.deploy import deploy

    plan, made, _ = artifact_for_args(args, env, "deploy", cluster)
    deploy(kube(args, env, plan.namespace, args.context), plan, made.objects, env, take_over=args.take_over)
    return 0


def _deploy_routing(args, env) -> int:
    from manifesto.errors import OpsError
    from manifesto.ops.deploy import deploy_routing

    plan, made, _ = artifact_for_args(args, env, "deploy routing", layer="routing")
    if made is None:
        raise OpsError(f"{args.spec} has routing disabled; there is no routing layer to deploy")
    deploy_routing(kube(args, env, plan.namespace, args.context), plan, made.objects)
    return 0


def _deploy_bootstrap(args, env) -> int:
    from manifesto.ops.deploy import apply_objects
    from manifesto.render.k8s.bootstrap import bootstrap_objects

    cluster = load_cluster_for(args, env)
    refuse_slurm_cluster(cluster, "deploy bootstrap")
    namespace = pick_namespace(args, env)
    objs = bootstrap_objects(cluster.profile, namespace)
    if not objs:
        info(args, f"manifesto: cluster '{cluster.name}' declares no namespace prerequisites")
        return 0
    apply_objects(kube(args, env, namespace, args.context), objs)
    return 0


# -- servers / stop / ready -------------------------------------------------------------

def _servers(args) -> int:
    from manifesto.ops.discovery import discover, group_by_instance
    from manifesto.ops.lifecycle import print_servers

    done = target_command(args, "servers")
    if done is not None:
        return done
    env = settings(args)
    refuse_slurm_if_named(args, env, "servers")
    namespace = pick_namespace(args, env)
    client = kube(args, env, namespace, args.context)
    print_servers(group_by_instance(discover(client, args.instance)), args.output, namespace, args.instance)
    return 0


def _stop(args) -> int:
    import shutil
    import sys

    import manifesto.cli.settings as cli_settings
    from manifesto.errors import OpsError
    from manifesto.ops.lifecycle import pick, stop
    from manifesto.resolve.identity import instance_labels
    from manifesto.resolve.names import OWNER_LABEL

    def owner_label(user: str) -> str:  # the label deploy puts on the instance's objects
        return instance_labels("", user)[OWNER_LABEL]

    env = settings(args)
    if args.spec and args.instance:
        raise OpsError("pass either SPEC or --instance, not both")
    done = target_command(args, "stop")
    if done is not None:
        return done
    if args.spec:
        plan, _, _ = plan_for_args(args, env, "stop")
        return stop(kube(args, env, plan.namespace, args.context), plan.instance, owner=owner_label(plan.user),
                    take_over=args.take_over, now=args.now, output=args.output)
    refuse_slurm_if_named(args, env, "stop")
    client = kube(args, env, pick_namespace(args, env), args.context)
    owner = owner_label(cli_settings.current_user(args.user, env))
    if args.instance:
        return stop(client, args.instance, owner=owner, take_over=args.take_over, now=args.now, output=args.output)
    from manifesto.ops.discovery import discover, group_by_instance

    if not sys.stdin.isatty():
        raise OpsError("stop without SPEC or --instance opens a picker, which needs a terminal; pass "
                       "--instance ID (`manifesto servers -o name` lists them) or SPEC")
    instances = list(group_by_instance(discover(client)))
    if not instances:
        info(args, f"manifesto: no Manifesto servers in namespace {client.namespace}")
        return 0
    choice = pick(instances, fzf=shutil.which("fzf"))
    if choice is None:
        info(args, "manifesto: nothing selected")
        return 1
    return stop(client, choice, owner=owner, take_over=args.take_over, now=args.now, output=args.output)


def _ready(args) -> int:
    from manifesto.ops.lifecycle import wait_ready

    done = target_command(args, "ready")
    if done is not None:
        return done
    env = settings(args)
    plan, made, _ = artifact_for_args(args, env, "ready")
    wait_ready(kube(args, env, plan.namespace, args.context), plan, args.timeout, args.interval,
               objects=made.objects, frontend_timeout=args.gateway_timeout)
    return 0
