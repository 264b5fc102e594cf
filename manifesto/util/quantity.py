"""Kubernetes resource quantities: the one grammar the schemas validate with and the
Slurm renderer converts with (whole CPUs and MiB, always rounded up)."""

from __future__ import annotations

import re

__all__ = ["SUFFIXES", "MAX", "parse", "cpus", "mebibytes", "byte_count"]

#: The largest value the API server keeps exactly (an int64).
MAX = 2**63 - 1

#: Every suffix Kubernetes accepts, with its scale as (multiplier, divisor): whole numbers,
#: so a value is exact without fractions.
SUFFIXES = {
    "": (1, 1), "m": (1, 1000),
    "k": (10**3, 1), "M": (10**6, 1), "G": (10**9, 1), "T": (10**12, 1), "P": (10**15, 1), "E": (10**18, 1),
    "Ki": (2**10, 1), "Mi": (2**20, 1), "Gi": (2**30, 1), "Ti": (2**40, 1), "Pi": (2**50, 1), "Ei": (2**60, 1),
}
_QUANTITY = re.compile(r"^([0-9]+)(?:\.([0-9]+))?([A-Za-z]*)\Z")


def parse(quantity: str):
    """The exact value of ``quantity``: an int when it is whole (``2Gi`` -> 2147483648,
    ``2.5G`` -> 2500000000), else a ``Fraction`` (``500m`` -> 1/2); ValueError otherwise.

    Whole values, nearly all of them, need no ``fractions`` import (1 ms of a cold render)."""
    m = _QUANTITY.match(str(quantity))
    if not m or m.group(3) not in SUFFIXES:
        raise ValueError(f"{quantity!r} is not a Kubernetes quantity (examples: 8, 500m, 64Gi, 2G)")
    whole, decimals = m.group(1), m.group(2) or ""
    multiplier, divisor = SUFFIXES[m.group(3)]
    numerator = int(whole + decimals) * multiplier
    denominator = 10 ** len(decimals) * divisor
    if numerator % denominator == 0:
        return numerator // denominator
    from fractions import Fraction

    return Fraction(numerator, denominator)


def _ceil_div(value, divisor: int) -> int:
    return -(-value // divisor)  # exact for an int or a Fraction


def cpus(quantity: str) -> int:
    """``8`` -> 8, ``500m`` -> 1, ``2.5`` -> 3 (never less than one CPU)."""
    return max(1, _ceil_div(parse(quantity), 1))


def mebibytes(quantity: str) -> int:
    """``32Gi`` -> 32768, ``128G`` -> 122071 (bytes / 2**20, rounded up; at least 1)."""
    return max(1, _ceil_div(parse(quantity), 2**20))


def byte_count(quantity: str) -> int:
    """``32Mi`` -> 33554432 (rounded up to a whole byte)."""
    return _ceil_div(parse(quantity), 1)
