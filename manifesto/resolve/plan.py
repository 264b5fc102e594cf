"""The resolved Plan: frozen msgspec Structs that both renderers and ``explain`` consume.

Everything a renderer needs is decided here; renderers only lay it out. Plain dict
fields appear only for opaque Kubernetes fragments copied from the cluster profile
(volume sources, affinity, security contexts); they encode deterministically.
"""

from __future__ import annotations

from typing import Any

import msgspec

import manifesto.resolve.options as _options

__all__ = [
    "Options", "EnvVar", "Arg", "Layout", "Volume", "Mount", "RoleStorage", "PodResources", "Claim",
    "Accelerator", "Placement", "RolePlan", "RoutingPlan", "Size", "ConnectionPoolPlan", "RoutingSizingPlan",
    "IdlePlan", "SlurmPlan", "MemoryFit", "RoleBudget", "Budget", "Plan",
    "encode", "decode", "to_builtins",
]


class _PlanStruct(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=False):
    """Base of every Plan Struct: immutable, strict when decoded from the store, and encoded
    with every field (defaults included) so a stored Plan reads back the same."""


#: Edge inputs to resolution, read once by the CLI or declared in BUILD.yaml: one Struct
#: generated from the single definition of every render option (``manifesto.resolve.options``).
Options = _options.Options


class EnvVar(_PlanStruct):
    """One environment variable of a model container. Exactly one of ``value``, ``field_ref``
    and ``secret`` says where its value comes from."""

    name: str
    value: str | None = None  # a literal value
    field_ref: str | None = None  # a pod field (Kubernetes downward API), e.g. status.podIP
    secret: tuple[str, str] | None = None  # (secret name, key)
    source: str = ""  # which layer set it (manifesto default, spec env, fabric profile...), for explain


class Arg(_PlanStruct):
    """One vLLM argument as it appears on the command line (value None = bare flag)."""

    flag: str  # with its leading dashes, e.g. --max-model-len
    value: str | None = None
    source: str = ""  # which layer set it (manifesto default, spec vllm, role ... computed), for explain
    raw: bool = False  # vllm_raw_args: emitted verbatim, never quoted


class Layout(_PlanStruct):
    """Where GPUs, DP ranks and HTTP endpoints sit for one role (one replica)."""

    tp: int  # tensor-parallel size
    pp: int  # pipeline-parallel size
    dp: int  # data-parallel ranks (1 when data parallelism is off)
    dp_enabled: bool  # the spec turned data parallelism on (even at dp: 1)
    ep: bool  # expert parallelism
    nodes: int  # pods (nodes) per replica
    replicas: int
    gpus_per_pod: int
    gpus_per_node: int
    rank_gpus: int  # tp x pp
    ranks_per_node: int  # DP ranks started by one pod (1 when a rank spans nodes)
    nodes_per_rank: int  # >1 when one rank spans several nodes
    dp_mode: str  # none | internal | external
    launch: str  # single | internal | external-rank | multi-port | independent (dense model: a server per rank)
    serving_nodes: tuple[int, ...]  # node indices that expose HTTP
    public_ports: tuple[int, ...]  # per serving node: ports clients/routers use
    backend_ports: tuple[int, ...]  # per serving node: ports vLLM listens on
    rpc_port: int = 5555  # vLLM's --data-parallel-rpc-port
    supervisor_port: int = 8100  # vLLM's --data-parallel-supervisor-port (multi-port launch)
    # >1: consecutive groups of pods (LWS groups, counted in ``replicas``) that each hold one
    # DP rank and together form one DP world of this many ranks.
    rank_groups: int = 1

    @property
    def total_gpus(self) -> int:
        """GPUs of every pod of every replica of the role."""
        return self.gpus_per_pod * self.nodes * self.replicas


class Volume(_PlanStruct):
    """A pod volume."""

    name: str
    source: dict[str, Any]  # the Kubernetes volume source, e.g. {"persistentVolumeClaim": {...}}


class Mount(_PlanStruct):
    """Where a volume (``name``) is mounted in the model container."""

    name: str
    path: str
    read_only: bool = False
    sub_path: str | None = None


class RoleStorage(_PlanStruct):
    """Volumes, mounts and directories of one role: model weights, compile caches and logs."""

    volumes: tuple[Volume, ...] = ()
    mounts: tuple[Mount, ...] = ()
    log_dir: str | None = None  # where the role's logs go; None: the cluster declares no log filesystem
    cache_dirs: tuple[str, ...] = ()  # JIT/compile caches cleared after a crash
    cleanup_on_crash: bool = False  # clear cache_dirs when a crash is detected at start-up
    marker_dir: str | None = None  # where a running server leaves its crash marker (the JIT cache root)


class PodResources(_PlanStruct):
    """What a model pod requests. Quantities are Kubernetes quantity strings."""

    cpu: str
    memory: str
    gpus: int  # GPUs per pod
    ephemeral_storage: str | None = None
    shm_size: str | None = None  # size of the /dev/shm memory volume
    extra: tuple[tuple[str, str], ...] = ()  # e.g. RDMA extended resources


class Claim(_PlanStruct):
    """A DRA resource claim of the model pods (an NVIDIA ComputeDomain for multi-node NVLink)."""

    name: str
    template: str  # the ResourceClaimTemplate it is made from


class Accelerator(_PlanStruct):
    """The GPU the pair runs on: the cluster profile's accelerator profile the spec or
    --accelerator chose, and how pods ask for it."""

    name: str
    gpus_per_node: int
    backend: str  # extended_resource | dra | slurm
    resource_name: str | None = None  # extended_resource: the resource, e.g. nvidia.com/gpu
    device_class_name: str | None = None  # dra: the DeviceClass of the claim
    gres: str | None = None  # slurm: the --gres name
    presence_label: str | None = None  # a node label that marks nodes with this GPU (selected as "true")
    gpu_arch: str | None = None  # names the compile-cache directory; the spec's cache.gpu_arch wins
    torch_cuda_arch_list: str | None = None  # TORCH_CUDA_ARCH_LIST for vllm-envs builds
    node_selector: dict[str, str] = {}
    compute_domain_template: str | None = None  # a ResourceClaimTemplate for multi-node NVLink
    memory: int | None = None  # bytes of CUDA-visible memory per GPU, for the fit check
    memory_source: str = ""  # the accelerator table's row, or the cluster profile's memory field
    hourly_price: float | None = None  # price of one GPU for one hour (cluster profile)


class Placement(_PlanStruct):
    """Cluster-owned pod defaults applied to every generated PodSpec."""

    node_selector: dict[str, str] = {}
    affinity: dict[str, Any] | None = None
    tolerations: tuple[dict[str, Any], ...] = ()
    annotations: dict[str, str] = {}
    image_pull_secrets: tuple[str, ...] = ()
    image_pull_policy: str | None = None
    termination_grace_period_seconds: int | None = None
    working_dir: str | None = None
    container_security_context: dict[str, Any] | None = None
    security_context: dict[str, Any] | None = None
    dns_policy: str | None = None
    dns_config: dict[str, Any] | None = None
    extra_devices: tuple[str, ...] = ()


class MemoryFit(_PlanStruct):
    """Memory fit of one role on one GPU (see resolve/fit.py for the arithmetic). ``status`` is
    ok, kv-short (the KV cache holds fewer tokens than max_model_len) or unknown (no
    architecture, or an attention kind the arithmetic does not model; ``note`` says which)."""

    status: str
    note: str = ""  # why the status is unknown, or what the arithmetic left out
    source: str = ""  # where the architecture came from (catalog record, config.json)
    gpu_memory: int = 0  # bytes of one GPU
    memory_source: str = ""  # where gpu_memory comes from: the accelerator table or the cluster profile
    utilization: float = 0.0  # vLLM's --gpu-memory-utilization
    headroom: int = 0  # bytes per GPU vLLM keeps back besides weights and KV cache (the sum of overhead_parts)
    # (name, bytes per GPU, derived | calibrated, source) of each term of headroom (resolve/overhead.py)
    overhead_parts: tuple[tuple[str, int, str, str], ...] = ()
    weights: int = 0  # bytes per GPU
    weight_parts: tuple[tuple[str, int], ...] = ()  # (part, bytes per GPU)
    kv_per_token: int = 0  # bytes per token on one GPU; 0 = not modelled
    kv_per_sequence: int = 0  # bytes a sequence holds whatever its length (sliding windows, recurrent states)
    kv_notes: tuple[str, ...] = ()  # the assumptions behind kv_per_token and kv_per_sequence
    kv_dtype: str = ""
    kv_budget: int = 0  # bytes per GPU left for the KV cache
    kv_tokens: int = 0  # tokens the KV budget holds
    max_model_len: int = 0  # the role's --max-model-len (0: unknown)
    layout: str = ""  # how the weights are split, e.g. "tp=2 pp=1 ep=16"


class RolePlan(_PlanStruct):
    """One role of the spec (aggregated, prefill, decode...) as it will run: its workload,
    layout, container and pod settings, everything a renderer writes for it."""

    name: str  # the spec's role name
    workload_name: str  # the Deployment or LeaderWorkerSet (instance-role, or the spec's own name)
    workload_kind: str  # Deployment | LeaderWorkerSet
    layout: Layout
    image: str  # the vLLM image
    args: tuple[Arg, ...]  # vLLM arguments, in command-line order
    env: tuple[EnvVar, ...]  # sorted by name
    resources: PodResources
    storage: RoleStorage
    claims: tuple[Claim, ...]
    features: tuple[str, ...]  # the closed feature set (resolve/features.py), sorted
    backends: tuple[tuple[str, str], ...]  # (kind, backend), e.g. ("kv-connector", "NixlConnector")
    fabric_profile: str | None  # the cluster's fabric profile whose variables the role gets
    pre_launch: tuple[str, ...]  # shell lines run before vLLM starts: spec, CLI, then role
    labels: dict[str, str]  # pod labels
    selector: dict[str, str]  # the workload's label selector
    routing_label: str | None  # llm-d.ai/role value when routed
    proxy: bool  # P/D routing sidecar in front of vLLM
    same_topology_key: str | None = None  # LeaderWorkerSet: keep a group's pods within this node label's value
    vllm_env: str | None = None  # a vllm-envs worktree vLLM runs from, instead of the image's vLLM
    fit: MemoryFit | None = None


class RoutingPlan(_PlanStruct):
    """llm-d routing in front of the model servers: the endpoint picker's configuration and
    the role it routes to."""

    kind: str  # load_aware | pd
    target_role: str  # the role clients reach (decode under P/D)
    frontend: str  # standalone | gateway
    config_files: tuple[tuple[str, str], ...]  # (file name, YAML text)
    config_file: str  # which one the EPP loads
    profile_source: str  # where the config came from
    config_data: str = "null"  # the selected file's data as JSON, for renderers that edit it
    # Alpha plugin types of the selected config (from the pinned router's table): the picker
    # starts only with --allow-experimental-plugins, which the renderers then pass.
    experimental_plugins: tuple[str, ...] = ()


class Size(_PlanStruct):
    """CPU and memory requests of one component (Kubernetes quantities)."""

    cpu: str
    memory: str


class ConnectionPoolPlan(_PlanStruct):
    """Istio connection-pool limits of the Gateway's DestinationRules (names as in Istio's
    ConnectionPoolSettings, snake_case)."""

    max_connections: int
    http1_max_pending_requests: int
    http2_max_requests: int
    max_requests_per_connection: int
    idle_timeout: str  # a duration such as 900s


class RoutingSizingPlan(_PlanStruct):
    """Requests of the routing components (cluster llm_d.sizing over production defaults)."""

    endpoint_picker: Size
    envoy: Size  # the standalone Envoy in front of the picker
    envoy_concurrency: int  # Envoy worker threads
    envoy_buffer_limit: str  # a Kubernetes quantity
    routing_sidecar: Size  # the P/D sidecar of the decode pods
    gateway_proxy: Size  # the Gateway's proxy (Istio) when the frontend is a Gateway
    gateway_connection_pool: ConnectionPoolPlan
    envoy_circuit_limit: int = 40000  # circuit-breaker thresholds of Envoy's picker and model-server clusters


class IdlePlan(_PlanStruct):
    """Idle shutdown: scale the instance to zero after ``timeout_minutes`` without requests."""

    enabled: bool
    timeout_minutes: int
    explicit: bool = False  # asked for by the spec or the CLI, not just the default
    flag: str | None = None  # the CLI flag that asked for it when the spec alone did not


class SlurmPlan(_PlanStruct):
    """The batch job of a Slurm cluster (its profile's ``slurm:`` section, defaults filled in).
    partition, account, qos, constraint, time and exclusive are sbatch's options of those names."""

    partition: str | None
    account: str | None
    qos: str | None
    constraint: str | None
    time: str
    runtime: str  # how the images run: apptainer | singularity | pyxis | native
    exclusive: bool
    binds: tuple[tuple[str, str, bool], ...]  # (host path, container path, read-only)
    setup: tuple[str, ...]  # shell lines the batch script runs first (modules, environment)
    ssh_host: str | None  # submit over ssh to this login node; None: sbatch runs locally
    port: int  # the llm-d router's port on the first node of the allocation
    router_cpus: int  # of the routing components' job step
    router_memory: str
    proxy_cpus: int  # of the P/D sidecar's job step
    proxy_memory: str


class RoleBudget(_PlanStruct):
    """What one role occupies, across all its replicas."""

    role: str
    gpus: int
    nodes: int  # nodes the role occupies (one pod per node)
    pods: int
    hourly_cost: float | None = None  # of the role's GPUs, when the cluster profile prices them


class Budget(_PlanStruct):
    """GPUs, nodes and pods of one artifact, per role and in total; cost when the cluster
    profile prices its accelerator."""

    roles: tuple[RoleBudget, ...]
    gpus: int
    nodes: int
    pods: int
    accelerator: str
    hourly_price: float | None = None  # per GPU
    hourly_cost: float | None = None  # of the whole artifact


class Plan(_PlanStruct):
    """Everything decided about one (spec, cluster) pair: the single input of both renderers
    and ``explain``. A renderer only lays it out; it makes no choice of its own."""

    instance: str  # the instance name: release, with the user's prefix when the cluster asks for one
    release: str  # the spec's release name
    user: str
    namespace: str
    platform: str  # kubernetes | openshift | slurm
    cluster: str  # the cluster profile's name
    topology: str  # the spec's topology (aggregated, pd, ...)
    model_id: str  # the Hugging Face model id
    model_label: str | None  # the spec's short name for the model (labels); None: the id's last part
    revision: str | None  # the model revision vLLM loads
    accelerator: Accelerator
    placement: Placement
    roles: tuple[RolePlan, ...]  # in the spec's order
    routing: RoutingPlan | None  # None: no llm-d routing
    idle: IdlePlan
    sidecars: tuple[str, ...]  # monitoring sidecars of the model pods (dcgm-exporter, node-exporter)
    labels: dict[str, str]  # labels of every object of the instance
    images: dict[str, str]  # support images by catalog key (llm_d.epp, sidecars.x, test.x), releases filled in
    stateless: bool  # no role mounts a volume
    kueue_queue: str | None = None  # Kueue LocalQueue the workloads are admitted through
    kueue_priority_class: str | None = None
    gateway_class: str | None = None  # GatewayClass of a gateway frontend
    gateway_service_type: str | None = None  # Service type of the Gateway (ClusterIP, LoadBalancer)
    openshift_scc: str | None = None  # the SecurityContextConstraints the pods run under
    # The shared model-cache PVC to create: name, storage_class, access_modes, size.
    shared_claim: dict[str, Any] | None = None
    slurm: SlurmPlan | None = None  # set on Slurm clusters only
    routing_sizing: RoutingSizingPlan | None = None
    budget: Budget | None = None
    sync_waves: bool = False  # Argo CD sync-wave annotations on every object (--argocd-sync-waves)
    # The DisaggregatedSet (its name) that holds every role, or None: one workload per role.
    pd_set: str | None = None

    def role(self, name: str) -> RolePlan:
        """The role called ``name`` (it must exist)."""
        return next(r for r in self.roles if r.name == name)


def encode(plan: Plan) -> bytes:
    """The Plan as msgpack with maps in a fixed order: the same Plan always gives the same bytes."""
    return msgspec.msgpack.encode(plan, order="deterministic")


def decode(data: bytes) -> Plan:
    """A Plan from :func:`encode`'s bytes (strict: an unknown field is an error)."""
    return msgspec.msgpack.decode(data, type=Plan)


def to_builtins(plan: Any) -> Any:
    """A Plan (or any part of one) as dicts, lists and scalars, maps in a fixed order."""
    return msgspec.to_builtins(plan, order="deterministic")
