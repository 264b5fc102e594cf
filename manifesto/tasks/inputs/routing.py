"""Routing profiles (an endpoint-picker configuration): found, read once and validated."""

from __future__ import annotations

import os

__all__ = ["load_routing_profile"]


def load_routing_profile(ref: str, search=None) -> tuple[str, str, str, dict, object]:
    """(source name, YAML text, path, data, field path -> Origin) of a validated routing profile."""
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import Loaded, display_name, validate
    from manifesto.schema.compiled import EndpointPickerConfig
    from manifesto.load.yamlio import parse_yaml, read_text

    path = find("routing", ref, search=search)
    text = read_text(path, display_name(path), within(search))  # once: the file may be a pipe (`<(...)`)
    data, locs = parse_yaml(text, display_name(path))
    real = os.path.realpath(path)
    validate(EndpointPickerConfig, Loaded(data, locs, [real]))
    return f"--routing-profile {display_name(path)}", text, real, data, locs.find
