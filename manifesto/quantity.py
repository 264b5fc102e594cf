"""Kubernetes quantities (``8``, ``500m``, ``64Gi``, ``2G``) as exact numbers."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["quantity_value"]

_SUFFIX = {
    "": 1, "m": Fraction(1, 1000),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)$")


def quantity_value(quantity: str) -> Fraction:
    """``64Gi`` -> 68719476736, ``500m`` -> 1/2; a malformed quantity is a ValueError."""
    m = _QUANTITY.match(str(quantity).strip())
    if not m or m.group(2) not in _SUFFIX:
        raise ValueError(f"{quantity!r} is not a Kubernetes quantity (examples: 8, 500m, 64Gi, 2G)")
    return Fraction(m.group(1)) * _SUFFIX[m.group(2)]
