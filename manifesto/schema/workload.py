"""The controller-neutral workload IR: a pod template plus lifecycle policy, lowered per backend.

A workload names its backend (``job``, ``deployment``, ``leaderworkerset``; ``grove`` is
reserved), embeds a Kubernetes PodTemplateSpec, and says how many accelerators which
container needs. Cluster placement, accelerator allocation and Kueue metadata are applied
by ``manifesto.render.k8s.workload`` from the cluster profile, so the IR stays portable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from manifesto.errors import show_value
from manifesto.schema.base import DnsLabel, FieldError, PositiveInt, Strict, default_of

__all__ = [
    "BACKENDS", "WorkloadMetadata", "JobPolicy", "DeploymentPolicy", "LeaderWorkerSetPolicy",
    "ServicePort", "ServiceSpec", "Workload", "container_names",
]

BACKENDS = ("job", "deployment", "leaderworkerset", "grove")


def _non_negative(value: int) -> int:
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


NonNegativeInt = Annotated[int, AfterValidator(_non_negative)]


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

    @model_validator(mode="after")
    def _indexed(self) -> "JobPolicy":
        if self.completion_mode == "Indexed" and self.completions is None:
            raise FieldError(("completion_mode",), "an Indexed Job needs completions: the number of indexes")
        return self


class DeploymentPolicy(Strict):
    replicas: NonNegativeInt = 1


class LeaderWorkerSetPolicy(Strict):
    size: PositiveInt = Field(description="Pods per group: the leader plus size-1 workers.")
    replicas: NonNegativeInt = 1


def _port(value: int) -> int:
    if not 1 <= value <= 65535:
        raise ValueError(f"{value} is not a port number (1-65535)")
    return value


Port = Annotated[int, AfterValidator(_port)]


class ServicePort(Strict):
    name: DnsLabel | None = None
    port: Port
    target_port: Port | str | None = None
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"


class ServiceSpec(Strict):
    type: Literal["normal", "headless"] = "normal"
    ports: list[ServicePort] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ports(self) -> "ServiceSpec":
        if self.type == "normal" and not self.ports:
            raise FieldError(("ports",), "a normal (ClusterIP) Service needs at least one port; "
                             "use type: headless for a DNS-only Service")
        names = [p.name for p in self.ports]
        if len(self.ports) > 1 and None in names:
            raise FieldError(("ports", names.index(None)), "with several ports every port needs a name")
        for i, name in enumerate(names):
            if name is not None and name in names[:i]:
                raise FieldError(("ports", i, "name"), f"port name '{name}' is used twice")
        return self


def _check_pod_template(value: dict[str, Any], where: tuple) -> None:
    """A loose check of an embedded PodTemplateSpec: the shape Manifesto edits, nothing more."""
    for key in value:
        if key not in ("metadata", "spec"):
            raise FieldError(where + (key,), f"unknown key {show_value(key)}; a pod template has metadata and spec")
    metadata = value.get("metadata", {})
    if not isinstance(metadata, dict):
        raise FieldError(where + ("metadata",), f"expected a mapping, got {show_value(metadata)}")
    for part in ("labels", "annotations"):
        entries = metadata.get(part, {})
        if not isinstance(entries, dict):
            raise FieldError(where + ("metadata", part), f"expected a mapping, got {show_value(entries)}")
        for k, v in entries.items():
            if not isinstance(v, str):
                raise FieldError(where + ("metadata", part, k), f"values must be strings; quote {show_value(v)}")
    spec = value.get("spec")
    if not isinstance(spec, dict):
        raise FieldError(where + ("spec",), "a pod template needs spec: a PodSpec with containers"
                         if spec is None else f"expected a mapping, got {show_value(spec)}")
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise FieldError(where + ("spec", "containers"), "a pod spec needs a non-empty list of containers")
    seen: set[str] = set()
    for i, c in enumerate(containers):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c.get("name"):
            raise FieldError(where + ("spec", "containers", i), "each container needs a name")
        if c["name"] in seen:
            raise FieldError(where + ("spec", "containers", i, "name"), f"container name '{c['name']}' is used twice")
        seen.add(c["name"])


def container_names(template: dict[str, Any]) -> list[str]:
    return [c["name"] for c in template["spec"]["containers"]]


class Workload(Strict):
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

    @model_validator(mode="after")
    def _consistent(self) -> "Workload":
        _check_pod_template(self.pod_template, ("pod_template",))
        if self.leader_template is not None:
            if self.backend != "leaderworkerset":
                raise FieldError(("leader_template",), f"leader_template is for backend: leaderworkerset "
                                 f"(this workload is {self.backend})")
            _check_pod_template(self.leader_template, ("leader_template",))
        for section in ("job", "deployment", "leaderworkerset"):
            if getattr(self, section) is not None and self.backend != section:
                raise FieldError((section,), f"the {section} section needs backend: {section} "
                                 f"(this workload is {self.backend})")
        if self.backend == "leaderworkerset" and self.leaderworkerset is None:
            raise FieldError(("backend",), "backend: leaderworkerset needs a leaderworkerset: {size: N} section")
        if self.accelerator_count or self.accelerator_container is not None:
            self._check_accelerator_container()
        return self

    def _check_accelerator_container(self) -> None:
        templates = [("pod_template", self.pod_template)]
        if self.leader_template is not None:
            templates.append(("leader_template", self.leader_template))
        for key, template in templates:
            names = container_names(template)
            if self.accelerator_container is None:
                if len(names) != 1:
                    raise FieldError(("accelerator_count",) if key == "pod_template" else (key,),
                                     f"{key} has {len(names)} containers ({', '.join(names)}); "
                                     "name the one that gets the accelerators in accelerator_container")
            elif self.accelerator_container not in names:
                raise FieldError(("accelerator_container",), f"'{self.accelerator_container}' is not a container "
                                 f"of {key}; its containers: {', '.join(names)}")

    def gpu_container(self) -> str | None:
        """The container that gets the accelerators, or None when the workload needs none."""
        if not self.accelerator_count:
            return None
        return self.accelerator_container or container_names(self.pod_template)[0]
