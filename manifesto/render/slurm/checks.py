"""What a Slurm batch script cannot express: Kubernetes-only requests and unsafe port plans.

Each refusal is a ``SlurmUnsupported`` (a ``ResolveError``) naming the field it is about:
``source`` says whose field it is ("spec" or "cluster") and ``fields`` is its path, so the
caller can place it in the input file (``spec.where(fields)`` / ``cluster.where(fields)``).
"""

from __future__ import annotations

import posixpath

from manifesto.errors import ResolveError, format_path

__all__ = ["SlurmUnsupported", "check_plan", "ignored_requests"]

EPP_PORTS = (9002, 9003, 9090)  # gRPC ext_proc, gRPC health, metrics
ENVOY_PORTS = (19000, 19001)  # admin (loopback), /ready


class SlurmUnsupported(ResolveError):
    def __init__(self, message: str, source: str, fields: tuple) -> None:
        self.source = source
        self.fields = tuple(fields)
        super().__init__(message, None, format_path(self.fields))


def _explicit_idle(plan) -> bool:
    """True when idle shutdown was asked for rather than left at its implicit default."""
    return plan.idle.enabled and plan.idle.explicit


def check_plan(plan) -> None:
    s = plan.slurm
    if s is None:
        raise SlurmUnsupported(f"cluster '{plan.cluster}' has no Slurm settings", "cluster", ("slurm",))
    if plan.sidecars:
        raise SlurmUnsupported(
            f"{', '.join(plan.sidecars)}: Kubernetes pod sidecars, which Slurm cannot run; set "
            f"runtime.sidecars: [] (or leave it out) to render for Slurm cluster '{plan.cluster}'",
            "spec", ("runtime", "sidecars"))
    if _explicit_idle(plan):
        what = (f"idle shutdown after {plan.idle.timeout_minutes} minutes is a Kubernetes controller; on Slurm "
                f"cluster '{plan.cluster}' a job ends at slurm.time or with `manifesto slurm stop`")
        if plan.idle.flag:  # the CLI asked for it, not the spec
            raise SlurmUnsupported(f"{plan.idle.flag}: {what}: leave the flag out", "flag", ())
        raise SlurmUnsupported(f"{what}: leave runtime.idle_shutdown out (or set enabled: false)", "spec",
                               ("runtime", "idle_shutdown"))
    if plan.kueue_queue:
        raise SlurmUnsupported(
            f"Kueue admits Kubernetes workloads; Slurm cluster '{plan.cluster}' schedules through its partition "
            "and QoS instead: remove kueue from the cluster profile", "cluster", ("kueue",))
    if plan.accelerator.backend != "slurm" or not plan.accelerator.gres:
        raise SlurmUnsupported(
            f"accelerator '{plan.accelerator.name}' of Slurm cluster '{plan.cluster}' needs "
            "allocation.slurm.gres (for example gpu or gpu:<type>); DRA and extended resources are Kubernetes-only",
            "cluster", ("accelerators", "profiles", plan.accelerator.name, "allocation"))
    if plan.shared_claim:
        raise SlurmUnsupported(
            f"a Kubernetes PVC, which Slurm cluster '{plan.cluster}' cannot use; "
            "use cache.hf_home, paths.cache_root and paths.log_root on a shared filesystem",
            "cluster", ("storage", "shared_claim"))
    for i, role in enumerate(plan.roles):
        _refuse_pod_storage(plan, role, i)
        for vol in role.storage.volumes:
            if "persistentVolumeClaim" in vol.source:
                raise SlurmUnsupported(
                    f"volume '{vol.name}' is a Kubernetes PVC, which Slurm cluster '{plan.cluster}' cannot mount; "
                    "use host paths (cache.hf_home, paths.cache_root, paths.log_root) and slurm.binds",
                    "cluster", ("storage",))
        if role.vllm_env and s.runtime != "native":
            norm = posixpath.normpath(role.vllm_env)
            if not any(norm == posixpath.normpath(t) or norm.startswith(posixpath.normpath(t).rstrip("/") + "/")
                       for _, t, _ in s.binds):
                targets = ", ".join(t for _, t, _ in s.binds) or "none are declared"
                raise SlurmUnsupported(
                    f"'{role.vllm_env}' is not inside any slurm.binds target of cluster "
                    f"'{plan.cluster}' ({targets}), so the {s.runtime} container cannot see it",
                    "spec", ("runtime", "vllm_env"))
    if plan.routing is not None:
        _check_routed(plan)


_POD_STORAGE = (("ephemeral_storage", "ephemeral-storage request", "pod_defaults.ephemeral_storage"),
                ("shm_size", "/dev/shm size", "pod_defaults.shm_size"))


def _refuse_pod_storage(plan, role, index: int) -> None:
    """A spec's pod storage request has no Slurm meaning; rendering without it would drop it
    silently, so it is refused with the place such defaults belong. (On Slurm the plan carries
    only the spec's own requests: the cluster's pod_defaults are Kubernetes settings.)"""
    for name, what, default in _POD_STORAGE:
        value = getattr(role.resources, name)
        if value:
            raise SlurmUnsupported(
                f"{value} is a Kubernetes pod {what}, which Slurm cluster '{plan.cluster}' cannot apply; remove it "
                f"from the spec and set {default} in your Kubernetes cluster profiles instead, so one spec serves "
                "both platforms", "spec", ("roles", index, "resources", name))


def _check_routed(plan) -> None:
    s = plan.slurm
    if plan.routing.frontend != "standalone":
        raise SlurmUnsupported(
            f"{plan.routing.frontend} needs the Kubernetes Gateway API; on Slurm the router is Envoy beside the "
            "endpoint picker: use routing.frontend: standalone", "spec", ("routing", "frontend"))
    if not s.exclusive:
        raise SlurmUnsupported(
            f"llm-d routing binds fixed host ports (router {s.port}, endpoint picker {EPP_PORTS[0]}, P/D proxies), "
            f"so it needs whole nodes: set slurm.exclusive: true on Slurm cluster '{plan.cluster}'",
            "cluster", ("slurm", "exclusive"))
    first = plan.roles[0].layout
    taken = {p: "the endpoint picker" for p in EPP_PORTS}
    taken.update({p: "Envoy's admin and readiness listeners" for p in ENVOY_PORTS})
    for p in (*first.public_ports, *first.backend_ports):
        taken.setdefault(p, f"role {plan.roles[0].name}'s servers")
    if first.dp > 1:
        taken.setdefault(first.rpc_port, "vLLM's data-parallel RPC")
        taken.setdefault(first.supervisor_port, "vLLM's DP supervisor")
    if s.port in taken:
        raise SlurmUnsupported(
            f"{s.port} is also used by {taken[s.port]} on the router node, which is the first node of Slurm "
            f"cluster '{plan.cluster}'s allocation; choose another slurm.port",
            "cluster", ("slurm", "port"))


def ignored_requests(plan) -> list[str]:
    """Kubernetes-only requests that have no Slurm meaning and are left out (noted in the script)."""
    out = []
    for role in plan.roles:
        if role.same_topology_key:
            out.append(f"role {role.name}: lws.same_topology_key {role.same_topology_key} (Kubernetes pod affinity)")
    return out
