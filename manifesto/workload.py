"""Public API: the cluster-owned settings other GPU workload controllers can reuse.

    from manifesto.cluster import load_cluster
    from manifesto.workload import workload_settings

    settings = workload_settings(load_cluster("clusters/my-cluster.yaml"))
    accelerator = settings.accelerator("gb200")

Callers written for the reference implementation keep working: ``settings.local_queue`` and
``settings.pod`` are read-only aliases of ``queue_name`` and ``placement``; every settings
object has ``model_dump()`` (plain dicts and lists); ``accelerator("any")`` is the cluster's
default accelerator; an unknown accelerator raises IncompatiblePairError, which is also a
ValueError.

The projection is portable: accelerator resource or DRA DeviceClass names, node selectors,
the default Kueue LocalQueue, accelerator-attached platform claims (name and template
reference only, such as the IMEX ``compute-domain-channel``), and pod placement defaults.
Storage, the rest of the fabric configuration and launch settings stay in Manifesto's
serving-specific cluster model.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from manifesto.resolve.names import COMPUTE_DOMAIN_CLAIM

__all__ = [
    "COMPUTE_DOMAIN_CLAIM", "PlatformClaim", "PodPlacement", "AcceleratorSettings", "WorkloadSettings",
    "workload_settings",
]

#: The accelerator name that means "the cluster's default" (the reference's spelling).
ANY_ACCELERATOR = "any"


def _plain(value):
    """``value`` as plain data: settings objects become dicts, tuples lists; mappings are copied."""
    if isinstance(value, _Dumpable):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class _Dumpable:
    """``model_dump()`` as pydantic models spell it: the public fields as plain data."""

    __slots__ = ()

    def model_dump(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.repr}


@dataclass(frozen=True)
class PlatformClaim(_Dumpable):
    """A pod resource claim the cluster attaches to every pod using an accelerator."""

    name: str
    resource_claim_template_name: str


@dataclass(frozen=True)
class PodPlacement(_Dumpable):
    """Cluster pod defaults that are not tied to an accelerator."""

    affinity: dict[str, Any] | None = None
    tolerations: tuple[dict[str, Any], ...] = ()
    dns_policy: str | None = None
    dns_config: dict[str, Any] | None = None
    annotations: dict[str, str] = field(default_factory=dict)
    image_pull_policy: str | None = None
    image_pull_secrets: tuple[str, ...] = ()


@dataclass(frozen=True)
class AcceleratorSettings(_Dumpable):
    """One accelerator profile of a cluster, as a GPU workload needs it.

    ``backend`` is ``extended_resource`` (request ``resource_name``) or ``dra`` (claim
    ``device_class_name`` through a ResourceClaimTemplate). ``node_selector`` merges the
    cluster's pod_defaults.node_selector, the presence label and the profile's own selector.
    """

    name: str
    backend: str
    resource_name: str | None
    device_class_name: str | None
    gpus_per_node: int
    node_selector: dict[str, str]
    queue_name: str | None
    priority_class: str | None
    claims: tuple[PlatformClaim, ...]
    placement: PodPlacement


@dataclass(frozen=True)
class WorkloadSettings(_Dumpable):
    """The portable projection of a Kubernetes cluster profile."""

    cluster_name: str
    platform: str
    default_accelerator: str
    accelerators: dict[str, AcceleratorSettings]
    queue_name: str | None
    priority_class: str | None
    placement: PodPlacement
    where: Any = field(default=None, repr=False, compare=False)

    @property
    def local_queue(self) -> str | None:
        """The reference's name of :attr:`queue_name` (read-only)."""
        return self.queue_name

    @property
    def pod(self) -> PodPlacement:
        """The reference's name of :attr:`placement` (read-only)."""
        return self.placement

    def accelerator(self, name: str | None = None) -> AcceleratorSettings:
        """The named accelerator profile; the cluster's default without a name or for
        ``"any"`` (unless the cluster declares a profile of that name)."""
        from manifesto.errors import IncompatiblePairError

        chosen = name or self.default_accelerator
        if chosen == ANY_ACCELERATOR and chosen not in self.accelerators:
            chosen = self.default_accelerator
        if chosen not in self.accelerators:
            origin = self.where(("accelerators", "profiles")) if self.where else None
            raise IncompatiblePairError(
                f"'{chosen}' is not offered by cluster '{self.cluster_name}'; it offers: "
                + ", ".join(sorted(self.accelerators)), origin, "accelerators.profiles")
        return self.accelerators[chosen]


def _placement(profile) -> PodPlacement:
    pd = profile.pod_defaults
    return PodPlacement(
        affinity=pd.affinity, tolerations=tuple(pd.tolerations), dns_policy=pd.dns_policy, dns_config=pd.dns_config,
        annotations=dict(pd.annotations), image_pull_policy=pd.image_pull_policy,
        image_pull_secrets=tuple(pd.image_pull_secrets),
    )


def _accelerator(profile, name: str, placement: PodPlacement) -> AcceleratorSettings:
    from manifesto.resolve.accelerator import project_accelerator

    acc = project_accelerator(profile, name)
    selector = dict(profile.pod_defaults.node_selector)
    if acc.presence_label:
        selector[acc.presence_label] = "true"
    selector.update(acc.node_selector)
    claims = ((PlatformClaim(COMPUTE_DOMAIN_CLAIM, acc.compute_domain_template),)
              if acc.compute_domain_template else ())
    kueue = profile.kueue
    return AcceleratorSettings(
        name=name, backend=acc.backend, resource_name=acc.resource_name, device_class_name=acc.device_class_name,
        gpus_per_node=acc.gpus_per_node, node_selector=dict(sorted(selector.items())),
        queue_name=kueue.local_queue if kueue else None, priority_class=kueue.priority_class if kueue else None,
        claims=claims, placement=placement,
    )


def workload_settings(cluster) -> WorkloadSettings:
    """Project a loaded Kubernetes cluster (``manifesto.cluster.load_cluster``) for workload controllers."""
    from manifesto.errors import ResolveError

    profile = cluster.profile
    if profile.platform == "slurm":
        raise ResolveError(f"cluster '{profile.name}' is a Slurm cluster; workload settings describe "
                           "Kubernetes placement", cluster.where(("platform",)), "platform")
    placement = _placement(profile)
    kueue = profile.kueue
    return WorkloadSettings(
        cluster_name=profile.name, platform=profile.platform, default_accelerator=profile.accelerators.default,
        accelerators={n: _accelerator(profile, n, placement) for n in profile.accelerators.profiles},
        queue_name=kueue.local_queue if kueue else None, priority_class=kueue.priority_class if kueue else None,
        placement=placement, where=cluster.where,
    )
