"""The config.json a spec names (``model.config_json``): where it is, and the Architecture it
describes, read through the edge."""

from __future__ import annotations

import os

__all__ = ["config_json_path", "read_config_json"]


def read_config_json(path: str, source: str, name: str, within: tuple[str, ...] = ()):
    """The Architecture a config.json describes, read through the edge (``manifesto.edge.jsonio``:
    regular file, bounded, depth-checked; confined to ``within`` when given)."""
    from manifesto.edge.jsonio import read_json
    from manifesto.resolve.architecture import from_config

    return from_config(read_json(path, name, within), source=source)


def config_json_path(spec, within: tuple[str, ...]) -> str:
    """Where the spec's ``model.config_json`` is: relative to the file that sets it. In a build
    (``within``) it must stay in the workspace: no absolute path, no ``..``."""
    from manifesto.errors import InputError

    model = spec.validated.model
    origin = spec.where(("model", "config_json"))
    base = os.path.dirname(origin.file) if origin is not None else os.path.dirname(spec.path)
    if within:
        value = model.config_json
        if os.path.isabs(value) or ".." in value.replace("\\", "/").split("/"):
            raise InputError("an absolute path or one with '..' leads out of the build workspace; a build reads "
                             "only files inside it (name the config.json relative to the spec, below its folder)",
                             origin, "model.config_json")
    return os.path.join(base, model.config_json)
