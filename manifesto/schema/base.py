"""Shared pydantic base and small field types (their checks live in ``manifesto.schema.checks``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from manifesto.util import rules
from manifesto.schema import checks
from manifesto.schema.checks import FieldError

__all__ = [
    "Strict", "Loose", "Quantity", "Bytes", "EnvValue", "DnsLabel", "PositiveInt", "Scalar", "Number", "FieldError", "rule",
    "ServiceName", "Count", "GraceSeconds", "Port", "Subdomain", "LabelKey", "LabelValue", "ResourceName", "AbsPath",
    "PathSegment", "EnvMap", "Labels", "Annotations", "SecretNames", "key_rule", "item_rule", "value_rule",
    "default_of",
]


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


Number = Annotated[Any, AfterValidator(checks.number)]
Quantity = Annotated[str, BeforeValidator(checks.quantity_value)]
#: A quantity of bytes (memory, storage): ``500m`` is refused as a fraction of a byte.
Bytes = Annotated[str, BeforeValidator(checks.byte_quantity_value)]
EnvValue = Annotated[str, BeforeValidator(checks.env_value)]
DnsLabel = Annotated[str, AfterValidator(checks.dns_label)]
PositiveInt = Annotated[int, AfterValidator(checks.positive)]
Scalar = Annotated[Any, AfterValidator(checks.scalar)]


def rule(check, what: str = ""):
    """A pydantic validator from a ``manifesto.util.rules`` checker: ``'x' <problem>``."""
    return AfterValidator(checks.Rule(check, what))


def key_rule(check, what: str):
    """``check`` on every key of a mapping."""
    return AfterValidator(checks.Each(check, what + " ", "keys"))


def value_rule(check, what: str):
    """``check`` on every value of a mapping."""
    return AfterValidator(checks.Each(check, what + " ", "values"))


def item_rule(check, what: str):
    """``check`` on every item of a list."""
    return AfterValidator(checks.Each(check, what, "items"))


ServiceName = Annotated[str, AfterValidator(checks.dns_label), AfterValidator(checks.starts_with_letter)]
Count = Annotated[int, AfterValidator(checks.positive), AfterValidator(checks.int32)]
GraceSeconds = Annotated[int, AfterValidator(checks.non_negative), AfterValidator(checks.int32)]
Port = Annotated[int, AfterValidator(checks.port)]
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
