"""Run an Argo CD health script close to the way Argo CD v3.5 does, under lupa's Lua 5.1:
a quick pre-check. The verdict is the gopher-lua engine's (``argocd_engine``): Lua 5.1
reads numbers (``tonumber("1e4")``), dates and numbers in messages differently.

Argo CD runs ``health.lua`` in gopher-lua (Lua 5.1) with the live object as the global
``obj`` and takes the table the script returns (``status`` and ``message``). Its VM opens
the package, base and table libraries and a safe ``os`` with only ``time`` and ``date``
(util/lua/lua.go and oslib_safe.go at v3.5.1); its bundled scripts also use the string
library. This runner gives lupa's Lua 5.1 those globals and nothing else (no io, math,
debug, coroutine or file loading), converts the object as Argo CD's JSON decoding does
(mappings to tables, lists to 1-based arrays without their null items, numbers to Lua
numbers), and bounds the run
by an instruction count, as Argo CD bounds it by a one-second deadline.
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["HealthError", "STATUSES", "run_health", "health_cases"]

#: Argo CD's health statuses (gitops-engine pkg/health).
STATUSES = ("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown")

#: The globals a script sees.
_KEEP = ("assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber", "tostring", "type",
         "unpack", "xpcall", "rawequal", "rawget", "rawset", "setmetatable", "getmetatable", "_G", "_VERSION",
         "table", "string", "os", "require", "package")

#: Builds the sandbox and returns the function that compiles and runs one script in it.
_SANDBOX = """
local keep = ...
local loadstring, sethook = loadstring, debug.sethook
local cocreate, coresume = coroutine.create, coroutine.resume
local allowed = {}
for i = 1, #keep do allowed[keep[i]] = true end
local names = {}
for name, _ in pairs(_G) do names[#names + 1] = name end
for _, name in ipairs(names) do
  if not allowed[name] then _G[name] = nil end
end
local safe_os = {time = os.time, date = os.date}
os = safe_os
for name, _ in pairs(package.loaded) do
  if name ~= "string" and name ~= "table" and name ~= "_G" then package.loaded[name] = nil end
end
package.loaded.os = safe_os
package.preload = {}
package.path, package.cpath, package.loaders = "", "", {function(n) return "\\n\\tno module " .. n end}
return function(source, limit)
  local fn, err = loadstring(source, "=health.lua")
  if fn == nil then return false, "does not compile: " .. err end
  local co = cocreate(fn)
  sethook(co, function() error("ran past its instruction budget", 0) end, "", limit)
  return coresume(co)
end
"""


class HealthError(Exception):
    """The script failed, ran too long, or returned something that is not a health status."""


def _to_lua(lua, value):
    if isinstance(value, dict):
        return lua.table_from({k: _to_lua(lua, v) for k, v in value.items()})
    if isinstance(value, list):  # Argo CD drops null items (util/lua decodeValue)
        return lua.table_from([_to_lua(lua, v) for v in value if v is not None])
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)  # YAML made a date of it; Argo CD sees the JSON string


def run_health(script: str, obj: dict, max_instructions: int = 1_000_000) -> dict:
    """``{"status": ..., "message": ...}`` as Argo CD would report it for ``obj``."""
    from lupa import lua51

    lua = lua51.LuaRuntime(register_eval=False, register_builtins=False, unpack_returned_tuples=True)
    run = lua.execute(_SANDBOX, lua.table_from(list(_KEEP)))
    lua.globals().obj = _to_lua(lua, obj)
    try:
        ok, result = run(script, max_instructions)
    except lua51.LuaError as exc:  # an error raised while resuming
        raise HealthError(f"health.lua failed: {exc}") from None
    if not ok:
        raise HealthError(f"health.lua failed: {result}")
    if result is None or lua51.lua_type(result) != "table":
        raise HealthError("health.lua returned no table")
    out = {k: result[k] for k in ("status", "message") if result[k] is not None}
    if out.get("status") not in STATUSES:
        raise HealthError(f"health.lua returned status {out.get('status')!r}")
    return out


def health_cases(folder: Path) -> list[tuple[str, dict, dict]]:
    """(input path, object, expected health) for every case of ``folder/health_test.yaml``."""
    tests = yaml.safe_load((folder / "health_test.yaml").read_text(encoding="utf-8"))["tests"]
    return [(t["inputPath"], yaml.safe_load((folder / t["inputPath"]).read_text(encoding="utf-8")), t["healthStatus"])
            for t in tests]
