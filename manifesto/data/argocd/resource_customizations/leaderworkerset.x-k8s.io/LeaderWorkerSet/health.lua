-- Argo CD health of a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), from the status the
-- LWS controller writes (v0.10.0; before v0.9.0 without observedGeneration): readyReplicas,
-- updatedReplicas, observedGeneration and the mutually exclusive conditions Available
-- (every group ready and up to date), Progressing (a group not ready yet) and
-- UpdateInProgress (a rolling update).
--
-- The controller has no failure condition, so Degraded follows Deployment's rule: still
-- progressing longer than the progress deadline (annotation
-- manifesto.llm-d.ai/progress-deadline-seconds, default 3600 s: weights download and load
-- plus vLLM's engine start-up). Zero replicas, as the idle-shutdown controller leaves an
-- instance, is Suspended.
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
local wanted = number(spec.replicas, 1)
local ready = number(status.readyReplicas, 0)
local updated = number(status.updatedReplicas, 0)
local observed = number(status.observedGeneration, nil)
local generation = number(meta.generation, nil)

if wanted == 0 then
  hs.status = "Suspended"
  hs.message = "Scaled to zero groups (idle shutdown, or by hand); scale it up to serve again"
  return hs
end

-- status.observedGeneration is written from lws v0.9.0 on; an older controller writes the
-- same conditions without it, and its status can only be taken as it stands. With neither,
-- no controller has reported on the object yet.
local reported = condition(status, "Available") or condition(status, "Progressing")
  or condition(status, "UpdateInProgress")
if (observed == nil and reported == nil) or (observed ~= nil and generation ~= nil and observed < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the LeaderWorkerSet controller to observe the latest spec"
  return hs
end

if condition(status, "Available") ~= nil and ready >= wanted then
  hs.status = "Healthy"
  hs.message = "All " .. wanted .. " groups are ready"
  return hs
end

local rolling = condition(status, "UpdateInProgress")
local started = condition(status, "Progressing") or rolling
local what
if rolling ~= nil then
  what = "Rolling update: " .. updated .. " of " .. wanted .. " groups updated, " .. ready .. " ready"
else
  what = ready .. " of " .. wanted .. " groups ready"
end

local limit = deadline(meta)
local elapsed = nil
if started ~= nil then
  elapsed = since(started.lastTransitionTime)
end
if elapsed ~= nil and elapsed > limit then
  hs.status = "Degraded"
  hs.message = what .. "; still progressing since " .. started.lastTransitionTime .. ", past the progress deadline of "
    .. limit .. " s (see the pods' events and the vLLM logs)"
  return hs
end

hs.status = "Progressing"
hs.message = what
return hs
