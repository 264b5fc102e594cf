"""The cluster profile: where to serve (accelerators, storage, fabric env, images, platform)."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from manifesto.errors import did_you_mean, show_value
from manifesto import rules
from manifesto.schema.base import (
    AbsPath, Annotations, Count, EnvMap, FieldError, GraceSeconds, LabelKey, Labels, PathSegment, Port, Quantity,
    ResourceName, SecretNames, Strict, Subdomain, default_of, key_rule, rule,
)

__all__ = [
    "ExtendedResource", "Dra", "SlurmGres", "Allocation", "ComputeDomain", "AcceleratorProfile",
    "Accelerators", "SharedClaim", "Storage", "Logging", "Paths", "ClusterCache", "Rdma",
    "PodDefaults", "FabricProfile", "Fabric", "Naming", "Kueue", "Gateway", "OpenShift",
    "LlmDImages", "ComponentSize", "EnvoySize", "ConnectionPool", "RoutingSizing", "LlmD", "SlurmBind", "Slurm",
    "ClusterProfile",
]


KueueName = Annotated[str, rule(rules.dns_subdomain), rule(rules.label_value)]
SlurmWord = Annotated[str, rule(rules.slurm_word)]
BindPath = Annotated[str, rule(rules.bind_path)]


class ExtendedResource(Strict):
    resource_name: ResourceName = Field(description="Extended resource such as nvidia.com/gpu.")


class Dra(Strict):
    device_class_name: Subdomain = Field(description="DRA DeviceClass, e.g. gpu.nvidia.com.")


class SlurmGres(Strict):
    gres: Annotated[str, rule(rules.slurm_gres)] = Field("gpu", description="GRES name, optionally typed (gpu:nvidia_gr100); count derived.")


class Allocation(Strict):
    extended_resource: ExtendedResource | None = None
    dra: Dra | None = None
    slurm: SlurmGres | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "Allocation":
        chosen = [n for n in ("extended_resource", "dra", "slurm") if getattr(self, n) is not None]
        if len(chosen) != 1:
            raise ValueError(
                "allocation must contain exactly one of extended_resource, dra or slurm"
                + (f" (found {', '.join(chosen)})" if chosen else "")
            )
        return self

    @property
    def backend(self) -> str:
        return next(n for n in ("extended_resource", "dra", "slurm") if getattr(self, n) is not None)


class ComputeDomain(Strict):
    resource_claim_template_name: Subdomain = Field(description="ResourceClaimTemplate of the IMEX channel.")


class AcceleratorProfile(Strict):
    gpus_per_node: Count | None = Field(None, description="Falls back to the top-level gpus_per_node.")
    allocation: Allocation | None = None
    resource_name: ResourceName | None = Field(None, description="Older shape of allocation.extended_resource.")
    presence_label: LabelKey | None = None
    gpu_arch: PathSegment | None = None
    torch_cuda_arch_list: Annotated[str, rule(rules.one_word)] | None = None
    node_selector: Labels = Field(default_factory=dict)
    compute_domain: ComputeDomain | None = None
    memory: Quantity | None = Field(
        None, description="Memory of one GPU (e.g. 141G for an H200), for the memory-fit check.")
    hourly_price: float | None = Field(
        None, description="Price of one GPU for one hour, in any currency; build reports and explain add cost.")

    @field_validator("memory")
    @classmethod
    def _memory(cls, value: str | None) -> str | None:
        from manifesto.quantity import parse

        if value is not None and not 1024**3 <= parse(value) <= 2**50:
            raise ValueError(f"{value} is not a GPU's memory; write it as a quantity from 1Gi to 1Pi, e.g. 141G")
        return value

    @field_validator("hourly_price", mode="before")
    @classmethod
    def _price(cls, value: Any) -> Any:
        import math

        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value < 0 or value > 1e6):
            raise ValueError(f"{show_value(value)} must be a number from 0 to 1000000 (the price of one GPU-hour)")
        return value

    @model_validator(mode="after")
    def _shape(self) -> "AcceleratorProfile":
        if self.allocation is not None and self.resource_name is not None:
            raise FieldError(("resource_name",), "set allocation or the older resource_name, not both")
        return self


class Accelerators(Strict):
    default: str
    profiles: Annotated[dict[str, AcceleratorProfile], key_rule(rules.path_segment, "accelerator name")] = Field(
        min_length=1)

    @model_validator(mode="after")
    def _default_known(self) -> "Accelerators":
        if self.default not in self.profiles:
            # No did-you-mean: a near name is a different GPU (b200 vs h200), not a typo to fix.
            raise FieldError(("default",), f"'{self.default}' is not one of accelerators.profiles: "
                             + ", ".join(sorted(self.profiles)))
        return self


class SharedClaim(Strict):
    storage_class: Subdomain | None = None
    access_modes: list[Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]] = Field(
        default_factory=lambda: ["ReadWriteMany"])
    size: Quantity


class Storage(Strict):
    shared_volume: dict[str, Any] | None = Field(
        None, description="One Kubernetes volume source, e.g. {persistentVolumeClaim: {claimName: NAME}}.")
    shared_mount_path: AbsPath | None = None
    local_nvme_path: AbsPath | None = None
    shared_claim: SharedClaim | None = None

    @field_validator("shared_volume")
    @classmethod
    def _one_source(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        if not value:
            raise ValueError("expected one volume source, such as persistentVolumeClaim: {claimName: NAME}")
        kinds = list(value)
        if len(kinds) > 1:
            raise FieldError((kinds[1],), f"a volume has exactly one source; found {', '.join(kinds)}")
        kind, source = kinds[0], value[kinds[0]]
        if not isinstance(source, dict):
            hint = (f"; write persistentVolumeClaim: {{claimName: {source}}}"
                    if kind == "persistentVolumeClaim" and isinstance(source, str) else
                    f" (the fields of the {kind} volume source)")
            raise FieldError((kind,), f"expected a mapping, got {show_value(source)}{hint}")
        if kind == "persistentVolumeClaim" and not isinstance(source.get("claimName"), str):
            raise FieldError((kind,), "persistentVolumeClaim needs claimName: the name of the claim")
        if kind == "persistentVolumeClaim" and rules.dns_subdomain(source["claimName"]):
            raise FieldError((kind, "claimName"), f"{show_value(source['claimName'])} "
                             f"{rules.dns_subdomain(source['claimName'])}")
        return value


class Logging(Strict):
    pvc: Subdomain | None = None
    mount_path: AbsPath | None = None
    root: str


class Paths(Strict):
    user_root: str | None = None
    cache_root: str | None = None
    log_root: str | None = None


class ClusterCache(Strict):
    hf_host_path: AbsPath | None = None
    jit_host_path: AbsPath | None = None
    hf_home: AbsPath | None = None


class Rdma(Strict):
    resource_name: ResourceName
    value: Quantity = "1"


class PodDefaults(Strict):
    shm_size: Quantity | None = None
    ephemeral_storage: Quantity | None = None
    image_pull_secrets: SecretNames = Field(default_factory=list)
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    termination_grace_period_seconds: GraceSeconds | None = None
    working_dir: AbsPath | None = None
    container_security_context: dict[str, Any] | None = None
    security_context: dict[str, Any] | None = None
    annotations: Annotations = Field(default_factory=dict)
    node_selector: Labels = Field(default_factory=dict)
    affinity: dict[str, Any] | None = None
    tolerations: list[dict[str, Any]] = Field(default_factory=list)
    dns_policy: Literal["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"] | None = None
    dns_config: dict[str, Any] | None = None
    extra_devices: list[AbsPath] = Field(default_factory=list, description="Host device paths mounted into model pods.")


class FabricProfile(Strict):
    env: EnvMap = Field(default_factory=dict)
    computed_env: Annotated[dict[str, Any], key_rule(rules.env_name, "variable name")] = Field(default_factory=dict)


class Fabric(Strict):
    ucx_net_devices: str | None = None
    default_profile: str | None = None
    expert_parallel_profiles: dict[str, str] = Field(default_factory=dict)
    default_env: EnvMap = Field(default_factory=dict)
    profiles: dict[str, FabricProfile] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_profiles(self) -> "Fabric":
        uses = [(("default_profile",), self.default_profile)] if self.default_profile else []
        uses += [(("expert_parallel_profiles", role), name) for role, name in self.expert_parallel_profiles.items()]
        known = sorted(self.profiles)
        for path, name in uses:
            if name not in self.profiles:
                raise FieldError(path, f"'{name}' is not defined under fabric.profiles"
                                 f"{did_you_mean(name, known)}; defined: {', '.join(known) or '(none)'}")
        return self


class Naming(Strict):
    user_prefix: bool = False


class Kueue(Strict):
    local_queue: KueueName
    priority_class: KueueName | None = None


class Gateway(Strict):
    class_name: Subdomain = "istio"
    service_type: Literal["ClusterIP", "LoadBalancer", "NodePort"] = "ClusterIP"


class OpenShift(Strict):
    scc: Subdomain | None = None


class LlmDImages(Strict):
    epp: str | None = None
    envoy: str | None = None
    routing_sidecar: str | None = None


class ComponentSize(Strict):
    cpu: Quantity | None = Field(None, description="CPU request.")
    memory: Quantity | None = Field(None, description="Memory request and limit.")


class EnvoySize(ComponentSize):
    concurrency: Count | None = Field(None, description="Envoy worker threads (--concurrency).")
    buffer_limit: Quantity | None = Field(
        None, description="Envoy's per-connection buffer limit on the client listener and the model endpoints.")
    circuit_breaker_limit: int | None = Field(
        None, description="Envoy's circuit-breaker limits (connections, pending and active requests, retries) to "
                          "the endpoint picker and to the model servers (1 to 2147483647; default 40000).")

    @field_validator("circuit_breaker_limit", mode="before")
    @classmethod
    def _limit(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 1 <= value <= rules.INT32_MAX):
            raise ValueError(f"{show_value(value)} must be a whole number from 1 to {rules.INT32_MAX} "
                             "(Envoy's 32-bit circuit-breaker thresholds)")
        return value


    @field_validator("buffer_limit")
    @classmethod
    def _fits_envoy(cls, value: str | None) -> str | None:
        from manifesto.quantity import parse

        if value is not None and not 1 <= parse(value) < 2**32:
            raise ValueError(f"{value} is outside Envoy's buffer limit range (1 byte to just under 4Gi)")
        return value


# A duration in the form Istio accepts for DestinationRule fields: whole numbers with units,
# largest first (900s, 15m, 1h30m, 250ms).
_DURATION = re.compile(r"^(?:([0-9]+)h)?(?:([0-9]+)m(?!s))?(?:([0-9]+)s)?(?:([0-9]+)ms)?\Z")


def _duration_ms(text: str) -> int | None:
    match = _DURATION.match(text)
    if not text or match is None:  # every part is optional, so "" matches
        return None
    h, m, s, ms = (int(g or 0) for g in match.groups())
    return ((h * 60 + m) * 60 + s) * 1000 + ms


class ConnectionPool(Strict):
    """Istio connection-pool limits of the Gateway's DestinationRules (picker and model servers);
    each unset value keeps Manifesto's high-concurrency default."""

    max_connections: int | None = Field(
        None, description="tcp.maxConnections: connections to one host (1 to 2147483647).")
    http1_max_pending_requests: int | None = Field(
        None, description="http.http1MaxPendingRequests: requests queued for a connection (1 to 2147483647).")
    http2_max_requests: int | None = Field(
        None, description="http.http2MaxRequests: active requests to the destination (1 to 2147483647).")
    max_requests_per_connection: int | None = Field(
        None, description="http.maxRequestsPerConnection: requests before a connection is replaced "
                          "(1 to 2147483647; 1 turns keep-alive off).")
    idle_timeout: str | None = Field(
        None, description="http.idleTimeout: an unused connection closes after this long (e.g. 900s, 15m, 1h).")

    @field_validator("max_connections", "http1_max_pending_requests", "http2_max_requests",
                     "max_requests_per_connection", mode="before")
    @classmethod
    def _int32(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 1 <= value <= rules.INT32_MAX):
            raise ValueError(f"{show_value(value)} must be a whole number from 1 to {rules.INT32_MAX} "
                             "(Istio's 32-bit connection-pool limits)")
        return value

    @field_validator("idle_timeout", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or not _duration_ms(value)):
            raise ValueError(f"{show_value(value)} is not a duration of at least 1ms; write whole numbers with "
                             "units h, m, s, ms, largest first (examples: 900s, 15m, 1h30m)")
        return value


class RoutingSizing(Strict):
    """Requests of the llm-d routing components; each unset value keeps the production default."""

    endpoint_picker: ComponentSize = default_of(ComponentSize)
    envoy: EnvoySize = default_of(EnvoySize)
    routing_sidecar: ComponentSize = default_of(ComponentSize)
    gateway_proxy: ComponentSize = default_of(ComponentSize)
    gateway_connection_pool: ConnectionPool = default_of(
        ConnectionPool, description="Connection pools of the Gateway frontend's DestinationRules.")


class LlmD(Strict):
    release: str | None = None
    images: LlmDImages = default_of(LlmDImages)
    sizing: RoutingSizing = default_of(RoutingSizing)


class SlurmBind(Strict):
    source: BindPath
    target: Annotated[AbsPath, rule(rules.bind_path)]
    read_only: bool = False


class Slurm(Strict):
    partition: SlurmWord | None = None
    account: SlurmWord | None = None
    qos: SlurmWord | None = None
    constraint: Annotated[str, rule(rules.slurm_constraint)] | None = None
    time: Annotated[str, rule(rules.slurm_time)] = "01:00:00"
    runtime: Literal["apptainer", "singularity", "pyxis", "native"] = "apptainer"
    exclusive: bool = True
    binds: list[SlurmBind] = Field(default_factory=list)
    setup: list[str] = Field(default_factory=list)
    ssh_host: Annotated[str, rule(rules.host_name)] | None = None
    port: Port = 8081
    router_cpus: Count = 8
    router_memory: Quantity = "16Gi"
    proxy_cpus: Count = 2
    proxy_memory: Quantity = "4Gi"


class ClusterProfile(Strict):
    # Fields whose strings may span lines (site shell set-up, env values, opaque Kubernetes fragments).
    MULTILINE: ClassVar[frozenset[str]] = frozenset(
        {"setup", "env", "default_env", "computed_env", "shared_volume", "affinity", "tolerations",
         "security_context", "container_security_context", "dns_config"})

    name: PathSegment
    platform: Literal["kubernetes", "openshift", "slurm"] = "kubernetes"
    gpus_per_node: Count | None = Field(None, description="Older shape: per-node GPUs for every profile.")
    accelerators: Accelerators
    storage: Storage = default_of(Storage)
    logging: Logging | None = None
    paths: Paths = default_of(Paths)
    cache: ClusterCache = default_of(ClusterCache)
    rdma: Rdma | None = None
    pod_defaults: PodDefaults = default_of(PodDefaults)
    fabric: Fabric = default_of(Fabric)
    naming: Naming = default_of(Naming)
    kueue: Kueue | None = None
    gateway: Gateway = default_of(Gateway)
    openshift: OpenShift | None = None
    llm_d: LlmD = default_of(LlmD)
    slurm: Slurm | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "ClusterProfile":
        for name, prof in self.accelerators.profiles.items():
            at = ("accelerators", "profiles", name)
            if prof.gpus_per_node is None and self.gpus_per_node is None:
                raise FieldError(at, "gpus_per_node is missing here and at the top level of the cluster profile")
            slurm_alloc = prof.allocation is not None and prof.allocation.slurm is not None
            if self.platform == "slurm" and prof.allocation is not None and not slurm_alloc:
                raise FieldError(at + ("allocation",), f"platform: slurm needs allocation.slurm (found "
                                 f"{prof.allocation.backend})")
            if self.platform != "slurm" and slurm_alloc:
                raise FieldError(at + ("allocation",), f"allocation.slurm needs platform: slurm (this cluster is "
                                 f"{self.platform}); use extended_resource or dra")
            if self.platform != "slurm" and prof.allocation is None and prof.resource_name is None:
                raise FieldError(at, "needs an allocation (extended_resource or dra)")
        if self.openshift is not None and self.platform != "openshift":
            raise FieldError(("openshift",), "the openshift section needs platform: openshift")
        return self
