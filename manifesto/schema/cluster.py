"""The cluster profile: where to serve (accelerators, storage, fabric env, images, platform)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from manifesto.util import rules
from manifesto.schema import checks
from manifesto.schema.base import (
    AbsPath, Annotations, Bytes, Count, DnsLabel, EnvMap, GraceSeconds, LabelKey, Labels, PathSegment, Port,
    Quantity, ResourceName, SecretNames, Strict, Subdomain, default_of, key_rule, rule,
)
from manifesto.schema.checks import VOLUME_SOURCES  # noqa: F401 (re-exported)

__all__ = [
    "ExtendedResource", "Dra", "SlurmGres", "Allocation", "ComputeDomain", "AcceleratorProfile",
    "Accelerators", "SharedClaim", "Storage", "Logging", "Paths", "ClusterCache", "Rdma",
    "PodDefaults", "FabricProfile", "Fabric", "Naming", "Kueue", "Gateway", "OpenShift",
    "LlmDImages", "LeaderWorkerSetInstall", "ComponentSize", "EnvoySize", "ConnectionPool", "RoutingSizing", "LlmD", "SlurmBind", "Slurm",
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


class Allocation(Strict, checks.AllocationMixin):
    extended_resource: ExtendedResource | None = None
    dra: Dra | None = None
    slurm: SlurmGres | None = None

    _exactly_one = model_validator(mode="after")(checks.allocation_exactly_one)


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
    part: Annotated[str | None, AfterValidator(checks.gpu_part)] = Field(
        None, description="The accelerator part (A100-SXM4-40GB, H100-NVL-94GB, H200-141GB, ...; the table is in "
        "manifesto/schema/parts.py), whose CUDA-visible memory the memory-fit check uses. Needed where "
        "gpu_arch names a family sold with several memory sizes (a100, h100) and memory is left out.")
    memory: Annotated[Quantity | None, AfterValidator(checks.gpu_memory)] = Field(
        None, description="Memory CUDA sees on one GPU, for the memory-fit check (G = 10^9 bytes, Gi = 2^30); left "
        "out, the accelerator table's figure for the part or gpu_arch applies (an H200: 139.81 GiB), as it does "
        "for a data-sheet size of that family such as 141G or 40G on an a100.")
    hourly_price: Annotated[float | None, BeforeValidator(checks.gpu_price)] = Field(
        None, description="Price of one GPU for one hour, in any currency; build reports and explain add cost.")

    _shape = model_validator(mode="after")(checks.accelerator_shape)


class Accelerators(Strict):
    default: str
    profiles: Annotated[dict[str, AcceleratorProfile], key_rule(rules.path_segment, "accelerator name")] = Field(
        min_length=1)

    _default_known = model_validator(mode="after")(checks.default_accelerator_known)


class SharedClaim(Strict):
    storage_class: Subdomain | None = None
    access_modes: list[Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]] = Field(
        default_factory=checks.read_write_many)
    size: Bytes


class Storage(Strict):
    shared_volume: Annotated[dict[str, Any] | None, AfterValidator(checks.one_volume_source)] = Field(
        None, description="One Kubernetes volume source, e.g. {persistentVolumeClaim: {claimName: NAME}}.")
    shared_mount_path: AbsPath | None = None
    local_nvme_path: AbsPath | None = None
    shared_claim: SharedClaim | None = None


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


class ExtraVolumeMount(Strict):
    """A mount of an extra volume into the vLLM container (Kubernetes VolumeMount fields)."""

    name: DnsLabel = Field(description="An entry of pod_defaults.extra_volumes.")
    mountPath: AbsPath  # noqa: N815 (the Kubernetes spelling, so entries paste from a pod spec)
    readOnly: bool = False  # noqa: N815
    subPath: Annotated[str, AfterValidator(checks.sub_path)] | None = None  # noqa: N815


class PodDefaults(Strict):
    shm_size: Bytes | None = None
    ephemeral_storage: Bytes | None = None
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
    extra_volumes: list[Annotated[dict[str, Any], AfterValidator(checks.extra_volume)]] = Field(
        default_factory=list, description="Kubernetes volumes added to model pods (datasets, licences, caches).")
    extra_volume_mounts: list[ExtraVolumeMount] = Field(
        default_factory=list, description="Mounts of pod_defaults.extra_volumes into the vLLM container.")

    _mounts_name_volumes = model_validator(mode="after")(checks.mounts_name_volumes)


class FabricProfile(Strict):
    env: EnvMap = Field(default_factory=dict)
    computed_env: Annotated[dict[str, Any], key_rule(rules.env_name, "variable name")] = Field(default_factory=dict)


class Fabric(Strict):
    ucx_net_devices: str | None = None
    default_profile: str | None = None
    expert_parallel_profiles: dict[str, str] = Field(default_factory=dict)
    default_env: EnvMap = Field(default_factory=dict)
    profiles: dict[str, FabricProfile] = Field(default_factory=dict)

    _known_profiles = model_validator(mode="after")(checks.known_fabric_profiles)


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


class LeaderWorkerSetInstall(Strict):
    """The LeaderWorkerSet controller installed on the cluster."""

    version: Annotated[str, BeforeValidator(checks.release_text), rule(rules.release_version)] = Field(
        description="Its release, e.g. 0.10.0. From 0.10 a prefill/decode spec renders as one DisaggregatedSet "
                    "(the spec's pd_workload decides; see docs/decisions.md).")


class LlmDImages(Strict):
    epp: str | None = None
    envoy: str | None = None
    routing_sidecar: str | None = None


class ComponentSize(Strict):
    cpu: Quantity | None = Field(None, description="CPU request.")
    memory: Bytes | None = Field(None, description="Memory request and limit.")


class EnvoySize(ComponentSize):
    concurrency: Count | None = Field(None, description="Envoy worker threads (--concurrency).")
    buffer_limit: Annotated[Quantity | None, AfterValidator(checks.envoy_buffer)] = Field(
        None, description="Envoy's per-connection buffer limit on the client listener and the model endpoints.")
    circuit_breaker_limit: Annotated[int | None, BeforeValidator(checks.envoy_limit)] = Field(
        None, description="Envoy's circuit-breaker limits (connections, pending and active requests, retries) to "
                          "the endpoint picker and to the model servers (1 to 2147483647; default 40000).")


class ConnectionPool(Strict):
    """Istio connection-pool limits of the Gateway's DestinationRules (picker and model servers);
    each unset value keeps Manifesto's high-concurrency default."""

    max_connections: Annotated[int | None, BeforeValidator(checks.istio_limit)] = Field(
        None, description="tcp.maxConnections: connections to one host (1 to 2147483647).")
    http1_max_pending_requests: Annotated[int | None, BeforeValidator(checks.istio_limit)] = Field(
        None, description="http.http1MaxPendingRequests: requests queued for a connection (1 to 2147483647).")
    http2_max_requests: Annotated[int | None, BeforeValidator(checks.istio_limit)] = Field(
        None, description="http.http2MaxRequests: active requests to the destination (1 to 2147483647).")
    max_requests_per_connection: Annotated[int | None, BeforeValidator(checks.istio_limit)] = Field(
        None, description="http.maxRequestsPerConnection: requests before a connection is replaced "
                          "(1 to 2147483647; 1 turns keep-alive off).")
    idle_timeout: Annotated[str | None, BeforeValidator(checks.istio_duration)] = Field(
        None, description="http.idleTimeout: an unused connection closes after this long (e.g. 900s, 15m, 1h).")


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
    router_memory: Bytes = "16Gi"
    proxy_cpus: Count = 2
    proxy_memory: Bytes = "4Gi"


class ClusterProfile(Strict):
    # Fields whose strings may span lines (site shell set-up, env values, opaque Kubernetes fragments).
    MULTILINE: ClassVar[frozenset[str]] = frozenset(
        {"setup", "env", "default_env", "computed_env", "shared_volume", "affinity", "tolerations",
         "security_context", "container_security_context", "dns_config", "extra_volumes"})

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
    leaderworkerset: LeaderWorkerSetInstall | None = None
    slurm: Slurm | None = None

    _consistent = model_validator(mode="after")(checks.consistent_cluster)
