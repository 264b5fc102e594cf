"""The accelerator parts table: each part's CUDA-visible memory, with how the figure was
obtained and where it was read. Data the cluster schema checks a profile's ``part:`` against
and the memory fit (``manifesto.resolve.accelerator``) sizes a GPU with; it sits below both
(the schema layer), so neither reaches up for it."""

from __future__ import annotations

__all__ = ["PARTS", "Part", "part_named"]


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
