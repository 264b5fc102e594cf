-- Argo CD health of a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), from the status the
-- LWS controller v0.10.0 writes: readyReplicas, updatedReplicas, observedGeneration and
-- the mutually exclusive conditions Available (every group ready and up to date),
-- Progressing (a group not ready yet) and UpdateInProgress (a rolling update).
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

-- Seconds since an RFC 3339 UTC time (as the API server writes it), or nil.
local function since(stamp)
  if type(stamp) ~= "string" then
    return nil
  end
  local y, mo, d, h, mi, s = string.match(stamp, "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if y == nil then
    return nil
  end
  local t = os.time({year = tonumber(y), month = tonumber(mo), day = tonumber(d),
                     hour = tonumber(h), min = tonumber(mi), sec = tonumber(s), isdst = false})
  if t == nil then
    return nil
  end
  -- os.time reads the fields as local time: add back the zone's offset from UTC, which
  -- is how far the same reading of the current UTC fields falls from the current time.
  local now = os.time()
  return now - t + (os.time(os.date("!*t")) - now)
end

local function deadline(meta)
  local value = tonumber(map(meta.annotations)["manifesto.llm-d.ai/progress-deadline-seconds"])
  if value == nil or value <= 0 then
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

if observed == nil or (generation ~= nil and observed < generation) then
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
