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
    "Options", "EnvVar", "Arg", "Layout", "Volume", "Mount", "Storage", "Resources", "Claim",
    "Accelerator", "Placement", "RolePlan", "RoutingPlan", "Size", "ConnectionPool", "RoutingSizing", "IdlePlan",
    "SlurmPlan", "Fit", "RoleBudget", "Budget", "Plan",
    "encode", "decode", "to_builtins",
]


class _S(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=False):
    pass


#: Edge inputs to resolution, read once by the CLI or declared in BUILD.yaml: one Struct
#: generated from the single definition of every render option (``manifesto.resolve.options``).
Options = _options.Options


class EnvVar(_S):
    name: str
    value: str | None = None
    field_ref: str | None = None
    secret: tuple[str, str] | None = None  # (secret name, key)
    source: str = ""


class Arg(_S):
    """One vLLM argument as it appears on the command line (value None = bare flag)."""

    flag: str
    value: str | None = None
    source: str = ""
    raw: bool = False  # vllm_raw_args: emitted verbatim, never quoted


class Layout(_S):
    """Where GPUs, DP ranks and HTTP endpoints sit for one role (one replica)."""

    tp: int
    pp: int
    dp: int
    dp_enabled: bool
    ep: bool
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
    rpc_port: int = 5555
    supervisor_port: int = 8100
    # >1: consecutive groups of pods (LWS groups, counted in ``replicas``) that each hold one
    # DP rank and together form one DP world of this many ranks.
    rank_groups: int = 1

    @property
    def total_gpus(self) -> int:
        return self.gpus_per_pod * self.nodes * self.replicas


class Volume(_S):
    name: str
    source: dict[str, Any]


class Mount(_S):
    name: str
    path: str
    read_only: bool = False
    sub_path: str | None = None


class Storage(_S):
    volumes: tuple[Volume, ...] = ()
    mounts: tuple[Mount, ...] = ()
    log_dir: str | None = None
    cache_dirs: tuple[str, ...] = ()  # JIT/compile caches cleared after a crash
    cleanup_on_crash: bool = False
    marker_dir: str | None = None


class Resources(_S):
    cpu: str
    memory: str
    gpus: int
    ephemeral_storage: str | None = None
    shm_size: str | None = None
    extra: tuple[tuple[str, str], ...] = ()  # e.g. RDMA extended resources


class Claim(_S):
    name: str
    template: str


class Accelerator(_S):
    name: str
    gpus_per_node: int
    backend: str  # extended_resource | dra | slurm
    resource_name: str | None = None
    device_class_name: str | None = None
    gres: str | None = None
    presence_label: str | None = None
    gpu_arch: str | None = None
    torch_cuda_arch_list: str | None = None
    node_selector: dict[str, str] = {}
    compute_domain_template: str | None = None
    memory: int | None = None  # bytes of CUDA-visible memory per GPU, for the fit check
    memory_source: str = ""  # the accelerator table's row, or the cluster profile's memory field
    hourly_price: float | None = None  # price of one GPU for one hour (cluster profile)


class Placement(_S):
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


class Fit(_S):
    """Memory fit of one role on one GPU (see resolve/fit.py for the arithmetic). ``status`` is
    ok, kv-short (the KV cache holds fewer tokens than max_model_len) or unknown (no
    architecture, or an attention kind the arithmetic does not model; ``note`` says which)."""

    status: str
    note: str = ""
    source: str = ""
    gpu_memory: int = 0
    memory_source: str = ""  # where gpu_memory comes from: the accelerator table or the cluster profile
    utilization: float = 0.0
    headroom: int = 0
    weights: int = 0  # bytes per GPU
    weight_parts: tuple[tuple[str, int], ...] = ()  # (part, bytes per GPU)
    kv_per_token: int = 0  # bytes per token on one GPU; 0 = not modelled
    kv_per_sequence: int = 0  # bytes a sequence holds whatever its length (sliding windows, recurrent states)
    kv_notes: tuple[str, ...] = ()  # the assumptions behind kv_per_token and kv_per_sequence
    kv_dtype: str = ""
    kv_budget: int = 0  # bytes per GPU left for the KV cache
    kv_tokens: int = 0
    max_model_len: int = 0
    layout: str = ""  # how the weights are split, e.g. "tp=2 pp=1 ep=16"


class RolePlan(_S):
    name: str
    workload_name: str
    workload_kind: str  # Deployment | LeaderWorkerSet
    layout: Layout
    image: str
    args: tuple[Arg, ...]
    env: tuple[EnvVar, ...]
    resources: Resources
    storage: Storage
    claims: tuple[Claim, ...]
    features: tuple[str, ...]
    backends: tuple[tuple[str, str], ...]
    fabric_profile: str | None
    pre_launch: tuple[str, ...]
    labels: dict[str, str]
    selector: dict[str, str]
    routing_label: str | None  # llm-d.ai/role value when routed
    proxy: bool  # P/D routing sidecar in front of vLLM
    same_topology_key: str | None = None
    vllm_env: str | None = None
    fit: Fit | None = None


class RoutingPlan(_S):
    kind: str  # load_aware | pd
    target_role: str
    frontend: str  # standalone | gateway
    config_files: tuple[tuple[str, str], ...]  # (file name, YAML text)
    config_file: str  # which one the EPP loads
    profile_source: str  # where the config came from
    config_data: str = "null"  # the selected file's data as JSON, for renderers that edit it
    # Alpha plugin types of the selected config (from the pinned router's table): the picker
    # starts only with --allow-experimental-plugins, which the renderers then pass.
    experimental_plugins: tuple[str, ...] = ()


class Size(_S):
    cpu: str
    memory: str


class ConnectionPool(_S):
    """Istio connection-pool limits of the Gateway's DestinationRules (names as in Istio's
    ConnectionPoolSettings, snake_case)."""

    max_connections: int
    http1_max_pending_requests: int
    http2_max_requests: int
    max_requests_per_connection: int
    idle_timeout: str  # a duration such as 900s


class RoutingSizing(_S):
    """Requests of the routing components (cluster llm_d.sizing over production defaults)."""

    endpoint_picker: Size
    envoy: Size
    envoy_concurrency: int
    envoy_buffer_limit: str  # a Kubernetes quantity
    routing_sidecar: Size
    gateway_proxy: Size
    gateway_connection_pool: ConnectionPool
    envoy_circuit_limit: int = 40000  # circuit-breaker thresholds of Envoy's picker and model-server clusters


class IdlePlan(_S):
    enabled: bool
    timeout_minutes: int
    explicit: bool = False  # asked for by the spec or the CLI, not just the default
    flag: str | None = None  # the CLI flag that asked for it when the spec alone did not


class SlurmPlan(_S):
    partition: str | None
    account: str | None
    qos: str | None
    constraint: str | None
    time: str
    runtime: str
    exclusive: bool
    binds: tuple[tuple[str, str, bool], ...]
    setup: tuple[str, ...]
    ssh_host: str | None
    port: int
    router_cpus: int
    router_memory: str
    proxy_cpus: int
    proxy_memory: str


class RoleBudget(_S):
    role: str
    gpus: int
    nodes: int  # nodes the role occupies (one pod per node)
    pods: int
    hourly_cost: float | None = None


class Budget(_S):
    """GPUs, nodes and pods of one artifact, per role and in total; cost when the cluster
    profile prices its accelerator."""

    roles: tuple[RoleBudget, ...]
    gpus: int
    nodes: int
    pods: int
    accelerator: str
    hourly_price: float | None = None  # per GPU
    hourly_cost: float | None = None  # of the whole artifact


class Plan(_S):
    instance: str
    release: str
    user: str
    namespace: str
    platform: str  # kubernetes | openshift | slurm
    cluster: str
    topology: str
    model_id: str
    model_label: str | None
    revision: str | None
    accelerator: Accelerator
    placement: Placement
    roles: tuple[RolePlan, ...]
    routing: RoutingPlan | None
    idle: IdlePlan
    sidecars: tuple[str, ...]
    labels: dict[str, str]
    images: dict[str, str]
    stateless: bool
    kueue_queue: str | None = None
    kueue_priority_class: str | None = None
    gateway_class: str | None = None
    gateway_service_type: str | None = None
    openshift_scc: str | None = None
    shared_claim: dict[str, Any] | None = None
    slurm: SlurmPlan | None = None
    routing_sizing: RoutingSizing | None = None
    budget: Budget | None = None

    def role(self, name: str) -> RolePlan:
        return next(r for r in self.roles if r.name == name)


def encode(plan: Plan) -> bytes:
    return msgspec.msgpack.encode(plan, order="deterministic")


def decode(data: bytes) -> Plan:
    return msgspec.msgpack.decode(data, type=Plan)


def to_builtins(plan: Any) -> Any:
    return msgspec.to_builtins(plan, order="deterministic")
