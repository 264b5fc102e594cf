"""Check an EndpointPickerConfig against the table of the router release that will run it.

Pure: the table (``manifesto.schema.runtime.RouterTable``) is passed in. The router decodes each
plugin's ``parameters`` with DisallowUnknownFields, so an unknown key stops the endpoint picker at
start-up; this finds it before anything is applied, and every such problem of a config at once.
Go's encoding/json matches keys without regard to case, and so does this check; a nested struct's
keys are decoded as strictly as its parent's, and are checked too.
"""

from __future__ import annotations

from manifesto.errors import did_you_mean, show_value
from manifesto.resolve.failures import Where, fail, raise_all

__all__ = ["check_epp_config", "epp_errors", "epp_problem", "epp_problems", "experimental_plugins", "check_flags",
           "release_tuple"]

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


def epp_problems(table, config) -> list[tuple[tuple, str]]:
    """(path inside the config, problem) for everything router ``table.router`` would refuse."""
    if not isinstance(config, dict):
        return []
    out = []
    api = config.get("apiVersion")
    if api is not None and api not in table.api_versions:
        out.append((("apiVersion",), f"router {table.router} reads apiVersion {' or '.join(table.api_versions)}, "
                                     f"not {show_value(api)}"))
    plugins = {p.type: p for p in table.plugins}
    names = []
    for i, entry in enumerate(config.get("plugins") or []):
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        names.append(entry.get("name") or kind)
        found = plugins.get(kind)
        if found is None:
            out.append((("plugins", i, "type"), f"router {table.router} has no plugin type {show_value(kind)}"
                                                f"{did_you_mean(kind, plugins)}"))
            continue
        gone = _removed(table, found)
        if gone:
            out.append((("plugins", i, "type"), gone))
            continue
        out += [(("plugins", i, "parameters") + path, why)
                for path, why in _parameters(table, found, entry.get("parameters"))]
    for i, profile in enumerate(config.get("schedulingProfiles") or []):
        for j, ref in enumerate((profile or {}).get("plugins") or []):
            name = ref.get("pluginRef") if isinstance(ref, dict) else None
            if name is not None and name not in names:
                out.append((("schedulingProfiles", i, "plugins", j, "pluginRef"),
                            f"pluginRef {show_value(name)} names no plugin of this config{did_you_mean(name, names)}; "
                            f"plugins: {', '.join(map(str, names)) or '(none)'}"))
    return out


def epp_problem(table, config) -> tuple[tuple, str] | None:
    """The first of :func:`epp_problems`, or None."""
    found = epp_problems(table, config)
    return found[0] if found else None


def experimental_plugins(table, config) -> tuple[str, ...]:
    """The Alpha plugin types ``config`` names: the picker refuses each unless it runs with
    ``--allow-experimental-plugins`` (``ValidatePluginStability`` in the router's registry)."""
    if not isinstance(config, dict):
        return ()
    alpha = {p.type for p in table.plugins if p.stability == "Alpha"}
    kinds = [e.get("type") for e in config.get("plugins") or [] if isinstance(e, dict)]
    return tuple(sorted({k for k in kinds if k in alpha}))


def _removed(table, plugin) -> str | None:
    dep = plugin.deprecated
    if dep is None or not dep.removed_in:
        return None
    pinned, gone = release_tuple(table.router), release_tuple(dep.removed_in)
    if pinned is None or gone is None or pinned < gone:
        return None
    use = f"; use {dep.replacement}" if dep.replacement else ""
    return f"plugin type {plugin.type} was removed in router {dep.removed_in}{use}"


_STRICT = "the router decodes parameters strictly and would exit on start"


def _parameters(table, plugin, params) -> list[tuple[tuple, str]]:
    if params is None or not plugin.strict or plugin.parameters is None:
        return []
    if not isinstance(params, dict):
        return [((), f"the parameters of {plugin.type} are a mapping, found {show_value(params)}")]
    found = _fields(table, plugin.type, plugin.parameters, params, ())
    if not found or not plugin.alternatives:
        return found
    # The factory decodes the raw parameters again with each older spelling in turn: one of them
    # taking every key is enough. Otherwise report against the current spelling, naming a key
    # that belongs to another spelling as a mix of the two.
    if any(not _fields(table, plugin.type, alt, params, ()) for alt in plugin.alternatives):
        return []
    current = {p.name.lower() for p in plugin.parameters}
    keys = {str(k).lower() for k in params}
    if not keys & current:  # written in an older spelling only: report against the closest one
        best = max(plugin.alternatives, key=lambda alt: len(keys & {p.name.lower() for p in alt}))
        return _fields(table, plugin.type, best, params, ())
    older = {p.name.lower(): alt for alt in plugin.alternatives for p in alt}
    out = []
    for path, why in found:
        key = str(path[0]).lower() if len(path) == 1 else None
        if key is not None and key not in current and key in older:
            mixed = sorted(str(k) for k in params if str(k).lower() in current)
            why = (f"{plugin.type} in router {table.router} reads {show_value(path[0])} only in its older flat "
                   f"spelling ({', '.join(p.name for p in older[key])}), which cannot be mixed with "
                   f"{', '.join(mixed)}; write all parameters in one spelling ({_STRICT})")
        out.append((path, why))
    return out


def _fields(table, kind: str, fields, params: dict, path: tuple) -> list[tuple[tuple, str]]:
    """Every key of ``params`` (at ``path`` inside a plugin's parameters) against ``fields``."""
    known = {p.name.lower(): p for p in fields}
    out = []
    for key, value in params.items():
        field = known.get(str(key).lower())
        if field is None:
            names = [p.name for p in fields]
            where = f"{kind} in router {table.router}" if not path else \
                f"{kind} parameter {'.'.join(map(str, path))} in router {table.router}"
            has = "parameter" if not path else "key"
            out.append((path + (key,), f"{where} has no {has} {show_value(key)}{did_you_mean(key, names)}; it takes: "
                                       f"{', '.join(names) if names else 'none'} ({_STRICT})"))
            continue
        if value is None:
            continue
        if not _type_ok(field.type, value):
            shown = ".".join(map(str, path + (field.name,)))
            out.append((path + (key,), f"{kind} parameter {shown} takes {_a(field.type)}, found {show_value(value)}"))
        elif field.fields is not None and isinstance(value, dict):
            out += _fields(table, kind, field.fields, value, path + (field.name,))
    return out


def _a(kind: str) -> str:
    return {"integer": "a whole number", "number": "a number", "boolean": "true or false", "string": "a string",
            "array": "a list", "object": "a mapping"}.get(kind, kind)


def epp_errors(table, config, where: Where, base: tuple) -> list:
    """One error per problem of ``config`` (written at ``base`` of the file ``where`` maps)."""
    return [fail(why, where, base + path) for path, why in epp_problems(table, config)]


def check_epp_config(table, config, where: Where, base: tuple) -> None:
    """Raise every problem of ``config`` (written at ``base`` of the file ``where`` maps) at once."""
    raise_all(epp_errors(table, config, where, base))


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
