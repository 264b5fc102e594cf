"""Kubernetes quantities as Slurm counts: whole CPUs and MiB, always rounded up."""

from __future__ import annotations

import math

from manifesto.quantity import quantity_value as _value

__all__ = ["cpus", "mebibytes", "byte_count"]


def cpus(quantity: str) -> int:
    """``8`` -> 8, ``500m`` -> 1, ``2.5`` -> 3 (never less than one CPU)."""
    return max(1, math.ceil(_value(quantity)))


def mebibytes(quantity: str) -> int:
    """``32Gi`` -> 32768, ``128G`` -> 122071 (bytes / 2**20, rounded up; at least 1)."""
    return max(1, math.ceil(_value(quantity) / 2**20))


def byte_count(quantity: str) -> int:
    """``32Mi`` -> 33554432 (rounded up to a whole byte)."""
    return math.ceil(_value(quantity))
