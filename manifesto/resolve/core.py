"""Build the Plan from a validated spec and cluster profile: ``resolve(spec, cluster, ctx)``.

``ctx`` (:class:`~manifesto.resolve.context.Context`) carries the rest of what is read: the
options, the image catalog, the routing profile, the architecture and the runtime tables.
``resolve`` decides the facts every role shares once (a ``Pair``), then each role's plan.

Pure: no files, environment, clock or subprocess. Errors carry the origin of the field
they are about through the context's ``where`` callbacks (path tuple -> Origin).
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

import msgspec

from manifesto.errors import IncompatiblePairError, ResolveError, did_you_mean, format_path
from manifesto.resolve.expr import evaluate
from manifesto.resolve import features as feats
from manifesto.resolve.accelerator import project_accelerator
from manifesto.resolve.args import DEFAULT_QUIET_ENDPOINTS, to_args
from manifesto.resolve.failures import Where, fail as _fail, raise_all
from manifesto.resolve.identity import instance_labels, instance_name, role_labels, role_selector, user_prefixed
from manifesto.resolve.layout import LayoutInput, plan_layout
from manifesto.resolve.names import COMPUTE_DOMAIN_CLAIM, LWS_GROUP_INDEX_LABEL
from manifesto.resolve.partition import layout_problems
from manifesto.resolve.lws_limits import check_lws_names
from manifesto.resolve.pd_set import check_tp_ratios, plan_pd_set
from manifesto.resolve.budget import plan_budget
from manifesto.resolve.context import Context, Pair
from manifesto.resolve.fit import check_fit, decode_context_parallel, plan_fit
from manifesto.resolve.plan import (
    Accelerator, Claim, ConnectionPoolPlan, EnvVar, IdlePlan, MemoryFit, Mount, Options, Placement, Plan, PodResources,
    RolePlan, RoutingSizingPlan, Size, SlurmPlan, Volume,
)
from manifesto.resolve.routing import EXPERIMENTAL_FLAG, plan_routing
from manifesto.resolve.storage import cache_key_for, cuda_tag, plan_storage

__all__ = ["resolve", "default_resources", "Context"]


def resolve(spec, cluster, ctx: Context) -> Plan:
    """Resolve one (spec, cluster) pair: the validated model spec and cluster profile, and
    everything else the resolution reads (``ctx``: options, image catalog, field positions,
    routing profile, architecture, runtime tables; see :class:`~manifesto.resolve.context.Context`)."""
    options, where = ctx.options, ctx.where
    _check_options(options)
    accel = _accelerator(spec, cluster, options, where)
    instance = instance_name(spec.release, options.user, cluster.naming.user_prefix)
    image = _image(spec, ctx.images, where)
    vllm_table = _vllm_table(ctx.tables, image, options.vllm_env or spec.runtime.vllm_env)
    # Every argument error of the pair at once: each role's vLLM arguments and variables, the
    # cluster's variables, and every endpoint-picker config, each error at its own field.
    errors = _vllm_errors(vllm_table, spec, cluster, ctx) if vllm_table is not None else []
    routing = plan_routing(spec, ctx.epp_config, where)
    if routing is not None and ctx.tables is not None:
        routing = _check_router(spec, cluster, ctx, routing, errors)
    raise_all(errors)
    check_tp_ratios(spec, where)  # before the layouts: a TP the GPUs cannot hold is a lesser problem
    idle = _idle(spec, options)
    pair = Pair(spec=spec, cluster=cluster, ctx=ctx, accel=accel, instance=instance, image=image, routing=routing,
                routed_roles=_routed_roles(spec, routing),
                moe=ctx.architecture.is_moe if ctx.architecture is not None else None)
    roles = tuple(_role(pair, role, i) for i, role in enumerate(spec.roles))
    roles = tuple(_with_fit(pair, r, i) for i, r in enumerate(roles))
    pd_set = plan_pd_set(spec, cluster, roles, instance, where)
    if cluster.platform != "slurm":
        check_lws_names(spec, roles, instance, pd_set, where)
    return Plan(
        instance=instance, release=spec.release, user=options.user, namespace=options.namespace,
        platform=cluster.platform, cluster=cluster.name, topology=spec.topology,
        model_id=spec.model.id, model_label=spec.model.label, revision=spec.model.revision,
        accelerator=accel, placement=_placement(cluster, accel), roles=roles, routing=routing,
        idle=idle, sidecars=_sidecars(spec, cluster), labels=instance_labels(instance, options.user),
        images=_support_images(ctx.images, cluster), stateless=not any(r.storage.volumes for r in roles),
        kueue_queue=cluster.kueue.local_queue if cluster.kueue else None,
        kueue_priority_class=cluster.kueue.priority_class if cluster.kueue else None,
        gateway_class=cluster.gateway.class_name, gateway_service_type=cluster.gateway.service_type,
        openshift_scc=cluster.openshift.scc if cluster.openshift else None,
        shared_claim=_shared_claim(cluster), slurm=_slurm(cluster), routing_sizing=_routing_sizing(cluster),
        budget=plan_budget(roles, accel, whole_nodes=cluster.platform == "slurm"),
        sync_waves=bool(options.argocd_sync_waves),
        pd_set=pd_set,
    )


def _vllm_table(tables, image: str, vllm_env: str | None):
    """The table of the vLLM release ``image`` runs, or None when it cannot be known: a custom
    image, a release without a bundled table, or a vllm-envs worktree (its own build)."""
    from manifesto.resolve.vllm_check import vllm_version

    version = vllm_version(image)
    if tables is None or version is None or vllm_env:
        return None
    return tables.vllm(version)


def router_release(images, cluster) -> str | None:
    """The llm-d-router release the endpoint picker runs; None when the cluster names its own image."""
    if cluster.llm_d.images.epp is not None and "{release}" not in cluster.llm_d.images.epp:
        return None
    return cluster.llm_d.release or images.llm_d.get("release") or "main"


def _check_router(spec, cluster, ctx: Context, routing, errors: list):
    """Routing profiles and inline plugin configs against the pinned router's plugin table: every
    problem of every config is added to ``errors``. Returns ``routing`` with the Alpha plugins of
    the config the picker loads, for which the renderers pass ``--allow-experimental-plugins``."""
    from manifesto.resolve.router_check import epp_errors, experimental_plugins

    release = router_release(ctx.images, cluster)
    # main moves with every commit: its table is a dated snapshot, not what the image runs.
    table = ctx.tables.router(release) if release and release != "main" else None
    if table is None:
        return routing
    where = ctx.where
    if ctx.epp_config is not None:
        errors += epp_errors(table, ctx.epp_config[2], ctx.epp_where, ())
    elif spec.routing is not None and spec.routing.plugin_configs is not None:
        for name, config in sorted(spec.routing.plugin_configs.items()):
            errors += epp_errors(table, config, where, ("routing", "plugin_configs", name))
    elif spec.routing is not None and spec.routing.plugin_config is not None:
        errors += epp_errors(table, spec.routing.plugin_config, where, ("routing", "plugin_config"))
    alpha = experimental_plugins(table, json.loads(routing.config_data))
    if alpha and any(f.name == EXPERIMENTAL_FLAG.lstrip("-") for f in table.epp_flags):
        return msgspec.structs.replace(routing, experimental_plugins=alpha)
    return routing


def _vllm_errors(table, spec, cluster, ctx: Context) -> list:
    """Every vLLM argument and ``VLLM_*`` variable problem of the spec's roles and the cluster's
    fabric profiles, against the release the image runs."""
    from manifesto.resolve.vllm_check import env_errors

    where, cluster_where = ctx.where, ctx.cluster_where
    errors = env_errors(table, cluster.fabric.default_env, cluster_where, ("fabric", "default_env"))
    for name, profile in cluster.fabric.profiles.items():
        errors += env_errors(table, profile.env, cluster_where, ("fabric", "profiles", name, "env"))
        errors += env_errors(table, profile.computed_env, cluster_where, ("fabric", "profiles", name, "computed_env"))
    for i, role in enumerate(spec.roles):
        base = ("roles", i)
        errors += _role_vllm_errors(table, spec, role, _computed(spec, role, where, base), where, base)
    return errors


def _check_options(options: Options) -> None:
    """User and namespace reach paths, labels and object namespaces; the CLI checks them where it
    reads them, this covers the Python API and builds."""
    from manifesto.util import rules
    from manifesto.errors import show_value

    for flag, value, check in (("--user", options.user, rules.path_segment),
                               ("--namespace", options.namespace, rules.dns_label)):
        problem = check(value)
        if problem:
            raise ResolveError(f"{flag} {show_value(value)} {problem}")


def _accelerator(spec, cluster, options: Options, where: Where) -> Accelerator:
    profiles = cluster.accelerators.profiles
    name = options.accelerator or spec.accelerator or cluster.accelerators.default
    if name not in profiles:
        # No did-you-mean: a near name is a different GPU (b200 vs h200), not a typo to fix.
        raise _fail(f"'{name}' is not offered by cluster '{cluster.name}'; it offers: {', '.join(sorted(profiles))}",
                    where, ("accelerator",), IncompatiblePairError,
                    flag="--accelerator" if options.accelerator else None)
    acc = project_accelerator(cluster, name)
    if spec.cache.gpu_arch:
        acc = msgspec.structs.replace(acc, gpu_arch=spec.cache.gpu_arch)
    return acc


def _image(spec, images, where: Where) -> str:
    if spec.model.image:
        return spec.model.image
    ref = spec.model.image_ref or "vllm.standard"
    group, _, key = ref.partition(".")
    table = getattr(images, group, None) if group in ("vllm", "llm_d", "sidecars", "test") else None
    if not isinstance(table, dict) or key not in table:
        known = [f"vllm.{k}" for k in images.vllm]
        raise _fail(f"image_ref '{ref}' is not in the image catalog{did_you_mean(ref, known)}; "
                    f"known: {', '.join(known)}", where, ("model", "image_ref"))
    return table[key]


def _sidecars(spec, cluster) -> tuple[str, ...]:
    """The spec's monitoring sidecars, else the platform default: both exporters on Kubernetes,
    dcgm-exporter on OpenShift (node-exporter's hostPath volumes break the restricted SCC),
    none on Slurm (a batch job has no pod to put them in)."""
    from manifesto.schema.checks import SIDECARS

    chosen = SIDECARS if spec.runtime.sidecars is None else tuple(spec.runtime.sidecars)
    if spec.runtime.sidecars is None and cluster.platform == "slurm":
        return ()
    if cluster.platform == "openshift":
        return tuple(s for s in chosen if s != "node-exporter")
    return chosen


def _routed_roles(spec, routing) -> frozenset[str]:
    if routing is None:
        return frozenset()
    if routing.kind == "pd":
        return frozenset(r.name for r in spec.roles)
    return frozenset({routing.target_role})


def _idle(spec, options: Options) -> IdlePlan:
    cfg = spec.runtime.idle_shutdown
    enabled = cfg.enabled if cfg else True
    minutes = cfg.timeout_minutes if cfg else 45
    if options.idle_shutdown is not None:
        enabled = options.idle_shutdown
    if options.idle_timeout_minutes is not None:
        minutes = options.idle_timeout_minutes
    explicit = enabled and (cfg is not None or options.idle_timeout_minutes is not None)
    flag = None
    if explicit and not (cfg is not None and cfg.enabled):  # the spec alone would not ask for it
        if options.idle_timeout_minutes is not None:
            flag = f"--idle-timeout {options.idle_timeout_minutes}m"
        elif options.idle_shutdown:
            flag = "--idle-shutdown"
    return IdlePlan(enabled=enabled, timeout_minutes=minutes, explicit=explicit, flag=flag)


def default_resources(gpus: int) -> tuple[str, str]:
    """Built-in CPU and memory requests for a pod with ``gpus`` GPUs."""
    return str(6 + 2 * gpus), f"{max(64 * gpus, 128)}Gi"


def _arg_path(spec, index: int, flag: str) -> tuple | None:
    """The spec field that sets role ``index``'s ``--flag`` (the layer that wins), or None."""
    from manifesto.resolve.args import flag_name

    own = spec.roles[index]
    computed = getattr(own, "computed", None)
    layers = [(("vllm",), spec.vllm), (("roles", index, "vllm"), own.vllm),
              (("roles", index, "computed", "vllm"), computed.vllm if computed is not None else {})]
    found = None
    for base, mapping in layers:
        for key in mapping or {}:
            if flag_name(key) == flag:
                found = base + (key,)
    return found


def _max_len_path(spec, index: int) -> tuple | None:
    """The spec field that sets role ``index``'s --max-model-len (the layer that wins), or None."""
    return _arg_path(spec, index, "max-model-len")


def _with_fit(pair: Pair, role: RolePlan, index: int) -> RolePlan:
    spec, accel = pair.spec, pair.accel
    if not spec.fit.check:
        return msgspec.structs.replace(role, fit=MemoryFit(status="unknown", note="the spec turns the check off (fit.check: false)"))
    arch, lay = pair.ctx.architecture, role.layout
    dcp = decode_context_parallel(role.args)
    problems = layout_problems(arch, tp=lay.tp, dp=lay.dp, ep=lay.ep) if arch is not None else []
    path = ("roles", index, "parallelism")
    if not problems and dcp > 1 and arch is not None:  # the layout loads; decode context parallelism may not
        problems = layout_problems(arch, tp=lay.tp, dp=lay.dp, ep=lay.ep, dcp=dcp)
        path = _arg_path(spec, index, "decode-context-parallel-size") or path
    if problems:  # vLLM would stop loading the weights: the layout cannot run this model
        raise _fail(f"role '{role.name}': vLLM 0.33.0 cannot split {spec.model.id} as tp={lay.tp}"
                    + (f" dp={lay.dp}" if lay.dp > 1 else "") + f" ep={'on' if lay.ep else 'off'}"
                    + (f" dcp={dcp}" if dcp > 1 else "") + ": "
                    + "; ".join(problems) + f". Facts from {arch.source}", pair.where, path,
                    IncompatiblePairError)
    fit = plan_fit(pair.ctx.architecture, role.layout, role.args, accel.memory, note=pair.ctx.architecture_note,
                   memory_source=accel.memory_source, family=accel.gpu_arch or accel.name)
    stated = accel.memory_source.startswith("accelerators.profiles.")
    origin = pair.cluster_where(("accelerators", "profiles", accel.name, "memory")) if stated else None
    memory_at = str(origin) if origin else ""
    check_fit(fit, role.name, accel.name, spec.fit.short_kv_cache, pair.where, ("roles", index),
              max_len_path=_max_len_path(spec, index), memory_at=memory_at)
    return msgspec.structs.replace(role, fit=fit)


def _dp_launch(layout, moe: bool | None):
    """vLLM 0.33.0 refuses external data parallelism (--data-parallel-rank, external-lb,
    multi-port) for a dense model: "Non-MoE models do not support external data parallel
    mode". Each DP rank of a dense model is therefore an independent server with no DP flags.
    Without an architecture, expert parallelism marks a MoE model; otherwise the ranks start
    as independent servers, which vLLM accepts for either kind."""
    if layout.dp_mode != "external":
        return layout
    if moe is None:
        moe = layout.ep
    if moe:
        return layout
    return msgspec.structs.replace(layout, launch="independent")


def _role(pair: Pair, role, index: int) -> RolePlan:
    """The plan of the spec's role ``index`` (``role``)."""
    spec, cluster, accel, options, routing = pair.spec, pair.cluster, pair.accel, pair.options, pair.routing
    instance, image, where, cluster_where = pair.instance, pair.image, pair.where, pair.cluster_where
    base = ("roles", index)
    routed = role.name in pair.routed_roles
    proxied = routing is not None and routing.kind == "pd" and role.name == routing.target_role
    par = role.parallelism
    try:
        layout = plan_layout(LayoutInput(tp=par.tp, pp=par.pp, dp=par.dp, ep=par.ep, nodes=role.lws.size,
                                         replicas=role.lws.replicas, gpus_per_node=accel.gpus_per_node,
                                         routed=routed, proxied=proxied, rank_groups=cluster.platform != "slurm"))
    except ResolveError as exc:
        raise _fail(exc.message, where, base + ("parallelism",)) from None
    layout = _dp_launch(layout, pair.moe)
    if role.resources.gpus is not None and role.resources.gpus != layout.gpus_per_pod:
        raise _fail(f"resources.gpus = {role.resources.gpus} disagrees with the {layout.gpus_per_pod} GPUs per pod "
                    f"derived from tp x pp x dp / lws.size; remove resources.gpus or fix parallelism",
                    where, base + ("resources", "gpus"))
    if role.workload and cluster.platform == "slurm":
        raise _fail(f"{role.workload} is a Kubernetes controller, which Slurm cluster '{cluster.name}' cannot use "
                    "(each role runs as a batch job); remove workload from the role to render for Slurm: on "
                    "Kubernetes the node count then picks Deployment or LeaderWorkerSet, so one spec serves both "
                    "platforms", where, base + ("workload",))
    kind = _workload_kind(role, layout, where, base)
    features, backends = _features(spec, role, routing, routed, proxied, layout, where, base)
    computed = _computed(spec, role, where, base)  # checked against vllm_table by resolve, with every role
    routing_label = None
    if routed:
        routing_label = "decode" if (routing.kind != "pd" or role.name == routing.target_role) else "prefill"
    values = {
        "user": options.user, "release": spec.release, "instance": instance,
        "gpu_arch": accel.gpu_arch or accel.name, "cuda": cuda_tag(accel.torch_cuda_arch_list),
        "cache_key": cache_key_for(image, spec.cache.key), "role": role.name,
    }
    # Pod defaults are Kubernetes settings; on Slurm only the spec's own (refused) requests remain.
    pod_defaults = cluster.pod_defaults if cluster.platform != "slurm" else None
    ephemeral = role.resources.ephemeral_storage or (pod_defaults and pod_defaults.ephemeral_storage)
    try:
        # Slurm has no pod-local scratch volume: every role uses the configured cache paths.
        storage, cache_env = plan_storage(
            cluster, kind="slurm" if cluster.platform == "slurm" else kind, role=role.name, values=values, ephemeral=ephemeral,
            cleanup=spec.cache.cleanup_on_crash,
            overrides={"log_root": options.log_root, "cache_root": options.cache_root, "user_root": options.user_root},
            multi_port=layout.launch == "multi-port",
        )
    except ResolveError as exc:  # exc.path is a cluster field (paths.log_root) or a flag (--log-root)
        origin = None if exc.path.startswith("--") else cluster_where(tuple(exc.path.split(".")))
        raise ResolveError(exc.message, origin, exc.path) from None
    storage = _extra_volumes(cluster, storage, cluster_where)
    args = _args(spec, role, computed, where, base, _profiling(cluster, role, storage.log_dir, where, base))
    _check_api_server_count(spec, role, computed, layout, where, base)
    vllm_env = options.vllm_env or spec.runtime.vllm_env
    env = _env(pair, role, base, computed, backends, cache_env, vllm_env, layout)
    if vllm_env:
        if cluster.platform != "slurm":  # Slurm checks the path against slurm.binds instead
            _check_vllm_env(vllm_env, storage, where, flag="--vllm-env" if options.vllm_env else None)
    cpu_default, mem_default = default_resources(layout.gpus_per_pod)
    extra = ((cluster.rdma.resource_name, cluster.rdma.value),) if cluster.rdma else ()
    resources = PodResources(
        cpu=role.resources.cpu or cpu_default, memory=role.resources.memory or mem_default,
        gpus=layout.gpus_per_pod, ephemeral_storage=ephemeral,
        shm_size=role.resources.shm_size or (pod_defaults and pod_defaults.shm_size), extra=extra,
    )
    claims = (Claim(COMPUTE_DOMAIN_CLAIM, accel.compute_domain_template),) if accel.compute_domain_template else ()
    label = spec.model.label or spec.model.id.rsplit("/", 1)[-1]
    workload_name = f"{instance}-{role.name}"
    if role.workload_name:  # the user prefix covers a chosen name too, or users would share it
        try:
            workload_name = user_prefixed(role.workload_name, options.user, cluster.naming.user_prefix,
                                          what="workload name", fix="shorten it")
        except ResolveError as exc:
            raise _fail(exc.message, where, base + ("workload_name",)) from None
    return RolePlan(
        name=role.name, workload_name=workload_name, workload_kind=kind,
        layout=layout, image=image, args=args, env=env, resources=resources, storage=storage, claims=claims,
        features=features, backends=backends, fabric_profile=_fabric_profile(cluster, role, where, base),
        pre_launch=tuple(spec.runtime.pre_launch) + tuple(options.pre_launch) + tuple(role.pre_launch),
        labels=role_labels(instance, options.user, role.name, label, routing_label, spec.topology),
        selector=role_selector(instance, role.name), routing_label=routing_label, proxy=proxied,
        same_topology_key=role.lws.same_topology_key, vllm_env=vllm_env,
    )


def _workload_kind(role, layout, where: Where, base: tuple) -> str:
    if role.workload == "deployment":
        if layout.nodes > 1:
            raise _fail(f"a Deployment cannot span {layout.nodes} nodes (lws.size); "
                        "multi-node roles need a LeaderWorkerSet", where, base + ("workload",))
        return "Deployment"
    if role.workload == "leaderworkerset" or layout.nodes > 1:
        return "LeaderWorkerSet"
    return "Deployment"


def _features(spec, role, routing, routed: bool, proxied: bool, layout, where: Where, base: tuple):
    seeds: set[str] = set()
    backends: list[tuple[str, str]] = []
    if routed:
        seeds.add("llm-d")
    if spec.topology == "pd":
        seeds.add("prefill-decode")
    if proxied:
        seeds.add("routing-proxy")
    if layout.dp > 1:
        seeds.add("external-dp" if layout.dp_mode == "external" else "internal-dp")
    if layout.ep:
        seeds.add("expert-parallel")
        backends.append(("all2all", str(role.vllm.get("all2all_backend") or role.vllm.get("all2all-backend") or "deepep")))
    if layout.pp > 1:
        seeds.add("pipeline-parallel")
    if layout.nodes > 1:
        seeds.add("multi-node")
    connector = (role.kv_transfer_config or {}).get("kv_connector")
    if connector:
        seeds.add("kv-connector")
        backends.append(("kv-connector", str(connector)))
    try:
        closed = feats.close(seeds)
    except ResolveError as exc:
        hint = " (prefill/decode roles need kv_transfer_config with kv_connector: NixlConnector)"
        raise _fail(exc.message + hint, where, base) from None
    if "prefill-decode" in closed and connector != "NixlConnector":
        raise _fail(f"prefill/decode needs kv_transfer_config.kv_connector: NixlConnector on every role "
                    f"(found {repr(connector) if isinstance(connector, str) else json.dumps(connector)}); the P/D sidecar speaks NIXLv2", where,
                    base + ("kv_transfer_config",))
    return closed, tuple(sorted(backends))


def _computed(spec, role, where: Where, base: tuple) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"env": {}, "vllm": {}}
    for section in ("env", "vllm"):
        for key, expr in getattr(role.computed, section).items():
            path = base + ("computed", section, key)
            value = evaluate(expr, spec.vars, where(path), format_path(path))
            if section == "vllm":
                _check_computed_flag(key, expr, value, where(path), format_path(path))
            out[section][key] = value
    return out


# vLLM flags that take a fraction; every other computed flag is a count, size or length.
FLOAT_FLAGS = frozenset({"gpu-memory-utilization", "swap-space", "cpu-offload-gb", "scheduler-delay-factor",
                         "kv-offloading-size"})


def _check_computed_flag(key: str, expr, value, origin, path: str) -> None:
    """A computed vLLM argument is a non-negative number, and a whole one unless the flag takes a
    fraction (a JSON sub-key such as ``speculative_config.x`` may be either)."""
    from manifesto.errors import ExpressionError, show_value
    from manifesto.resolve.args import flag_name

    flag = flag_name(key)
    formula = isinstance(expr, str)
    shown = f"the expression {show_value(expr)} gives {value!r}" if formula else f"the value is {value!r}"
    if value < 0:
        raise ExpressionError(f"{shown}, but --{flag} cannot be negative", origin, path)
    if isinstance(value, float) and flag not in FLOAT_FLAGS and "." not in flag:
        hint = "; use // for whole-number division" if formula else ""
        raise ExpressionError(f"{shown}, but --{flag} takes a whole number{hint}", origin, path)


def _role_vllm_errors(table, spec, role, computed, where: Where, base: tuple) -> list:
    """The role's vLLM arguments and variables against the release its image runs."""
    from manifesto.resolve import vllm_check as vc

    present = vc.present_flags(spec.vllm, role.vllm, computed["vllm"], raw=role.vllm_raw_args)
    return [
        *vc.vllm_mapping_errors(table, spec.vllm, where, ("vllm",), present),
        *vc.vllm_mapping_errors(table, role.vllm, where, base + ("vllm",), present),
        *vc.vllm_mapping_errors(table, computed["vllm"], where, base + ("computed", "vllm"), present),
        *vc.raw_args_errors(table, role.vllm_raw_args, where, base + ("vllm_raw_args",), present),
        *vc.env_errors(table, spec.env, where, ("env",)),
        *vc.env_errors(table, role.env, where, base + ("env",)),
        *vc.env_errors(table, computed["env"], where, base + ("computed", "env")),
    ]


def _api_server_count(spec, role, computed, base: tuple) -> tuple[Any, tuple] | None:
    """The API server count the role's arguments give vLLM, and the field that set it (the
    last writer, as ``_args`` merges them), or None when none does."""
    found = None
    for mapping, path in ((spec.vllm, ("vllm",)), (role.vllm, base + ("vllm",)),
                          (computed["vllm"], base + ("computed", "vllm"))):
        for key, value in mapping.items():
            if key.lstrip("-").replace("-", "_") == "api_server_count":
                found = (value, path + (key,))
    for i, text in enumerate(role.vllm_raw_args):
        words = text.replace("=", " ").split()
        for j, word in enumerate(words):
            if word in ("--api-server-count", "--api_server_count", "-asc"):
                found = (words[j + 1] if j + 1 < len(words) else None, base + ("vllm_raw_args", i))
    return found


def _check_api_server_count(spec, role, computed, layout, where: Where, base: tuple) -> None:
    """vLLM 0.33.0 refuses some API server counts for the launch the layout renders:
    ``entrypoints/launchers/dp_supervisor.py`` (validate_multi_port_external_lb_args) stops a
    multi-port external-LB launch unless --api-server-count is unset or 1, and
    ``entrypoints/cli/serve.py`` stops a --headless pod given a positive count. Refused here,
    at the field that sets it, rather than by every pod at start-up."""
    found = _api_server_count(spec, role, computed, base)
    if found is None:
        return
    value, path = found
    try:
        count = None if value is None or value is False else int(value)
    except (TypeError, ValueError):
        return  # not a number: the vLLM table check reports it
    if count is None:
        return
    if layout.launch == "multi-port" and count != 1:
        raise _fail(f"api_server_count = {count}: this role runs {layout.ranks_per_node} external DP ranks per pod "
                    "under vLLM's DP supervisor (--data-parallel-multi-port-external-lb), which vLLM 0.33.0 "
                    "refuses with any API server count but 1 (entrypoints/launchers/dp_supervisor.py); each "
                    "rank already has its own API server: remove api_server_count", where, path)
    headless = layout.nodes_per_rank > 1 or (layout.launch in ("single", "internal") and layout.nodes > 1)
    if headless and count > 0:
        raise _fail(f"api_server_count = {count}: this role's pods after the first of each engine run with "
                    "--headless, which vLLM 0.33.0 refuses with a positive API server count "
                    "(entrypoints/cli/serve.py); remove api_server_count", where, path)


def _profiling(cluster, role, log_dir: str | None, where: Where, base: tuple) -> dict[str, Any] | None:
    """vLLM's ``--profiler-config``: the torch profiler refuses to start without a trace
    directory, so one is filled in under the role's log directory when the spec has none."""
    if role.profiling is None:
        return None
    config = role.profiling.model_dump(exclude_none=True)
    if config["profiler"] == "torch" and "torch_profiler_dir" not in config:
        if not log_dir:
            raise _fail(f"the torch profiler needs a trace directory, and cluster '{cluster.name}' declares no log "
                        "filesystem to put one in (logging.root or paths.log_root); set "
                        "profiling.torch_profiler_dir to a path on a persistent volume, or profile on a cluster "
                        "with a log root", where, base + ("profiling",))
        config["torch_profiler_dir"] = posixpath.join(log_dir, "traces")
    return config


def _args(spec, role, computed, where: Where, base: tuple, profiler: dict[str, Any] | None):
    manifesto_layer = {"disable_access_log_for_endpoints": DEFAULT_QUIET_ENDPOINTS}
    if spec.model.revision:
        manifesto_layer["revision"] = spec.model.revision
    layers = [
        ("manifesto default", "", manifesto_layer),
        ("spec vllm", "vllm", spec.vllm),
        (f"role {role.name} vllm", format_path(base + ("vllm",)), role.vllm),
        (f"role {role.name} computed", format_path(base + ("computed", "vllm")), computed["vllm"]),
    ]
    own: dict[str, Any] = {}
    if role.kv_transfer_config:
        own["kv_transfer_config"] = role.kv_transfer_config
    if profiler is not None:
        own["profiler_config"] = profiler
    if own:
        layers.append((f"role {role.name}", "", own))
    try:
        return to_args(layers, role.vllm_raw_args, format_path(base + ("vllm_raw_args",)))
    except ResolveError as exc:
        path = tuple(int(p) if p.isascii() and p.isdigit() else p for p in exc.path.replace("[", ".").replace("]", "").split("."))
        raise ResolveError(exc.message, where(path), exc.path) from None


def _fabric_profile(cluster, role, where: Where, base: tuple) -> str | None:
    fab = cluster.fabric
    if role.fabric_profile is not None:
        if role.fabric_profile not in fab.profiles:
            known = sorted(fab.profiles)
            raise _fail(f"fabric profile '{role.fabric_profile}' is not defined by cluster '{cluster.name}'"
                        f"{did_you_mean(role.fabric_profile, known)}; defined: {', '.join(known) or '(none)'}",
                        where, base + ("fabric_profile",))
        return role.fabric_profile
    if role.parallelism.ep and role.name in fab.expert_parallel_profiles:
        return fab.expert_parallel_profiles[role.name]
    return fab.default_profile


GROUP_INDEX_ENV = "LWS_GROUP_INDEX"


def _env(pair: Pair, role, base: tuple, computed, backends, cache_env, vllm_env: str | None,
         layout) -> tuple[EnvVar, ...]:
    """The model container's variables, later layers winning: manifesto's defaults, the
    platform's, the cache's, the cluster's fabric, the spec's, the role's, then its computed ones."""
    spec, cluster, accel, where, cluster_where = pair.spec, pair.cluster, pair.accel, pair.where, pair.cluster_where
    env: dict[str, EnvVar] = {}

    def put(name: str, value: str, source: str) -> None:
        env[name] = EnvVar(name, value, source=source)

    env["HF_TOKEN"] = EnvVar("HF_TOKEN", secret=("hf-secret", "HF_TOKEN"), source="manifesto default")
    put("VLLM_NO_USAGE_STATS", "1", "manifesto default")
    put("TQDM_DISABLE", "1", "manifesto default")
    env["MANIFESTO_POD_UID"] = EnvVar("MANIFESTO_POD_UID", field_ref="metadata.uid", source="manifesto default")
    if accel.torch_cuda_arch_list and vllm_env:
        # Only a vllm-envs worktree builds CUDA extensions at start-up; in a released image the
        # variable would only steer JIT builds away from the GPU the library detects itself.
        put("TORCH_CUDA_ARCH_LIST", accel.torch_cuda_arch_list, f"accelerator {accel.name} (vllm-envs build)")
    if cluster.platform == "openshift":
        put("USER", "vllm", "platform openshift")
        put("HOME", "/tmp", "platform openshift")
    for var in cache_env:
        env[var.name] = var
    for name, value in cluster.fabric.default_env.items():
        put(name, value, "cluster fabric.default_env")
    if cluster.fabric.ucx_net_devices:
        put("UCX_NET_DEVICES", cluster.fabric.ucx_net_devices, "cluster fabric.ucx_net_devices")
    profile_name = _fabric_profile(cluster, role, where, base)
    if profile_name:
        profile = cluster.fabric.profiles[profile_name]
        for name, value in profile.env.items():
            put(name, value, f"fabric profile {profile_name}")
        for name, expr in profile.computed_env.items():
            path = ("fabric", "profiles", profile_name, "computed_env", name)
            put(name, str(evaluate(expr, spec.vars, cluster_where(path), format_path(path))),
                f"fabric profile {profile_name} computed")
    for name, value in spec.env.items():
        put(name, value, "spec env")
    for name, value in role.env.items():
        put(name, value, f"role {role.name} env")
    for name, value in computed["env"].items():
        put(name, str(value), f"role {role.name} computed")
    if layout.rank_groups > 1:
        # Which DP rank a pod belongs to: its LeaderWorkerSet group (one group per rank).
        env[GROUP_INDEX_ENV] = EnvVar(GROUP_INDEX_ENV, field_ref=f"metadata.labels['{LWS_GROUP_INDEX_LABEL}']",
                                      source="feature external-dp (one LeaderWorkerSet group per rank)")
    if ("kv-connector", "NixlConnector") in backends and "VLLM_NIXL_SIDE_CHANNEL_HOST" not in env:
        env["VLLM_NIXL_SIDE_CHANNEL_HOST"] = EnvVar(
            "VLLM_NIXL_SIDE_CHANNEL_HOST", field_ref="status.podIP", source="feature kv-connector (NIXL)")
    return tuple(env[k] for k in sorted(env))


#: Volume names the Kubernetes renderer adds to model pods itself.
_RENDERED_VOLUMES = ("dshm", "dcgm-metrics", "host-sys", "host-proc")


def _extra_volumes(cluster, storage, cluster_where: Where):
    """``storage`` plus the cluster's ``pod_defaults.extra_volumes`` and their mounts, which may
    take no name or mount path the pod already uses."""
    import msgspec

    pd = cluster.pod_defaults
    if not pd.extra_volumes and not pd.extra_volume_mounts:
        return storage
    base = ("pod_defaults", "extra_volumes")
    if cluster.platform == "slurm":
        raise ResolveError(f"pod_defaults.extra_volumes are Kubernetes volumes, which Slurm cluster '{cluster.name}' "
                           "cannot mount; bind host paths into the containers with slurm.binds instead",
                           cluster_where(base), format_path(base))
    taken = {v.name for v in storage.volumes} | set(_RENDERED_VOLUMES)
    taken |= {f"device-{i}" for i in range(len(pd.extra_devices))}
    volumes = list(storage.volumes)
    for i, vol in enumerate(pd.extra_volumes):
        if vol["name"] in taken:
            path = base + (i, "name")
            raise ResolveError(f"volume name '{vol['name']}' is one the model pods already use "
                               f"({', '.join(sorted(taken))}); choose another", cluster_where(path), format_path(path))
        volumes.append(Volume(vol["name"], {k: v for k, v in vol.items() if k != "name"}))
    used = {m.path for m in storage.mounts} | {"/dev/shm"} | set(pd.extra_devices)
    mounts = list(storage.mounts)
    for i, m in enumerate(pd.extra_volume_mounts):
        if m.mountPath in used:
            path = ("pod_defaults", "extra_volume_mounts", i, "mountPath")
            raise ResolveError(f"{m.mountPath} is already a mount of the model pods ({', '.join(sorted(used))}); "
                               "mount the volume elsewhere", cluster_where(path), format_path(path))
        mounts.append(Mount(m.name, m.mountPath, m.readOnly, m.subPath))
    return msgspec.structs.replace(storage, volumes=tuple(volumes), mounts=tuple(mounts))


def _check_vllm_env(path: str, storage, where: Where, flag: str | None = None) -> None:
    """The worktree must sit on a persistent volume of the model pods (an emptyDir starts empty)."""
    import posixpath

    at = ("runtime", "vllm_env")
    if not path.startswith("/"):
        raise _fail(f"'{path}' must be an absolute path", where, at, flag=flag)
    norm = posixpath.normpath(path)
    sources = {v.name: v.source for v in storage.volumes}
    persistent = [m.path for m in storage.mounts if "emptyDir" not in sources.get(m.name, {})]
    under = [m for m in storage.mounts if norm == m.path or norm.startswith(m.path.rstrip("/") + "/")]
    mount = max(under, key=lambda m: len(m.path), default=None)
    choices = ", ".join(persistent) if persistent else "the cluster declares none"
    if mount is not None and "emptyDir" in sources.get(mount.name, {}):
        raise _fail(f"'{path}' is on the pod-local emptyDir volume mounted at {mount.path}, which starts empty "
                    f"in every pod; the worktree must live on persistent storage ({choices})", where, at, flag=flag)
    if mount is None:
        raise _fail(f"'{path}' is not under any persistent volume mount of the model pods ({choices})",
                    where, at, flag=flag)


def _placement(cluster, accel: Accelerator) -> Placement:
    pd = cluster.pod_defaults
    selector = dict(pd.node_selector)
    if accel.presence_label:
        selector[accel.presence_label] = "true"
    selector.update(accel.node_selector)
    return Placement(
        node_selector=dict(sorted(selector.items())), affinity=pd.affinity, tolerations=tuple(pd.tolerations),
        annotations=dict(pd.annotations), image_pull_secrets=tuple(pd.image_pull_secrets),
        image_pull_policy=pd.image_pull_policy, termination_grace_period_seconds=pd.termination_grace_period_seconds,
        working_dir=pd.working_dir, container_security_context=pd.container_security_context,
        security_context=pd.security_context, dns_policy=pd.dns_policy, dns_config=pd.dns_config,
        extra_devices=tuple(pd.extra_devices),
    )


def _support_images(images, cluster) -> dict[str, str]:
    llm = dict(images.llm_d)
    release = cluster.llm_d.release or llm.pop("release", None) or "main"
    llm.pop("release", None)
    out = {f"llm_d.{k}": v.replace("{release}", release) for k, v in llm.items()}
    for key, value in cluster.llm_d.images.model_dump(exclude_none=True).items():
        out[f"llm_d.{key}"] = value.replace("{release}", release)
    out.update({f"sidecars.{k}": v for k, v in images.sidecars.items()})
    out.update({f"test.{k}": v for k, v in images.test.items()})
    return dict(sorted(out.items()))


# Production sizes of the routing components under high-concurrency serving: the picker
# parses every request body and scores every endpoint; Envoy streams bodies both ways. The
# Gateway's proxy is the one entry point of the instance: Istio gives it one worker thread per
# CPU of its limit, so 8 CPUs match the standalone Envoy's 8 workers, and 64Gi holds 2048
# in-flight requests each buffering up to 32Mi of body (the standalone Envoy's buffer limit).
ROUTING_DEFAULTS = {
    "endpoint_picker": ("8", "16Gi"), "envoy": ("4", "8Gi"), "routing_sidecar": ("8", "16Gi"),
    "gateway_proxy": ("8", "64Gi"),
}
ENVOY_CONCURRENCY = 8
ENVOY_BUFFER_LIMIT = "32Mi"
# Envoy's circuit breakers default to 1,024 per cluster; llm-d's standalone Envoy raises them to
# 40,000 so every in-flight request can hold its picker stream and its model-server request.
ENVOY_CIRCUIT_LIMIT = 40000
# The Gateway's connection pools to the picker and the model servers: every in-flight request
# holds a stream to each, so the limits sit far above any one instance's concurrency (the values
# of llm-d's common Istio configuration); idle connections close after 15 minutes.
GATEWAY_CONNECTION_POOL = {
    "max_connections": 256000, "http1_max_pending_requests": 256000, "http2_max_requests": 256000,
    "max_requests_per_connection": 256000, "idle_timeout": "900s",
}


def _routing_sizing(cluster) -> RoutingSizingPlan:
    given = cluster.llm_d.sizing

    def size(name: str) -> Size:
        cpu, memory = ROUTING_DEFAULTS[name]
        own = getattr(given, name)
        return Size(cpu=own.cpu or cpu, memory=own.memory or memory)

    return RoutingSizingPlan(
        endpoint_picker=size("endpoint_picker"), envoy=size("envoy"),
        envoy_concurrency=given.envoy.concurrency or ENVOY_CONCURRENCY,
        envoy_buffer_limit=given.envoy.buffer_limit or ENVOY_BUFFER_LIMIT,
        envoy_circuit_limit=given.envoy.circuit_breaker_limit or ENVOY_CIRCUIT_LIMIT,
        routing_sidecar=size("routing_sidecar"), gateway_proxy=size("gateway_proxy"),
        gateway_connection_pool=ConnectionPoolPlan(**{
            **GATEWAY_CONNECTION_POOL, **given.gateway_connection_pool.model_dump(exclude_none=True)}),
    )


def _shared_claim(cluster) -> dict[str, Any] | None:
    sc = cluster.storage.shared_claim
    if sc is None:
        return None
    claim = (cluster.storage.shared_volume or {}).get("persistentVolumeClaim", {}).get("claimName")
    return {"name": claim, "storage_class": sc.storage_class, "access_modes": list(sc.access_modes), "size": sc.size}


def _slurm(cluster) -> SlurmPlan | None:
    s = cluster.slurm
    if cluster.platform != "slurm":
        return None
    if s is None:
        from manifesto.schema import compiled
        from manifesto.schema.validation import validate

        s = validate(compiled.Slurm, {})
    return SlurmPlan(
        partition=s.partition, account=s.account, qos=s.qos, constraint=s.constraint, time=s.time,
        runtime=s.runtime, exclusive=s.exclusive, binds=tuple((b.source, b.target, b.read_only) for b in s.binds),
        setup=tuple(s.setup), ssh_host=s.ssh_host, port=s.port, router_cpus=s.router_cpus,
        router_memory=s.router_memory, proxy_cpus=s.proxy_cpus, proxy_memory=s.proxy_memory,
    )
