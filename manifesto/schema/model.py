"""The model spec: what to serve (model, roles, parallelism, routing, vLLM args)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from manifesto.util import rules
from manifesto.schema import checks
from manifesto.schema.checks import SIDECARS  # the values of Runtime.sidecars
from manifesto.schema.routing import EndpointPickerConfig
from manifesto.schema.base import (
    Bytes, Count, DnsLabel, EnvMap, LabelKey, Number, PathSegment, Quantity, Scalar, ServiceName, Strict,
    default_of, item_rule, key_rule, rule,
)

__all__ = [
    "ModelRef", "Lws", "Parallelism", "Computed", "Resources", "Profiling", "Role",
    "Routing", "IdleShutdown", "Runtime", "SpecCache", "Fit", "ModelSpec", "SIDECARS",
]

VllmMap = Annotated[dict[str, Any], key_rule(rules.vllm_flag_key, "flag")]


class ModelRef(Strict):
    id: Annotated[str, rule(rules.one_word)] = Field(description="Hugging Face repository id, passed to `vllm serve`.")
    label: str | None = Field(None, description="Short display name.")
    image_ref: str | None = Field(None, description="Key in catalog/images.yaml, e.g. vllm.standard.")
    image: str | None = Field(None, description="Explicit one-off container image.")
    revision: Annotated[str, rule(rules.one_word)] | None = Field(None, description="Branch, tag or commit; rendered as --revision.")
    config_json: Annotated[str, rule(rules.one_word)] | None = Field(
        None, description="The model's config.json (a path, relative to this spec file), for the memory-fit check "
                          "of a model the bundled architecture catalog does not know.")

    _one_image = model_validator(mode="after")(checks.one_image)


class Lws(Strict):
    size: Count = Field(1, description="Nodes (pods) per serving replica.")
    replicas: Count = Field(1, description="Serving replicas (LWS groups / Deployment replicas).")
    same_topology_key: LabelKey | None = Field(
        None, description="Node label that all pods of one replica must share (e.g. nvidia.com/gpu.clique)."
    )


class Parallelism(Strict, checks.ParallelismMixin):
    tp: Count = Field(1, description="Global tensor-parallel size.")
    pp: Count = Field(1, description="Global pipeline-parallel size.")
    dp: Annotated[Any, AfterValidator(checks.data_parallel)] = Field(
        False, description="Global data-parallel size, or false to disable.")
    ep: bool = Field(False, description="Enable expert parallelism for MoE layers.")


class Computed(Strict):
    env: Annotated[dict[str, Scalar], key_rule(rules.env_name, "variable name")] = Field(
        default_factory=dict, description="Env vars computed from vars.")
    vllm: VllmMap = Field(default_factory=dict, description="vLLM args computed from vars.")


class Resources(Strict):
    cpu: Quantity | None = None
    memory: Bytes | None = None
    gpus: Count | None = Field(None, description="Optional check: must equal the derived GPUs per pod.")
    ephemeral_storage: Bytes | None = None
    shm_size: Bytes | None = None


class Profiling(Strict):
    """vLLM's ``--profiler-config`` (ProfilerConfig of vLLM 0.33.0); unset fields keep vLLM's defaults."""

    profiler: Literal["torch", "cuda"] = "torch"
    torch_profiler_dir: str | None = None
    torch_profiler_with_stack: bool | None = None
    torch_profiler_record_shapes: bool | None = None
    torch_profiler_with_memory: bool | None = None
    torch_profiler_with_flops: bool | None = None
    capture_torch_profiler: bool | None = None
    detailed_trace_annotation: bool | None = None
    ignore_frontend: bool | None = None
    delay_iterations: int | None = None
    max_iterations: int | None = None
    warmup_iterations: Annotated[int, AfterValidator(checks.AtLeast(0))] | None = None
    active_iterations: Annotated[int, AfterValidator(checks.AtLeast(1))] | None = None
    wait_iterations: Annotated[int, AfterValidator(checks.AtLeast(0))] | None = None


class Role(Strict):
    name: DnsLabel
    workload_name: ServiceName | None = None
    workload: Literal["deployment", "leaderworkerset"] | None = None
    lws: Lws = default_of(Lws)
    parallelism: Parallelism = default_of(Parallelism)
    computed: Computed = default_of(Computed)
    env: EnvMap = Field(default_factory=dict)
    vllm: VllmMap = Field(default_factory=dict)
    vllm_raw_args: Annotated[list[str], item_rule(rules.shell_fragment, "")] = Field(
        default_factory=list, description="Trusted shell words appended to `vllm serve` (one line each).")
    resources: Resources = default_of(Resources)
    kv_transfer_config: dict[str, Any] | None = None
    fabric_profile: str | None = None
    pre_launch: Annotated[list[str], BeforeValidator(checks.one_or_many)] = Field(default_factory=list)
    profiling: Profiling | None = None


class Routing(Strict):
    kind: Literal["disabled", "load_aware", "pd"] = "disabled"
    target_role: str | None = None
    frontend: Literal["standalone", "gateway"] = "standalone"
    plugin_config: dict[str, Any] | None = Field(None, description="Inline EndpointPickerConfig (plugins.yaml).")
    plugin_configs: dict[str, dict[str, Any]] | None = Field(None, description="Several named EPP config files.")
    plugins_config_file: str | None = Field(None, description="Which plugin_configs entry the EPP loads.")

    _configs = model_validator(mode="after")(checks.routing_configs)


class IdleShutdown(Strict):
    enabled: bool = True
    timeout_minutes: Count = 45


class Runtime(Strict):
    sidecars: list[Literal["dcgm-exporter", "node-exporter"]] | None = Field(
        None, description="Per-pod monitoring exporters; left out: both on Kubernetes, dcgm-exporter on OpenShift, "
        "none on Slurm. [] turns them off.")
    idle_shutdown: IdleShutdown | None = None
    vllm_env: str | None = Field(None, description="Absolute path of an existing vllm-envs worktree.")
    pre_launch: Annotated[list[str], BeforeValidator(checks.one_or_many)] = Field(default_factory=list)


class SpecCache(Strict):
    key: PathSegment | None = Field(None, description="Force a compiled-cache namespace (default: image tag/digest).")
    cleanup_on_crash: bool = True
    gpu_arch: PathSegment | None = Field(None, description="Override the accelerator's gpu_arch in cache paths.")


class Fit(Strict):
    check: bool = Field(True, description="Check that each role's weights and KV cache fit its GPUs.")
    short_kv_cache: Literal["warn", "refuse"] = Field(
        "refuse", description="When the KV cache holds fewer tokens than max_model_len (vLLM refuses to start): "
                              "refuse the render, or only warn in explain (for a model the arithmetic misjudges).")


class ModelSpec(Strict):
    # Fields whose strings may span lines (shell hooks, env values, JSON arguments); see load.scan_values.
    MULTILINE: ClassVar[frozenset[str]] = frozenset(
        {"pre_launch", "env", "vllm", "kv_transfer_config", "plugin_config", "plugin_configs"})
    EMBEDDED: ClassVar[tuple] = ((("routing", "plugin_config"), EndpointPickerConfig),
                                 (("routing", "plugin_configs", "*"), EndpointPickerConfig))

    release: ServiceName
    topology: Literal["aggregated", "pd"] = "aggregated"
    pd_workload: Literal["auto", "lws-pair", "disaggregatedset"] = Field(
        "auto", description="How a pd topology's LeaderWorkerSet roles reach Kubernetes: one DisaggregatedSet "
        "(LeaderWorkerSet 0.10 or newer; prefill and decode roll out together), a pair of LeaderWorkerSets, or "
        "auto: the DisaggregatedSet when the cluster profile declares leaderworkerset.version 0.10 or newer.")
    accelerator: str | None = None
    model: ModelRef
    vars: dict[str, Number] = Field(default_factory=dict, description="Numbers that computed expressions may name.")
    env: EnvMap = Field(default_factory=dict, description="Env shared by every role.")
    vllm: VllmMap = Field(default_factory=dict, description="vLLM args shared by every role.")
    roles: Annotated[list[Role], Field(min_length=1), AfterValidator(checks.unique_roles)]
    routing: Routing | None = None
    runtime: Runtime = default_of(Runtime)
    cache: SpecCache = default_of(SpecCache)
    fit: Fit = default_of(Fit, description="Memory-fit check of every role.")
