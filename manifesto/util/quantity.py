"""Kubernetes resource quantities: the one grammar the schemas validate with and the
Slurm renderer converts with (whole CPUs and MiB, always rounded up)."""

from __future__ import annotations

import re

__all__ = ["SUFFIXES", "FRACTIONAL", "MAX", "parse", "cpus", "mebibytes", "byte_count", "byte_problem"]

#: The largest value the API server keeps exactly (an int64).
MAX = 2**63 - 1

#: Every suffix Kubernetes accepts, with its scale as (multiplier, divisor): whole numbers,
#: so a value is exact without fractions.
SUFFIXES = {
    "": (1, 1), "n": (1, 10**9), "u": (1, 10**6), "m": (1, 1000),
    "k": (10**3, 1), "M": (10**6, 1), "G": (10**9, 1), "T": (10**12, 1), "P": (10**15, 1), "E": (10**18, 1),
    "Ki": (2**10, 1), "Mi": (2**20, 1), "Gi": (2**30, 1), "Ti": (2**40, 1), "Pi": (2**50, 1), "Ei": (2**60, 1),
}
#: The suffixes of fractions (nano, micro, milli): never meant in a count of bytes.
FRACTIONAL = ("n", "u", "m")
#: The longest quantity read (the schemas say the same); its exponent is at most this large.
MAX_LENGTH = 64
_MAX_EXPONENT = 40
# Kubernetes' grammar (apimachinery resource.Quantity): digits with an optional fraction (either
# side of the point may be empty, not both), then a binary or decimal suffix or a decimal
# exponent (1e3, 2E-2). ASCII only: [0-9], not \d (which takes "١٢").
_QUANTITY = re.compile(r"^\+?([0-9]*)(?:\.([0-9]*))?(?:([eE][+-]?[0-9]+)|([A-Za-z]*))\Z", re.ASCII)


def parse(quantity: str):
    """The exact value of ``quantity``: an int when it is whole (``2Gi`` -> 2147483648,
    ``2.5G`` -> 2500000000, ``1e3`` -> 1000), else a ``Fraction`` (``500m`` -> 1/2);
    ValueError otherwise (a negative one too: no count here is below zero).

    Whole values, nearly all of them, need no ``fractions`` import (1 ms of a cold render)."""
    text = str(quantity)
    m = _QUANTITY.match(text) if len(text) <= MAX_LENGTH else None
    if not m or not (m.group(1) or m.group(2)) or (m.group(4) or "") not in SUFFIXES:
        raise ValueError(f"{quantity!r} is not a Kubernetes quantity (examples: 8, 500m, 64Gi, 2G, 1e9)")
    whole, decimals = m.group(1) or "0", m.group(2) or ""
    if m.group(3):
        exponent = int(m.group(3)[1:])
        if exponent > _MAX_EXPONENT:
            raise ValueError(f"{quantity!r} is too large: a Kubernetes quantity is at most {MAX} (2**63 - 1)")
        if exponent < -_MAX_EXPONENT:
            raise ValueError(f"{quantity!r} is not a Kubernetes quantity (an exponent below -{_MAX_EXPONENT})")
        multiplier, divisor = (10**exponent, 1) if exponent >= 0 else (1, 10**-exponent)
    else:
        multiplier, divisor = SUFFIXES[m.group(4)]
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


def byte_problem(quantity: str) -> str | None:
    """Why ``quantity`` cannot be a count of bytes (None when it can): not a quantity, or one
    with a fraction's suffix (``500m`` is half a byte, not 500 megabytes)."""
    try:
        parse(quantity)
    except ValueError as exc:
        return str(exc)
    text = str(quantity)
    if text.endswith(FRACTIONAL):
        return (f"{quantity!r} is a fraction of a byte ('{text[-1]}' means "
                f"{ {'n': 'billionths', 'u': 'millionths', 'm': 'thousandths'}[text[-1]]}); "
                f"write {text[:-1]}M (megabytes) or {text[:-1]}Mi (mebibytes)")
    return None


def byte_count(quantity: str) -> int:
    """``32Mi`` -> 33554432 (rounded up to a whole byte); ValueError (:func:`byte_problem`'s)
    for a quantity with a fraction's suffix (``500m``)."""
    problem = byte_problem(quantity)
    if problem:
        raise ValueError(problem)
    return _ceil_div(parse(quantity), 1)
