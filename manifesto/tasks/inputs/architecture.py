"""A model's architecture, for the memory fit and the parameter count: the config.json the
spec names (``config_json``), else the bundled record (``catalog/architectures``), else the
Hugging Face cache (``hf_cache``, only when the caller passes one)."""

from __future__ import annotations

import os
from functools import lru_cache

__all__ = ["catalog_record", "load_architecture"]


@lru_cache(maxsize=64)
def _catalog_architecture(path: str):
    """The bundled record at ``path`` (one model), or None when there is none."""
    from manifesto.edge.jsonio import read_json
    from manifesto.resolve.architecture import from_config

    if not os.path.isfile(path):
        return None
    entry = read_json(path, path)
    return from_config(entry["config"], source=f"catalog/architectures ({entry['source']})",
                       params=entry.get("params"), active_params=entry.get("active_params"))


def catalog_record(model_id: str):
    """(path of the bundled record of ``model_id``, its Architecture or None)."""
    import re

    from manifesto.load.catalog import architectures_dir, path_text

    if not re.fullmatch(r"[\w.-]+/[\w.-]+", model_id) or ".." in model_id:
        return None, None
    path = path_text(os.path.join(architectures_dir(), f"{model_id}.json"))
    return path, _catalog_architecture(path)


def load_architecture(spec, hf_home: str | None = None, within: tuple[str, ...] = (), realpath=os.path.realpath):
    """(Architecture or None, why none, files read) for a loaded spec: the config.json the spec
    names, else the bundled catalog's record, else the Hugging Face cache under ``hf_home``
    (only when the caller passes one: builds never do, so they stay hermetic). ``within``: a
    build's roots (``yamlio.confinement``), the only place its config.json may be read from.
    ``realpath`` names the files read (a build's memo resolves each path once)."""

    from manifesto.load.inputs import display_name
    from manifesto.tasks.inputs.config_json import config_json_path, read_config_json
    from manifesto.tasks.inputs.hf_cache import hf_cache_config

    model = spec.validated.model
    if model.config_json:
        path = config_json_path(spec, within)
        name = display_name(path)
        return (read_config_json(path, f"{name} (model.config_json)", name, within), "",
                [realpath(path)])
    path, known = catalog_record(model.id)
    if known is not None:
        return known, "", [realpath(path)]
    if hf_home:
        found = hf_cache_config(hf_home, model.id, model.revision)
        if found:
            return read_config_json(found, f"{found} (Hugging Face cache)", found), "", [found]
    return None, (f"no architecture for {model.id}: catalog/architectures has no record of it and the spec sets "
                  "no model.config_json" + ("" if hf_home is None else " (nor is it in the Hugging Face cache)")), []
