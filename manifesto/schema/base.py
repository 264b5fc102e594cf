"""Shared pydantic base and small field types."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict

from manifesto import quantity
from manifesto.errors import show_value

__all__ = ["Strict", "Loose", "Quantity", "EnvValue", "DnsLabel", "PositiveInt", "Scalar", "Number", "FieldError"]


class FieldError(ValueError):
    """A validator's error about a field *below* the value it validates.

    ``path`` (keys and list indices) is appended to pydantic's ``loc`` by the loader, so a
    model validator on ``Accelerators`` can point at ``accelerators.default`` itself rather
    than at the ``accelerators:`` line.
    """

    def __init__(self, path: tuple, message: str) -> None:
        super().__init__(message)
        self.path = tuple(path)


class Strict(BaseModel):
    """Frozen, strict types, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Loose(BaseModel):
    """For embedded third-party objects (Kubernetes volume sources...): keys pass through."""

    model_config = ConfigDict(extra="allow", frozen=True)


def _quantity(value: Any) -> str:
    if isinstance(value, bool):
        raise ValueError(f"expected a quantity such as 8, 500m or 64Gi, got {show_value(value)}")
    if isinstance(value, (int, float)) and math.isfinite(value):
        value = str(value)
    try:
        if not isinstance(value, str):
            raise ValueError
        quantity.parse(value)
    except ValueError:
        raise ValueError(f"{show_value(value)} is not a Kubernetes quantity (examples: 8, 500m, 64Gi, 2G)") from None
    return value


def _env_value(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        raise ValueError("environment values must be strings; quote the value")
    return str(value)


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _dns_label(value: str) -> str:
    if not _DNS_LABEL.match(value) or len(value) > 63:
        raise ValueError(
            f"'{value}' must be a DNS label: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters"
        )
    return value


def _positive(value: int) -> int:
    if value < 1:
        raise ValueError("must be at least 1")
    return value


def _scalar(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        raise ValueError("expected a single value, not a mapping or list")
    return value


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {show_value(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {show_value(value)}")
    return value



Number = Annotated[Any, AfterValidator(_number)]
Quantity = Annotated[str, BeforeValidator(_quantity)]
EnvValue = Annotated[str, BeforeValidator(_env_value)]
DnsLabel = Annotated[str, AfterValidator(_dns_label)]
PositiveInt = Annotated[int, AfterValidator(_positive)]
Scalar = Annotated[Any, AfterValidator(_scalar)]
