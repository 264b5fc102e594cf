"""Routing profiles: the llm-d endpoint picker configuration (EndpointPickerConfig)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from manifesto.errors import did_you_mean
from manifesto.schema.base import FieldError, Strict

__all__ = ["PluginSpec", "PluginRef", "SchedulingProfile", "EndpointPickerConfig", "ImageCatalog"]


class PluginSpec(Strict):
    type: str
    name: str | None = None
    parameters: dict[str, Any] | None = None

    @property
    def ref(self) -> str:
        return self.name or self.type


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

    @model_validator(mode="after")
    def _refs(self) -> "EndpointPickerConfig":
        if self.kind != "EndpointPickerConfig":
            raise FieldError(("kind",), f"expected EndpointPickerConfig, got '{self.kind}'")
        declared = [p.ref for p in self.plugins]
        for i, name in enumerate(declared):
            if name in declared[:i]:
                field = "name" if self.plugins[i].name is not None else "type"
                raise FieldError(("plugins", i, field), f"plugin '{name}' is declared twice (first as "
                                 f"plugins[{declared.index(name)}]); give one of them a distinct name")
        for i, prof in enumerate(self.schedulingProfiles):
            for j, ref in enumerate(prof.plugins):
                if ref.pluginRef not in declared:
                    raise FieldError(
                        ("schedulingProfiles", i, "plugins", j, "pluginRef"),
                        f"'{ref.pluginRef}' is not a declared plugin{did_you_mean(ref.pluginRef, declared)}; "
                        f"declared: {', '.join(declared)}",
                    )
        return self


class ImageCatalog(Strict):
    vllm: dict[str, str] = Field(min_length=1)
    llm_d: dict[str, str] = Field(default_factory=dict)
    sidecars: dict[str, str] = Field(default_factory=dict)
    test: dict[str, str] = Field(default_factory=dict)
