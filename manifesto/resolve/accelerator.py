"""The cluster-owned view of one accelerator profile, shared by model resolution and the
workload settings other controllers reuse (``manifesto.workload``), and the memory CUDA sees
on each accelerator the catalog names.

A GPU's data sheet counts memory in decimal gigabytes of HBM (an H200's "141 GB"), while vLLM
sizes its KV cache from what CUDA reports (``cudaMemGetInfo``'s total, PyTorch's
``total_memory``): about 139.8 GiB on an H200, 8.5 GiB more than 141 GB read as bytes. The
memory-fit check uses the CUDA figure of ``CUDA_MEMORY`` unless the profile states otherwise:

* ``memory`` left out: the table's figure for the profile's ``gpu_arch`` (else its name);
* ``memory`` equal to one of that accelerator's data-sheet figures (``141G`` for an H200): it
  names the GPU, not what CUDA sees, so the table's figure is used and explain says so;
* any other ``memory`` (``139Gi``, ``20G`` for a GPU shared with something else): taken as the
  memory CUDA sees, exactly as written.
"""

from __future__ import annotations

from manifesto.util.quantity import byte_count
from manifesto.resolve.plan import Accelerator

__all__ = ["project_accelerator", "CUDA_MEMORY", "cuda_memory"]


class CudaMemory:
    """One accelerator's CUDA-visible memory (GiB as PyTorch prints it), the data-sheet figures
    (decimal GB) it is sold as, and where the CUDA figure was read."""

    __slots__ = ("gib", "data_sheet_gb", "source")

    def __init__(self, gib: float, data_sheet_gb: tuple[int, ...], source: str) -> None:
        self.gib, self.data_sheet_gb, self.source = gib, data_sheet_gb, source

    @property
    def bytes(self) -> int:
        return int(self.gib * 1024**3)


# PyTorch's out-of-memory error prints the device's total_memory ("GPU 0 has a total capacity of
# X GiB"), the figure vLLM's gpu_memory_utilization multiplies; each row quotes it from published
# logs of that GPU. Keys are gpu_arch values (lower case).
_OOM = "PyTorch's \"GPU 0 has a total capacity of {} GiB\" (torch.cuda total_memory) in out-of-memory logs of {}"
CUDA_MEMORY: dict[str, CudaMemory] = {
    "a100": CudaMemory(79.15, (80,), _OOM.format("79.15", "an A100 80GB whose nvidia-smi shows 81920MiB")),
    "h100": CudaMemory(79.19, (80,), _OOM.format("79.19", "H100 80GB HBM3 servers (2x H100 80GB, H100 PCIe)")),
    "h200": CudaMemory(139.81, (141,), _OOM.format("139.81", "8x H200 141GB nodes (139.80 on some drivers)")),
    "b200": CudaMemory(178.36, (180, 192), _OOM.format("178.36", "8x B200 nodes")),
    "gb200": CudaMemory(184.31, (186, 192), _OOM.format("184.31", "GB200 NVL72 compute trays running vLLM")),
    "gb300": CudaMemory(276.50, (288,), _OOM.format("276.50", "a GB300 in a DGX Station (S. Bekman, Machine "
                                                     "Learning Engineering, \"GPU memory\" chapter)")),
    "mi300x": CudaMemory(191.98, (192,), _OOM.format("191.98", "MI300X 192GB nodes (HIP out of memory)")),
}


def cuda_memory(gpu_arch: str, stated: int | None, profile: str) -> tuple[int | None, str]:
    """(bytes CUDA sees on one GPU, where that figure comes from) for an accelerator whose profile
    is ``profile``, whose gpu_arch is ``gpu_arch`` and whose ``memory`` field is ``stated``."""
    row = CUDA_MEMORY.get(gpu_arch.lower())
    field = f"accelerators.profiles.{profile}.memory"
    if row is not None and (stated is None or stated in tuple(gb * 10**9 for gb in row.data_sheet_gb)):
        named = "" if stated is None else f"{field} {stated // 10**9}G is its data-sheet size; "
        return row.bytes, f"{named}CUDA-visible memory of {gpu_arch} GPUs: {row.source}"
    if stated is None:
        return None, ""
    known = f"; the table's CUDA figure for {gpu_arch} is {row.gib:.2f} GiB" if row is not None else ""
    return stated, f"{field}, taken as the memory CUDA sees{known}"


def project_accelerator(cluster, name: str) -> Accelerator:
    """Accelerator ``name`` of the validated cluster profile ``cluster`` (it must exist).

    The older profile shape names its extended resource in ``resource_name``; the newer one
    in ``allocation.extended_resource``, or allocates through DRA or Slurm GRES instead, and
    then requests no extended resource at all.
    """
    prof = cluster.accelerators.profiles[name]
    alloc = prof.allocation
    memory, memory_source = cuda_memory(prof.gpu_arch or name, byte_count(prof.memory) if prof.memory else None,
                                        name)
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
