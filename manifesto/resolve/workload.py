"""Resolve a validated controller-neutral workload (``manifesto.schema.workload``) into the
frozen plan its Kubernetes lowering consumes, with every default applied."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["JobPlan", "ServicePortPlan", "ServicePlan", "WorkloadPlan", "plan_workload"]


class _WorkloadStruct(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Base of the workload plan's Structs: immutable and strict."""


class JobPlan(_WorkloadStruct):
    """The Job policy of a ``job`` workload; each field is the batch/v1 Job field of that name
    (snake_case), None where Kubernetes' default applies. Kueue creates a queued Job suspended."""

    suspend: bool | None = None
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None
    ttl_seconds_after_finished: int | None = None
    completion_mode: str = "NonIndexed"
    completions: int | None = None
    parallelism: int | None = None


class ServicePortPlan(_WorkloadStruct):
    """One port of the workload's Service."""

    port: int
    protocol: str  # TCP | UDP | SCTP
    name: str | None = None
    target_port: int | str | None = None  # the container port (a number or its name); None: the same as port


class ServicePlan(_WorkloadStruct):
    """The Service in front of the workload's pods."""

    type: str  # normal | headless
    ports: tuple[ServicePortPlan, ...] = ()


class WorkloadPlan(_WorkloadStruct):
    """A controller-neutral workload with its backend's policies and every default applied:
    the input of its Kubernetes lowering."""

    name: str
    backend: str  # job | deployment | leaderworkerset | grove
    pod_template: dict[str, Any]  # a Kubernetes PodTemplateSpec (metadata, spec)
    labels: dict[str, str] = {}  # of the workload object
    annotations: dict[str, str] = {}  # of the workload object
    leader_template: dict[str, Any] | None = None  # LeaderWorkerSet: the leader's PodTemplateSpec
    accelerator_count: int = 0  # GPUs the gpu_container gets
    gpu_container: str | None = None  # the container that gets the accelerators
    queue_name: str | None = None  # Kueue LocalQueue
    job: JobPlan = JobPlan()
    replicas: int = 1  # Deployment replicas, or LeaderWorkerSet groups
    group_size: int | None = None  # LeaderWorkerSet pods per group
    service: ServicePlan | None = None


def plan_workload(workload) -> WorkloadPlan:
    """The plan of a validated ``Workload``: policies of its backend only, defaults filled in."""
    job = JobPlan(**workload.job.model_dump()) if workload.job is not None else JobPlan()
    replicas, size = 1, None
    if workload.deployment is not None:
        replicas = workload.deployment.replicas
    if workload.leaderworkerset is not None:
        replicas, size = workload.leaderworkerset.replicas, workload.leaderworkerset.size
    service = None
    if workload.service is not None:
        ports = tuple(ServicePortPlan(port=p.port, protocol=p.protocol, name=p.name, target_port=p.target_port)
                      for p in workload.service.ports)
        service = ServicePlan(type=workload.service.type, ports=ports)
    return WorkloadPlan(
        name=workload.name, backend=workload.backend, pod_template=workload.pod_template,
        labels=dict(workload.metadata.labels), annotations=dict(workload.metadata.annotations),
        leader_template=workload.leader_template, accelerator_count=workload.accelerator_count,
        gpu_container=workload.gpu_container(), queue_name=workload.queue_name, job=job,
        replicas=replicas, group_size=size, service=service,
    )
