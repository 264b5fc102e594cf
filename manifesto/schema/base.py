"""Shared pydantic base and small field types."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from manifesto import quantity, rules
from manifesto.errors import show_value

__all__ = [
    "Strict", "Loose", "Quantity", "EnvValue", "DnsLabel", "PositiveInt", "Scalar", "Number", "FieldError", "rule",
    "ServiceName", "Count", "GraceSeconds", "Port", "Subdomain", "LabelKey", "LabelValue", "ResourceName", "AbsPath",
    "PathSegment", "EnvMap", "Labels", "Annotations", "SecretNames", "key_rule", "item_rule", "value_rule",
    "default_of",
]


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

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


def default_of(cls: type[BaseModel], **field):
    """A field default of a ``cls`` with all its defaults, made when a value lacks the field.

    ``x: T = T()`` would build ``T``'s validator at import (the models defer that to first
    use: ``defer_build``). A model without model validators is made with ``model_construct``
    (the same value: field validators never run on defaults), so it needs no validator at all.
    ``field``: other ``Field`` arguments (a description).
    """
    if cls.__pydantic_decorators__.model_validators:
        return Field(default_factory=cls, **field)
    return Field(default_factory=cls.model_construct, **field)


class Loose(BaseModel):
    """For embedded third-party objects (Kubernetes volume sources...): keys pass through."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)


def _quantity(value: Any) -> str:
    if isinstance(value, bool):
        raise ValueError(f"expected a quantity such as 8, 500m or 64Gi, got {show_value(value)}")
    if isinstance(value, int) or isinstance(value, float) and math.isfinite(value):
        value = str(value)  # the loader bounds whole numbers at 4300 digits
    try:
        if not isinstance(value, str):
            raise ValueError
        if len(value) > 64:
            raise ValueError(f"a quantity of {len(value)} characters is too long (at most 64; examples: 8, 500m, "
                             "64Gi)")
        if quantity.parse(value) > quantity.MAX:
            raise ValueError(f"{show_value(value)} is too large: a Kubernetes quantity is at most {quantity.MAX} "
                             "(2**63 - 1)")
    except ValueError as exc:
        if "too l" in str(exc):  # too large, too long: said above
            raise
        raise ValueError(f"{show_value(value)} is not a Kubernetes quantity (examples: 8, 500m, 64Gi, 2G)") from None
    return value


def _env_value(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        raise ValueError("environment values must be strings; quote the value")
    return str(value)


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


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


def rule(check, what: str = ""):
    """A pydantic validator from a ``manifesto.rules`` checker: ``'x' <problem>``."""

    def validate(value: str) -> str:
        problem = check(value)
        if problem:
            raise ValueError(f"{what}{show_value(value)} {problem}")
        return value

    return AfterValidator(validate)


def _starts_with_letter(value: str) -> str:
    if rules.ascii_digits(value[:1]):
        raise ValueError(f"{show_value(value)} must start with a letter: it begins the names of Services, "
                         "which are DNS-1035 labels")
    return value


def _int32(value: int) -> int:
    if value > rules.INT32_MAX:
        shown = value if value < 10**20 else f"a whole number of {len(str(value))} digits"
        raise ValueError(f"{shown} is too large: Kubernetes counts are 32-bit (at most {rules.INT32_MAX})")
    return value


def _non_negative(value: int) -> int:
    if value < 0:
        raise ValueError(f"must not be negative, got {value}")
    return value


def _port(value: int) -> int:
    if not 1 <= value <= 65535:
        raise ValueError(f"{value} is not a TCP port (1-65535)")
    return value


def _each(check, what: str, entries):
    """A validator running ``check`` on each (path key, value) that ``entries(container)`` yields."""

    def validate(container):
        for key, item in entries(container):
            problem = check(item)
            if problem:
                raise FieldError((key,), f"{what}{show_value(item)} {problem}")
        return container

    return AfterValidator(validate)


def key_rule(check, what: str):
    """``check`` on every key of a mapping."""
    return _each(check, what + " ", lambda value: ((k, k) for k in value))


def value_rule(check, what: str):
    """``check`` on every value of a mapping."""
    return _each(check, what + " ", lambda value: value.items())


def item_rule(check, what: str):
    """``check`` on every item of a list."""
    return _each(check, what, enumerate)


ServiceName = Annotated[str, AfterValidator(_dns_label), AfterValidator(_starts_with_letter)]
Count = Annotated[int, AfterValidator(_positive), AfterValidator(_int32)]
GraceSeconds = Annotated[int, AfterValidator(_non_negative), AfterValidator(_int32)]
Port = Annotated[int, AfterValidator(_port)]
Subdomain = Annotated[str, rule(rules.dns_subdomain)]
LabelKey = Annotated[str, rule(rules.qualified_name)]
LabelValue = Annotated[str, rule(rules.label_value)]
ResourceName = Annotated[str, rule(rules.resource_name)]
AbsPath = Annotated[str, rule(rules.absolute_path)]
PathSegment = Annotated[str, rule(rules.path_segment)]
EnvMap = Annotated[dict[str, EnvValue], key_rule(rules.env_name, "variable name")]
Labels = Annotated[dict[str, str], key_rule(rules.qualified_name, "label key"), value_rule(rules.label_value, "label value")]
Annotations = Annotated[dict[str, str], key_rule(rules.qualified_name, "annotation key")]
SecretNames = Annotated[list[str], item_rule(rules.dns_subdomain, "")]
