"""The controller-neutral workload IR: a pod template plus lifecycle policy, lowered per backend.

A workload names its backend (``job``, ``deployment``, ``leaderworkerset``; ``grove`` is
reserved), embeds a Kubernetes PodTemplateSpec, and says how many accelerators which
container needs. Cluster placement, accelerator allocation and Kueue metadata are applied
by ``manifesto.render.k8s.workload`` from the cluster profile, so the IR stays portable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from manifesto.schema import checks
from manifesto.schema.base import DnsLabel, PositiveInt, Strict, default_of
from manifesto.schema.checks import container_names

__all__ = [
    "BACKENDS", "WorkloadMetadata", "JobPolicy", "DeploymentPolicy", "LeaderWorkerSetPolicy",
    "ServicePort", "ServiceSpec", "Workload", "container_names",
]

BACKENDS = ("job", "deployment", "leaderworkerset", "grove")


NonNegativeInt = Annotated[int, AfterValidator(checks.zero_or_more)]


class WorkloadMetadata(Strict):
    labels: dict[str, str] = Field(default_factory=dict, description="Labels of the workload object.")
    annotations: dict[str, str] = Field(default_factory=dict, description="Annotations of the workload object.")


class JobPolicy(Strict):
    suspend: bool | None = Field(None, description="Create the Job suspended (always true when queued in Kueue).")
    backoff_limit: NonNegativeInt | None = None
    active_deadline_seconds: PositiveInt | None = None
    ttl_seconds_after_finished: NonNegativeInt | None = None
    completion_mode: Literal["NonIndexed", "Indexed"] = "NonIndexed"
    completions: PositiveInt | None = None
    parallelism: NonNegativeInt | None = None

    _indexed = model_validator(mode="after")(checks.indexed_job)


class DeploymentPolicy(Strict):
    replicas: NonNegativeInt = 1


class LeaderWorkerSetPolicy(Strict):
    size: PositiveInt = Field(description="Pods per group: the leader plus size-1 workers.")
    replicas: NonNegativeInt = 1


Port = Annotated[int, AfterValidator(checks.port_number)]


class ServicePort(Strict):
    name: DnsLabel | None = None
    port: Port
    target_port: Port | str | None = None
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"


class ServiceSpec(Strict):
    type: Literal["normal", "headless"] = "normal"
    ports: list[ServicePort] = Field(default_factory=list)

    _ports = model_validator(mode="after")(checks.service_ports)


class Workload(Strict, checks.WorkloadMixin):
    name: DnsLabel
    backend: Literal["job", "deployment", "leaderworkerset", "grove"]
    metadata: WorkloadMetadata = default_of(WorkloadMetadata)
    pod_template: dict[str, Any] = Field(description="A Kubernetes PodTemplateSpec (metadata, spec).")
    leader_template: dict[str, Any] | None = Field(
        None, description="LeaderWorkerSet only: the leader's PodTemplateSpec, same-shaped as pod_template.")
    accelerator_count: NonNegativeInt = 0
    accelerator_container: str | None = Field(
        None, description="Container that gets the accelerators (default: the only container).")
    queue_name: str | None = Field(None, description="Kueue LocalQueue (default: the cluster's kueue.local_queue).")
    job: JobPolicy | None = None
    deployment: DeploymentPolicy | None = None
    leaderworkerset: LeaderWorkerSetPolicy | None = None
    service: ServiceSpec | None = None

    _consistent = model_validator(mode="after")(checks.consistent_workload)
