-- Argo CD health of a DisaggregatedSet (disaggregatedset.x-k8s.io/v1), from the types of
-- lws v0.10.0 (api/disaggregatedset/v1/disaggregatedset_types.go). Its status declares
-- roleStatuses (replicas, readyReplicas, updatedReplicas per role) and conditions of the
-- standard types Available, Progressing and Degraded, but the controller at that tag
-- writes none of them: it creates one LeaderWorkerSet per role and slice and leaves the
-- DisaggregatedSet's own status empty.
--
-- So, in order:
-- Suspended: every role with inline replicas (scaling mode not External) is at zero, as
--   the idle-shutdown controller (or a user) leaves it; the API allows zero only for all
--   of them at once.
-- Conditions, when a controller writes them: Degraded=True is Degraded; a condition for an
--   older generation is Progressing; Available=True is Healthy; Progressing=True is
--   Progressing, or Degraded past the progress deadline (annotation
--   manifesto.llm-d.ai/progress-deadline-seconds, default 3600 s), as for LeaderWorkerSet.
-- roleStatuses alone: Healthy when each role has its groups ready and updated.
-- No status at all (lws v0.10.0): Healthy, saying that readiness shows only on the
--   LeaderWorkerSets it owns. Argo CD waits for Healthy before a later sync wave, so a
--   Progressing that nothing would ever end would hold the routing objects back forever.
local hs = {}
local DEFAULT_DEADLINE = 3600

-- A field of a half-written object may be missing or of another type: read defensively.
local function map(value)
  if type(value) == "table" then
    return value
  end
  return {}
end

local function number(value, default)
  if type(value) == "number" then
    return value
  end
  return default
end

local function text(value)
  if type(value) == "string" then
    return value
  end
  return ""
end

local function condition(status, kind)
  for _, c in ipairs(map(status.conditions)) do
    if type(c) == "table" and c.type == kind and c.status == "True" then
      return c
    end
  end
  return nil
end

-- a // b for whole numbers, without the math library.
local function div(a, b)
  return (a - a % b) / b
end

-- Seconds since an RFC 3339 UTC time (as the API server writes it: 2026-01-02T03:04:05Z),
-- or nil. Counted from the fields, not with os.time(table): gopher-lua (Argo CD's Lua) reads
-- a date table in the controller's local zone and ignores isdst, so any conversion through
-- it is an hour off across a daylight-saving change. Fields out of range carry over (month
-- 13 is January of the next year), as mktime does; a year outside 1..9999 gives nil.
local function since(stamp)
  if type(stamp) ~= "string" then
    return nil
  end
  local y, mo, d, h, mi, s = string.match(stamp, "^(%d%d%d%d)-(%d%d)-(%d%d)T(%d%d):(%d%d):(%d%d)")
  if y == nil then
    return nil
  end
  y, mo, d, h, mi, s = tonumber(y), tonumber(mo), tonumber(d), tonumber(h), tonumber(mi), tonumber(s)
  y = y + div(mo - 1, 12)
  mo = (mo - 1) % 12 + 1
  if y < 1 or y > 9999 then
    return nil
  end
  -- Days from 1970-01-01 to the first of the month (the civil-calendar count over 400-year eras).
  if mo <= 2 then
    y = y - 1
  end
  local era = div(y, 400)
  local year = y - era * 400
  local day = div(153 * ((mo + 9) % 12) + 2, 5)
  local days = era * 146097 + year * 365 + div(year, 4) - div(year, 100) + day - 719468
  return os.time() - ((days + d - 1) * 86400 + h * 3600 + mi * 60 + s)
end

-- The progress deadline in seconds: the annotation when it is whole seconds written in 1 to 9
-- digits, else the default. (Lua 5.1 and gopher-lua read other number forms differently:
-- gopher-lua's tonumber gives nil for "1e3".)
local function deadline(meta)
  local value = map(meta.annotations)["manifesto.llm-d.ai/progress-deadline-seconds"]
  if type(value) ~= "string" or string.match(value, "^%d+$") == nil or string.len(value) > 9 then
    return DEFAULT_DEADLINE
  end
  value = tonumber(value)
  if value <= 0 then
    return DEFAULT_DEADLINE
  end
  return value
end

local meta = map(obj.metadata)
local spec = map(obj.spec)
local status = map(obj.status)
local slices = number(spec.slices, 1)
local generation = number(meta.generation, nil)

-- Roles in spec order: name, and the groups wanted per slice (nil: set by an autoscaler).
local roles = {}
for _, r in ipairs(map(spec.roles)) do
  if type(r) == "table" then
    local wanted = nil
    if map(r.scaling).mode ~= "External" then
      wanted = number(map(r.spec).replicas, 1)
    end
    roles[#roles + 1] = {name = text(r.name), wanted = wanted}
  end
end

local inline, idle = 0, 0
for _, r in ipairs(roles) do
  if r.wanted ~= nil then
    inline = inline + 1
    if r.wanted == 0 then
      idle = idle + 1
    end
  end
end
if inline > 0 and idle == inline then
  hs.status = "Suspended"
  hs.message = "Every role is scaled to zero (idle shutdown, or by hand); scale them up to serve again"
  return hs
end

-- "prefill 1/2, decode 2/2 groups ready" from roleStatuses, or nil when there are none.
local function ready_summary()
  local seen = {}
  for _, s in ipairs(map(status.roleStatuses)) do
    if type(s) == "table" and type(s.name) == "string" then
      seen[s.name] = s
    end
  end
  local parts, complete = {}, true
  for _, r in ipairs(roles) do
    local s = seen[r.name]
    if s == nil then
      return nil, false
    end
    local want = number(s.replicas, 0)
    if r.wanted ~= nil then
      want = r.wanted * slices
    end
    local ready, updated = number(s.readyReplicas, 0), number(s.updatedReplicas, 0)
    if ready < want or updated < want then
      complete = false
    end
    parts[#parts + 1] = r.name .. " " .. ready .. "/" .. want
  end
  if #parts == 0 then
    return nil, false
  end
  return table.concat(parts, ", ") .. " groups ready", complete
end

local degraded = condition(status, "Degraded")
if degraded ~= nil then
  hs.status = "Degraded"
  hs.message = text(degraded.reason) .. ": " .. text(degraded.message)
  return hs
end

local available = condition(status, "Available")
local progressing = condition(status, "Progressing")
local current = available or progressing
if current ~= nil then
  local observed = number(current.observedGeneration, nil)
  if generation ~= nil and observed ~= nil and observed < generation then
    hs.status = "Progressing"
    hs.message = "Waiting for the DisaggregatedSet controller to observe the latest spec"
    return hs
  end
end

local summary, complete = ready_summary()
if available ~= nil then
  hs.status = "Healthy"
  hs.message = summary or ("All " .. #roles .. " roles are ready")
  return hs
end

if progressing ~= nil then
  local what = summary or "Roles are progressing"
  local limit = deadline(meta)
  local elapsed = since(progressing.lastTransitionTime)
  if elapsed ~= nil and elapsed > limit then
    hs.status = "Degraded"
    hs.message = what .. "; still progressing since " .. progressing.lastTransitionTime
      .. ", past the progress deadline of " .. limit .. " s (see its LeaderWorkerSets and the vLLM logs)"
    return hs
  end
  hs.status = "Progressing"
  hs.message = what
  return hs
end

if summary ~= nil then
  if complete then
    hs.status = "Healthy"
  else
    hs.status = "Progressing"
  end
  hs.message = summary
  return hs
end

hs.status = "Healthy"
hs.message = "No status from the DisaggregatedSet controller (lws v0.10.0 writes none); readiness shows on its "
  .. "LeaderWorkerSets"
return hs
