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

__all__ = ["project_accelerator", "PARTS", "Part", "cuda_memory", "part_named"]


class Part:
    """One accelerator part: its family (the ``gpu_arch`` a profile gives), the data-sheet sizes
    (decimal GB) it is sold as, the bytes CUDA (or HIP) reports as its total, how that figure
    was obtained (``basis``) and where it was read."""

    __slots__ = ("family", "data_sheet_gb", "bytes", "basis", "source")

    def __init__(self, family: str, data_sheet_gb: tuple[int, ...], total: int, basis: str, source: str) -> None:
        self.family, self.data_sheet_gb, self.bytes, self.basis, self.source = (
            family, data_sheet_gb, total, basis, source)

    @property
    def gib(self) -> float:
        return self.bytes / 1024**3


def _gib(x: float) -> int:
    return int(x * 1024**3)


# Bases: "cuda" -- the device's total as CUDA, PyTorch or ROCm printed it in a published log;
# "same-memory" -- a part with the same memory as a measured one; "data-sheet" -- no published
# CUDA total was found, so the data-sheet size read as decimal bytes stands in (below what CUDA
# reports on every measured part, so the fit errs towards refusing); "vendor-rule" -- derived
# from the vendor's practice measured on its other parts, stated in the row.
_OOM = "PyTorch's \"GPU 0 has a total capacity of {} GiB\" (torch total_memory) on {}"
PARTS: dict[str, Part] = {
    "A100-SXM4-40GB": Part("a100", (40,), _gib(39.50), "cuda", (
        "vLLM's \"total_gpu_memory (39.50GiB)\" (cudaMemGetInfo, the total vLLM multiplies) on an A100 40GB, "
        "https://github.com/vllm-project/vllm/issues/12330; deviceQuery's device property is 42298834944 bytes "
        "(39.39 GiB), https://github.com/bottlerocket-os/bottlerocket/pull/3873")),
    "A100-80GB": Part("a100", (80,), _gib(79.15), "cuda", _OOM.format(
        "79.15", "an A100 80GB (SXM4 or PCIe; nvidia-smi 81920MiB, "
        "https://github.com/modal-labs/modal-client/pull/2797)")),
    "H100-SXM5-80GB": Part("h100", (80,), _gib(79.11), "cuda", _OOM.format(
        "79.11", "an H100 80GB HBM3 running gpt-oss-120b, https://github.com/vllm-project/vllm/issues/27508")),
    "H100-PCIE-80GB": Part("h100", (80,), _gib(79.11), "same-memory", (
        "the H100 SXM5's figure: nvidia-smi shows both 80GB H100 parts with the same 81559MiB framebuffer "
        "(https://github.com/modal-labs/modal-client/pull/2797)")),
    "H100-NVL-94GB": Part("h100", (94,), _gib(93.00), "cuda", _OOM.format(
        "93.00", "an H100 NVL 94GB, https://github.com/ali-vilab/VACE/issues/56")),
    "H200-141GB": Part("h200", (141,), _gib(139.81), "cuda", _OOM.format(
        "139.81", "8x H200 141GB nodes (SXM and NVL; 139.80 on some drivers)")),
    "H20-96GB": Part("h20", (96,), _gib(95.1), "cuda", (
        "\"CUDA-visible memory: ~95.1 GiB\" on an NVIDIA H20 96GB, "
        "https://github.com/RightNow-AI/AutoMegaKernel/pull/3")),
    "B200-180GB": Part("b200", (180, 192), _gib(178.36), "cuda", _OOM.format(
        "178.36", "8x B200 nodes; a CUDA device query prints 178.35, https://github.com/pytorch/ao/pull/4002")),
    "GB200-186GB": Part("gb200", (186, 192), _gib(184.31), "cuda", _OOM.format(
        "184.31", "GB200 NVL72 compute trays running vLLM")),
    "B300-288GB": Part("b300", (288,), 288 * 10**9, "data-sheet", (
        "the data sheet's 288 GB as decimal bytes (268.2 GiB); no published CUDA total was found, and "
        "CUDA reports more than the decimal figure on every measured part")),
    "GB300-288GB": Part("gb300", (288,), _gib(276.50), "cuda", _OOM.format(
        "276.50", "a GB300 in a DGX Station (S. Bekman, Machine Learning Engineering, \"GPU memory\" chapter)")),
    "L40S-48GB": Part("l40s", (48,), _gib(44.42), "cuda", _OOM.format(
        "44.42", "8x L40S, https://github.com/stepfun-ai/Step-Video-T2V/issues/8")),
    "RTX-PRO-6000-96GB": Part("rtx-pro-6000", (96,), _gib(94.97), "cuda", (
        "a CUDA allocator's \"total=94.97 GiB\" (cudaMemGetInfo) on an RTX PRO 6000 Blackwell 96GB that "
        "nvidia-smi shows at 97887MiB, https://github.com/antirez/ds4/issues/431")),
    "MI300X-192GB": Part("mi300x", (192,), 206141652992, "cuda", (
        "rocm-smi's \"VRAM Total Memory (B): 206141652992\" (191.98 GiB) on MI300X nodes, "
        "https://github.com/ROCm/legacy-rocm-build/issues/4750")),
    "MI325X-256GB": Part("mi325x", (256,), 256 * 1024**3 - 16 * 1024**2, "vendor-rule", (
        "AMD Instinct data-sheet GB are binary: the MI300X's 192 GB is 192 GiB less 16 MiB to ROCm "
        "(https://github.com/ROCm/legacy-rocm-build/issues/4750) and the MI355X's 288 GB is 288 GiB to vLLM; "
        "the same rule for the MI325X's 256 GB (no published ROCm total was found)")),
    "MI355X-288GB": Part("mi355x", (288,), 288 * 1024**3, "cuda", (
        "vLLM's \"--gpu-memory-utilization 0.95 ... requests 273.6 GiB\" (0.95 x 288 GiB) on MI355X nodes, "
        "https://github.com/SemiAnalysisAI/InferenceX/pull/2522")),
}
_BY_UPPER = {key.upper(): key for key in PARTS}


def part_named(name: str) -> str | None:
    """The table's key for part ``name`` (any letter case), or None."""
    return _BY_UPPER.get(name.upper())


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
    return None, (f"gpu_arch {gpu_arch} is not a family of the accelerator table (manifesto/resolve/accelerator.py); "
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
