"""The cluster-owned view of one accelerator profile, shared by model resolution and the
workload settings other controllers reuse (``manifesto.workload``), and the memory CUDA sees
on each accelerator part the table below names.

A GPU's data sheet counts memory in decimal gigabytes of HBM (an H200's "141 GB"), while vLLM
sizes its KV cache from what CUDA reports (``cudaMemGetInfo``'s total, PyTorch's
``total_memory``): about 139.8 GiB on an H200, 8.5 GiB more than 141 GB read as bytes. One chip
family is sold with different memory (an A100 with 40 or 80 GB, an H100 with 80 or 94), so the
table is keyed by the part. The memory-fit check takes, in this order:

* ``part`` set: that part's CUDA figure, unless ``memory`` states another size (below);
* ``memory`` equal to a data-sheet size of a part of the profile's family (``gpu_arch``, else
  the profile's name): ``40G`` on an ``a100`` profile names the A100 40GB, so its CUDA figure
  (39.50 GiB) is used, not 40 x 10^9 bytes (37.25 GiB), and explain says so;
* ``memory`` left out: the family's part when the family has one size; a family with several
  (a100, h100) gets no figure and the fit says which field to set;
* any other ``memory``: taken as the memory CUDA sees, exactly as written. ``G`` is 10^9
  bytes and ``Gi`` 2^30 (Kubernetes quantities): ``139Gi`` is 139 GiB, ``139G`` 129.5 GiB.
"""

from __future__ import annotations

from manifesto.util.quantity import byte_count
from manifesto.resolve.plan import Accelerator

from manifesto.schema.parts import PARTS, Part, part_named  # noqa: F401 (the table, re-exported)

__all__ = ["project_accelerator", "PARTS", "Part", "cuda_memory", "part_named"]


def _family(family: str) -> list[str]:
    return [key for key, row in PARTS.items() if row.family == family.lower()]


def _table_text(key: str) -> str:
    row = PARTS[key]
    return f"CUDA-visible memory of the {key} ({row.basis}): {row.source}"


def cuda_memory(gpu_arch: str, stated: int | None, profile: str, part: str | None = None) -> tuple[int | None, str]:
    """(bytes CUDA sees on one GPU, where that figure comes from) for an accelerator whose profile
    is ``profile``, whose gpu_arch is ``gpu_arch``, whose ``part`` is ``part`` and whose ``memory``
    field is ``stated``. With no figure, the text says why and which field to set."""
    field = f"accelerators.profiles.{profile}.memory"
    key = part_named(part) if part else None
    candidates = [key] if key else _family(gpu_arch)
    if stated is not None:
        named = [k for k in candidates if stated in tuple(gb * 10**9 for gb in PARTS[k].data_sheet_gb)]
        if len(named) == 1:
            return PARTS[named[0]].bytes, f"{field} {stated // 10**9}G is its data-sheet size; {_table_text(named[0])}"
        known = f"; the table's CUDA figure for the {key} is {PARTS[key].gib:.2f} GiB" if key else ""
        decimal = stated % 10**9 == 0 and stated % 1024**3 != 0
        unit = f" ({stated // 10**9}G is {stated / 1024**3:.2f} GiB: G counts 10^9 bytes, Gi 2^30)" if decimal else ""
        return stated, f"{field}, taken as the memory CUDA sees{unit}{known}"
    if len(candidates) == 1:
        return PARTS[candidates[0]].bytes, _table_text(candidates[0])
    if candidates:
        return None, (f"gpu_arch {gpu_arch} is sold as several parts ({', '.join(candidates)}); set "
                      f"accelerators.profiles.{profile}.part to one, or {field} to what CUDA sees")
    return None, (f"gpu_arch {gpu_arch} is not a family of the accelerator table (manifesto/schema/parts.py); "
                  f"set accelerators.profiles.{profile}.part to one of its parts, or {field} to what CUDA sees")


def project_accelerator(cluster, name: str) -> Accelerator:
    """Accelerator ``name`` of the validated cluster profile ``cluster`` (it must exist).

    The older profile shape names its extended resource in ``resource_name``; the newer one
    in ``allocation.extended_resource``, or allocates through DRA or Slurm GRES instead, and
    then requests no extended resource at all.
    """
    prof = cluster.accelerators.profiles[name]
    alloc = prof.allocation
    memory, memory_source = cuda_memory(prof.gpu_arch or name, byte_count(prof.memory) if prof.memory else None,
                                        name, prof.part)
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
        memory=memory, memory_source=memory_source,
        hourly_price=float(prof.hourly_price) if prof.hourly_price is not None else None,
    )
