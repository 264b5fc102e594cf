"""Routing profiles: the llm-d endpoint picker configuration (EndpointPickerConfig)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from manifesto.schema.base import Strict

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
            raise ValueError(f"kind must be EndpointPickerConfig, not '{self.kind}'")
        declared = [p.ref for p in self.plugins]
        dupes = sorted({n for n in declared if declared.count(n) > 1})
        if dupes:
            raise ValueError(f"plugin name declared twice: {', '.join(dupes)}")
        for prof in self.schedulingProfiles:
            for ref in prof.plugins:
                if ref.pluginRef not in declared:
                    from manifesto.errors import did_you_mean

                    raise ValueError(
                        f"scheduling profile '{prof.name}' refers to undeclared plugin "
                        f"'{ref.pluginRef}'{did_you_mean(ref.pluginRef, declared)}"
                    )
        return self


class ImageCatalog(Strict):
    vllm: dict[str, str] = Field(min_length=1)
    llm_d: dict[str, str] = Field(default_factory=dict)
    sidecars: dict[str, str] = Field(default_factory=dict)
    test: dict[str, str] = Field(default_factory=dict)
