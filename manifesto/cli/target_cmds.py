"""Lifecycle of deployment targets: ``diff ADDR``, ``status ADDR``, and the ADDR forms of
``deploy``, ``stop``, ``ready``, ``servers`` and ``slurm submit``.

Every command uses exactly the bytes in ``out/deploy/<name>``, refuses a stale artifact
(``--build`` rebuilds it first) and the wrong kube context or Slurm host.
"""

from __future__ import annotations

import sys

from manifesto.cli.common import kube, settings, target_args
from manifesto.outputs import add_output

__all__ = ["register", "deploy", "diff", "status", "stop", "ready", "servers", "submit"]

_ADDR = ("a deployment target address (//:NAME, `kind: deployment` in BUILD.yaml) or its artifact "
         "out/deploy/NAME.yaml")


def register(sub, add) -> None:
    p = add(sub, "diff", help="kubectl diff a deployment target's out/ artifact against the cluster (exit 1: "
            "differs); with --base REV, a reviewer's diff of out/ at a git revision against the working tree")
    p.add_argument("spec", metavar="ADDR", nargs="*", help=_ADDR + "; with --base, any build addresses (default: all)")
    p.add_argument("--context", help="kube context (must be the target's)")
    p.add_argument("--base", metavar="REV", help="compare the artifacts in out/ at git revision REV with the "
                   "working tree: per role GPUs, pods, parallelism, image, vLLM args and picker plugins, and whether "
                   "each change applies in place, rolls pods or recreates them")
    p.add_argument("--fail-on-recreate", action="store_true",
                   help="with --base: exit 3 when a change recreates every pod or job of a deployment")
    add_output(p, formats=("text", "json", "markdown"))
    target_args(p, dry_run=False)
    p.set_defaults(func=diff)
    p = add(sub, "status", help="whether a deployment target's live objects are in-sync, drifted or missing "
            "(exit 1 unless in-sync)")
    p.add_argument("spec", metavar="ADDR", help=_ADDR)
    p.add_argument("--context", help="kube context (must be the target's)")
    add_output(p)
    target_args(p, dry_run=False)
    p.set_defaults(func=status)


# -- shared edges -----------------------------------------------------------------------

_FIXED = ("cluster", "user", "namespace", "accelerator", "vllm_env", "user_root", "log_root", "cache_root",
          "pre_launch", "routing_profile", "idle_timeout", "idle_shutdown", "no_idle_shutdown", "instance")


def _target(args, *, allow_stale: bool = False):
    from manifesto.errors import OpsError
    from manifesto.build_graph.deployments import load_target

    given = [name for name in _FIXED if getattr(args, name, None)]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise OpsError(f"{flag}: {args.spec} is a deployment target, which fixes its cluster, namespace, user and "
                       "render options; change them in BUILD.yaml")
    return load_target(args.spec, build=getattr(args, "build", False), allow_stale=allow_stale)


def _kube_for(art, args):
    """(settings, kubectl builder) for a Kubernetes target, after the context check."""
    from manifesto.cli import settings as cli_settings
    from manifesto.errors import OpsError
    from manifesto.ops.targets import check_context

    if art.platform != "kubernetes":
        raise OpsError(f"{art.address} is a Slurm target ({art.rel}); use `manifesto deploy {art.address}` or "
                       "`manifesto slurm ...`")
    env = settings()
    explicit = getattr(args, "context", None)
    context = check_context(art, explicit, None if explicit else cli_settings.kube_context(None))
    return env, kube(env, art.namespace, context)


def _objects(art):
    from manifesto.ops.targets import instance_of, parse_objects

    objs = parse_objects(art.text)
    return objs, instance_of(objs)


# -- commands ---------------------------------------------------------------------------

def deploy(args) -> int:
    from manifesto.ops.deploy import SECRET, deploy_objects, object_facts

    art = _target(args)
    if art.platform == "slurm":
        return _submit(art, args, test_only=False)
    env, client = _kube_for(art, args)
    objs, instance = _objects(art)
    if args.dry_run:
        secret = client.write("apply", "-f", "-")
        print(f"{secret.show()}  # stdin: Secret {SECRET} from $HF_TOKEN")
        print(f"{client.write('apply', '-f', '-').show()} < {art.rel}")
        print(f"# then: delete leftovers of the other routing frontend of {instance}, if any", file=sys.stderr)
        return 0
    deploy_objects(client, object_facts(objs, instance), objs, env, text=art.text)
    return 0


def diff(args) -> int:
    from manifesto.errors import OpsError
    from manifesto.ops.deploy import file_diff

    if args.base is not None:
        return build_diff(args)
    if len(args.spec) != 1 or args.fail_on_recreate or args.output != "text":
        what = ("--fail-on-recreate" if args.fail_on_recreate else f"--output {args.output}"
                if args.output != "text" else f"{len(args.spec)} addresses")
        raise OpsError(f"diff: {what} without --base; `manifesto diff ADDR` takes exactly one deployment target "
                       "and diffs it against the cluster, `manifesto diff --base REV [ADDR...]` compares builds")
    args.spec = args.spec[0]
    art = _target(args)
    _, client = _kube_for(art, args)
    return file_diff(client, art.path)


def build_diff(args) -> int:
    """``diff --base REV [ADDR...]``: what the change to out/ means for running deployments."""
    import json

    import msgspec

    from manifesto.build_graph import semdiff
    from manifesto.build_graph.api import semantic_diff

    result = semantic_diff(args.base, args.spec)
    if args.output == "json":
        print(json.dumps(msgspec.to_builtins(result), indent=2))
    elif args.output == "markdown":
        sys.stdout.write(semdiff.format_markdown(result))
    else:
        sys.stdout.write(semdiff.format_text(result))
    return 3 if args.fail_on_recreate and result.impact is semdiff.Impact.RECREATE else 0


def status(args) -> int:
    from manifesto.ops.targets import live_objects, object_states, summarize
    from manifesto.outputs import emit

    art = _target(args)
    _, client = _kube_for(art, args)
    objs, instance = _objects(art)
    rows = object_states(objs, live_objects(client, objs, instance))
    overall = summarize(rows)
    data = {"target": art.address, "artifact": art.rel, "namespace": art.namespace, "context": art.context,
            "instance": instance, "status": overall,
            "objects": [{"kind": k, "name": n, "status": s, "detail": d} for k, n, s, d in rows]}

    def text() -> None:
        print(f"{art.address}  {overall}  ({instance} in namespace {art.namespace}, context {art.context}, "
              f"from {art.rel})")
        width = max(len(f"{k}/{n}") for k, n, _, _ in rows)
        for kind, name, state, detail in rows:
            print(f"  {f'{kind}/{name}'.ljust(width)}  {state}{'  ' + detail if detail else ''}")

    emit(getattr(args, "output", "text"), data, text=text,
         names=lambda: [f"{k}/{n}" for k, n, s, _ in rows if s != "in-sync"])
    return 0 if overall == "in-sync" else 1


def servers(args) -> int:
    """``servers ADDR``: the target's status."""
    return status(args)


def stop(args) -> int:
    from manifesto.ops.lifecycle import stop as stop_instance

    art = _target(args, allow_stale=True)  # the bytes in out/ name what was deployed
    _, client = _kube_for(art, args)
    _, instance = _objects(art)
    return stop_instance(client, instance, now=args.now)


def ready(args) -> int:
    from manifesto.ops.lifecycle import wait_ready
    from manifesto.ops.targets import target_plan

    art = _target(args)
    _, client = _kube_for(art, args)
    wait_ready(client, target_plan(art), args.timeout, args.interval)
    return 0


def submit(args) -> int:
    """``slurm submit ADDR``."""
    return _submit(_target(args), args, test_only=args.test_only)


def _submit(art, args, *, test_only: bool) -> int:
    import shlex
    import socket

    from manifesto.cluster import load_cluster
    from manifesto.errors import OpsError
    from manifesto.ops import slurm
    from manifesto.ops.targets import check_slurm_host

    if art.platform != "slurm":
        raise OpsError(f"{art.address} is a Kubernetes target; deploy it with `manifesto deploy {art.address}`")
    profile = load_cluster(art.cluster_path).profile.slurm
    ssh_host = profile.ssh_host if profile else None
    check_slurm_host(art, ssh_host, socket.gethostname())
    call = slurm.submit_call(art.text, ssh_host, test_only)
    if getattr(args, "dry_run", False):
        print(f"{shlex.join(call.command())} < {art.rel}")
        return 0
    proc = slurm.run(call)
    if test_only:
        print((proc.stderr or proc.stdout).strip(), file=sys.stderr)  # sbatch answers on stderr
        return 0
    print(slurm.job_id(proc.stdout))
    return 0
