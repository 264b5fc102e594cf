"""The cluster-owned view of one accelerator profile, shared by model resolution and the
workload settings other controllers reuse (``manifesto.workload``)."""

from __future__ import annotations

from manifesto.quantity import byte_count
from manifesto.resolve.plan import Accelerator

__all__ = ["project_accelerator"]


def project_accelerator(cluster, name: str) -> Accelerator:
    """Accelerator ``name`` of the validated cluster profile ``cluster`` (it must exist).

    The older profile shape names its extended resource in ``resource_name``; the newer one
    in ``allocation.extended_resource``, or allocates through DRA or Slurm GRES instead, and
    then requests no extended resource at all.
    """
    prof = cluster.accelerators.profiles[name]
    alloc = prof.allocation
    if alloc is None:
        backend, resource = "extended_resource", prof.resource_name
    else:
        backend = alloc.backend
        resource = alloc.extended_resource.resource_name if alloc.extended_resource else None
    return Accelerator(
        name=name, gpus_per_node=prof.gpus_per_node or cluster.gpus_per_node, backend=backend,
        resource_name=resource,
        device_class_name=alloc.dra.device_class_name if alloc and alloc.dra else None,
        gres=alloc.slurm.gres if alloc and alloc.slurm else None,
        presence_label=prof.presence_label, gpu_arch=prof.gpu_arch or name,
        torch_cuda_arch_list=prof.torch_cuda_arch_list, node_selector=dict(prof.node_selector),
        compute_domain_template=prof.compute_domain.resource_claim_template_name if prof.compute_domain else None,
        memory=byte_count(prof.memory) if prof.memory else None,
        hourly_price=float(prof.hourly_price) if prof.hourly_price is not None else None,
    )
