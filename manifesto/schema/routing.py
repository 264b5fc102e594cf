"""Routing profiles: the llm-d endpoint picker configuration (EndpointPickerConfig)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from manifesto.schema import checks
from manifesto.schema.base import Strict

__all__ = ["PluginSpec", "PluginRef", "SchedulingProfile", "EndpointPickerConfig", "ImageCatalog"]


class PluginSpec(Strict, checks.PluginSpecMixin):
    type: str
    name: str | None = None
    parameters: dict[str, Any] | None = None


class PluginRef(Strict):
    pluginRef: str
    weight: int | float | None = None


class SchedulingProfile(Strict):
    name: str
    plugins: list[PluginRef] = Field(default_factory=list)


class EndpointPickerConfig(Strict):
    apiVersion: str
    kind: str
    plugins: list[PluginSpec] = Field(min_length=1)
    schedulingProfiles: list[SchedulingProfile] = Field(default_factory=list)
    featureGates: Any = None
    saturationDetector: dict[str, Any] | None = None
    dataLayer: dict[str, Any] | None = None
    flowControl: dict[str, Any] | None = None
    parser: dict[str, Any] | None = None
    requestHandler: dict[str, Any] | None = None

    _refs = model_validator(mode="after")(checks.plugin_refs)


class ImageCatalog(Strict):
    vllm: dict[str, str] = Field(min_length=1)
    llm_d: dict[str, str] = Field(default_factory=dict)
    sidecars: dict[str, str] = Field(default_factory=dict)
    test: dict[str, str] = Field(default_factory=dict)
