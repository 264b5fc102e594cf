"""Check an EndpointPickerConfig against the table of the router release that will run it.

Pure: the table (``manifesto.schema.runtime.RouterTable``) is passed in. The router decodes each
plugin's ``parameters`` with DisallowUnknownFields, so an unknown key stops the endpoint picker at
start-up; this finds it before anything is applied. Go's encoding/json matches keys without
regard to case, and so does this check.
"""

from __future__ import annotations

from manifesto.errors import did_you_mean, show_value
from manifesto.resolve.failures import Where, fail

__all__ = ["check_epp_config", "epp_problem", "check_flags", "release_tuple"]

_JSON = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
         "object": (dict,)}


def release_tuple(release: str) -> tuple[int, ...] | None:
    parts = release.lstrip("v").split("-")[0].split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def _type_ok(kind: str, value) -> bool:
    if kind not in _JSON:  # any, or a type the generator does not model
        return True
    if isinstance(value, bool) and kind != "boolean":
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON[kind])


def epp_problem(table, config) -> tuple[tuple, str] | None:
    """(path inside the config, problem) for the first thing router ``table.router`` would refuse."""
    if not isinstance(config, dict):
        return None
    api = config.get("apiVersion")
    if api is not None and api not in table.api_versions:
        return ("apiVersion",), (f"router {table.router} reads apiVersion {' or '.join(table.api_versions)}, "
                                 f"not {show_value(api)}")
    plugins = {p.type: p for p in table.plugins}
    names = []
    for i, entry in enumerate(config.get("plugins") or []):
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        names.append(entry.get("name") or kind)
        found = plugins.get(kind)
        if found is None:
            return ("plugins", i, "type"), (f"router {table.router} has no plugin type {show_value(kind)}"
                                            f"{did_you_mean(kind, plugins)}")
        gone = _removed(table, found)
        if gone:
            return ("plugins", i, "type"), gone
        why = _parameters(table, found, entry.get("parameters"))
        if why:
            return ("plugins", i, "parameters") + why[0], why[1]
    for i, profile in enumerate(config.get("schedulingProfiles") or []):
        for j, ref in enumerate((profile or {}).get("plugins") or []):
            name = ref.get("pluginRef") if isinstance(ref, dict) else None
            if name is not None and name not in names:
                return (("schedulingProfiles", i, "plugins", j, "pluginRef"),
                        f"pluginRef {show_value(name)} names no plugin of this config{did_you_mean(name, names)}; "
                        f"plugins: {', '.join(map(str, names)) or '(none)'}")
    return None


def _removed(table, plugin) -> str | None:
    dep = plugin.deprecated
    if dep is None or not dep.removed_in:
        return None
    pinned, gone = release_tuple(table.router), release_tuple(dep.removed_in)
    if pinned is None or gone is None or pinned < gone:
        return None
    use = f"; use {dep.replacement}" if dep.replacement else ""
    return f"plugin type {plugin.type} was removed in router {dep.removed_in}{use}"


def _parameters(table, plugin, params) -> tuple[tuple, str] | None:
    if params is None or not plugin.strict or plugin.parameters is None:
        return None
    if not isinstance(params, dict):
        return (), f"the parameters of {plugin.type} are a mapping, found {show_value(params)}"
    fields = {p.name.lower(): p for p in plugin.parameters}
    for key, value in params.items():
        field = fields.get(str(key).lower())
        if field is None:
            known = [p.name for p in plugin.parameters]
            listed = ", ".join(known) if known else "none"
            return (key,), (f"{plugin.type} in router {table.router} has no parameter {show_value(key)}"
                            f"{did_you_mean(key, known)}; it takes: {listed} (the router decodes parameters "
                            f"strictly and would exit on start)")
        if value is not None and not _type_ok(field.type, value):
            return (key,), f"{plugin.type} parameter {field.name} takes {_a(field.type)}, found {show_value(value)}"
    return None


def _a(kind: str) -> str:
    return {"integer": "a whole number", "number": "a number", "boolean": "true or false", "string": "a string",
            "array": "a list", "object": "a mapping"}.get(kind, kind)


def check_epp_config(table, config, where: Where, base: tuple) -> None:
    """Raise the first problem of ``config`` (written at ``base`` of the file ``where`` maps)."""
    found = epp_problem(table, config)
    if found:
        raise fail(found[1], where, base + found[0])


def check_flags(known: list, args: list[str]) -> str | None:
    """The first ``--flag`` in ``args`` that the router component does not declare (Go's flag
    package takes ``-flag`` and ``--flag``; values follow ``=`` or as the next word)."""
    names = {f.name for f in known}
    for word in args:
        if word.startswith("-") and not word.lstrip("-")[:1].isdigit():
            name = word.lstrip("-").split("=", 1)[0]
            if name and name not in names:
                return f"--{name}{did_you_mean(name, sorted(names))}"
    return None
