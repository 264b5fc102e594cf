"""Numbers typed by a person into a flag or an environment variable.

``float("nan")``, ``float("inf")`` and ``float("1e400")`` all succeed, and ``int()`` of a
5000-digit string raises; a timeout or a retry count needs none of that. ``number``
accepts a finite decimal within bounds and returns None for anything else, so each
caller words its own one-line error with the flag or variable it came from.
"""

from __future__ import annotations

import math

__all__ = ["MAX_SECONDS", "MAX_COUNT", "number", "whole"]

#: The longest wait any flag or variable may ask for (24 days): ``subprocess`` waits with
#: poll(), whose timeout is milliseconds in a C int (at most about 24.8 days), so a longer
#: one overflows; none is ever what was meant.
MAX_SECONDS = 24 * 24 * 3600
#: The largest count a flag takes unless it says less (Kubernetes and vLLM counts are 32-bit).
MAX_COUNT = (1 << 31) - 1


def number(text: str, *, integer: bool = False, low: float = 0, high: float = MAX_SECONDS,
           low_open: bool = False) -> float | int | None:
    """The value ``text`` spells when it is finite and in ``[low, high]`` (``(low, high]``
    with ``low_open``), whole when ``integer``; None otherwise."""
    text = text.strip()
    if not text or len(text) > 32 or not text.isascii():  # int("١٢") is 12
        return None
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or value < low or value > high or (low_open and value == low):
        return None
    return value


def whole(text: str) -> int | None:
    """The whole number ``text`` spells in ASCII digits (an optional ``-``, at most 30 digits;
    spaces around are ignored), else None: ``int()`` also takes "١٢", "²³" is a digit to
    ``isdigit()``, and 4,300 digits raise. Each caller bounds the value and words its error."""
    import re

    text = text.strip()
    if not text.isascii() or re.fullmatch(r"-?[0-9]{1,30}", text) is None:
        return None
    return int(text)
