"""`manifesto test e2e SPEC`: the complete test lifecycle in a fresh namespace.

argparse only at registration; the handler imports ``manifesto.ops`` lazily.
"""

from __future__ import annotations

import argparse

from manifesto.cli.common import (artifact_loaded, kube, load_cluster_for, refuse_slurm_cluster, resolve_loaded,
                                  search_of, settings, spec_args)
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]


def register(sub, add) -> None:
    from manifesto.cli.hints import CATALOG
    from manifesto.cli.flags import positive_seconds_arg, seconds_arg

    test = add(sub, "test", help=SUMMARIES["test"])
    tsub = test.add_subparsers(dest="action", metavar="ACTION")
    tsub.required = True
    p = add(tsub, "e2e", help="deploy a spec into a fresh namespace, send /v1/models and /v1/completions "
                              "from an unprivileged Job, then delete the namespace")
    spec_args(p, render=False,
              context_help="kube context passed to kubectl and used to pick a cluster profile",
              namespace_help="namespace to create; it must not exist (default: manifesto-e2e-RELEASE-RANDOM)")
    p.add_argument("--routing-profile", help="EPP routing profile name or path (default: MANIFESTO_ROUTING_PROFILE)"
                   ).complete = CATALOG["routing"]
    p.add_argument("--vllm-env", help="absolute path of an existing vllm-envs worktree to test; keeps the "
                   "cluster profile's storage so the worktree stays visible")
    p.add_argument("--keep-namespace", action="store_true", help="keep the namespace and all test resources")
    p.add_argument("--timeout", type=positive_seconds_arg, default=600.0, metavar="SECONDS",
                   help="deadline of the e2e Job from its creation, scheduling and image pull included "
                   "(default: 600)")
    p.add_argument("--ready-timeout", type=seconds_arg, default=3600.0, metavar="SECONDS",
                   help="how long the model may take to become ready (default: 3600)")
    p.add_argument("--gateway-timeout", type=seconds_arg, default=120.0, metavar="SECONDS",
                   help="once the model pods are ready, how long the routing frontend may take to follow "
                   "(default: 120)")
    p.add_argument("--image", help="Python image of the test Job, e.g. a mirror (default: the catalog's test.e2e image)")
    p.add_argument("--interval", type=seconds_arg, default=5.0, help=argparse.SUPPRESS)
    p.set_defaults(func=_e2e)


def _options(args, env, namespace: str):
    import manifesto.cli.settings as cli_settings

    return cli_settings.options(argparse.Namespace(**{**vars(args), "namespace": namespace}), env)


def _plan(args, env, namespace: str):
    return resolve_loaded(args._spec, args._cluster, _options(args, env, namespace), search_of(args))


def _e2e(args) -> int:
    import secrets

    from manifesto.errors import OpsError
    from manifesto.ops.e2e import Waits, check_namespace_name, default_namespace, run_e2e, swap_storage
    from manifesto.spec import load_spec

    env = settings(args)
    if not env.get("HF_TOKEN", "").strip():
        raise OpsError("HF_TOKEN is not set; set it in the environment or .env (test e2e creates hf-secret "
                       "in its namespace)")
    cluster = load_cluster_for(args, env)
    refuse_slurm_cluster(cluster, "test e2e")
    args._cluster, args._spec = cluster, load_spec(args.spec, cluster, search=search_of(args))
    if args.namespace:
        namespace = check_namespace_name(args.namespace)
    else:
        release = _plan(args, env, "manifesto-e2e").release
        namespace = default_namespace(release, secrets.token_hex(3))
    plan, made = artifact_loaded(args._spec, args._cluster, _options(args, env, namespace), search_of(args))
    objs = made.objects
    if not any(r.vllm_env for r in plan.roles):
        from manifesto.render.k8s.sidecars import exporter_containers

        objs = swap_storage(objs, frozenset(c["name"] for c in exporter_containers(plan)))
    image = args.image or plan.images.get("test.e2e")
    if not image:
        raise OpsError("no test Job image: pass --image or set images.test.e2e in the image catalog")
    waits = Waits(job=args.timeout, ready=args.ready_timeout, interval=args.interval, gateway=args.gateway_timeout)
    return run_e2e(kube(args, env, namespace, args.context), plan, objs, env, image=image, waits=waits,
                   keep_namespace=args.keep_namespace)
