"""The llm-d P/D routing sidecar's command line, the same on Kubernetes and Slurm."""

from __future__ import annotations

import re

__all__ = ["image_release", "pd_sidecar_args"]


def image_release(image: str) -> tuple[int, int] | None:
    """The (major, minor) of an llm-d image tagged ``:vMAJOR.MINOR...``, or None (a digest, main, ...)."""
    m = re.search(r":v([0-9]+)\.([0-9]+)", image)
    return (int(m.group(1)), int(m.group(2))) if m else None


def pd_sidecar_args(plan, role) -> list[str]:
    """Flags of the sidecar in front of ``role``'s ranks (NIXLv2, one public port per rank)."""
    image = plan.images["llm_d.routing_sidecar"]
    lay = role.layout
    # The sidecar renamed --vllm-port to --model-server-port in v0.10.
    release = image_release(image)
    port_flag = "--model-server-port" if release is None or release >= (0, 10) else "--vllm-port"
    return [
        f"--port={lay.public_ports[0]}",
        f"{port_flag}={lay.backend_ports[0]}",
        f"--data-parallel-size={len(lay.public_ports)}",
        "--kv-connector=nixlv2",
        "--secure-proxy=false",
    ]
