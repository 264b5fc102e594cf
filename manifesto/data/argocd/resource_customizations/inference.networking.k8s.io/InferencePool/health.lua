-- Argo CD health of an InferencePool (inference.networking.k8s.io/v1), from the status
-- types of gateway-api-inference-extension v1.6.0 (api/v1/inferencepool_types.go). Nothing
-- in that repository writes the status: each parent (a Gateway whose implementation
-- supports InferencePool backends) adds an entry to status.parents with the conditions
-- Accepted and ResolvedRefs. The default standalone Envoy is no parent, so a pool behind
-- it has no status at all.
--
-- Suspended: the idle-shutdown controller stamps the annotation
-- manifesto.llm-d.ai/idle-shutdown-at when it scales the instance to zero; the rendered
-- pool carries it empty, so applying the instance again (which wakes it) clears it.
-- Degraded: a parent says Accepted or ResolvedRefs is False.
-- Progressing: a parent has not decided yet (no conditions, Unknown such as the Pending
-- reason, or conditions for an older generation).
-- Healthy: every parent accepted it, or no parent reports on it (standalone Envoy).
local hs = {}
local IDLE = "manifesto.llm-d.ai/idle-shutdown-at"

-- A field of a half-written object may be missing or of another type: read defensively.
local function map(value)
  if type(value) == "table" then
    return value
  end
  return {}
end

local function text(value)
  if type(value) == "string" then
    return value
  end
  return ""
end

local function find(conditions, kind)
  for _, c in ipairs(map(conditions)) do
    if type(c) == "table" and c.type == kind then
      return c
    end
  end
  return nil
end

local function parent_name(p)
  local ref = map(p.parentRef)
  local name = text(ref.name)
  if text(ref.namespace) ~= "" then
    name = text(ref.namespace) .. "/" .. name
  end
  local kind = text(ref.kind)
  if kind == "" then
    kind = "Gateway"
  end
  return kind .. " " .. name
end

local meta = map(obj.metadata)
local since = text(map(meta.annotations)[IDLE])
if since ~= "" then
  hs.status = "Suspended"
  hs.message = "Scaled to zero by idle shutdown at " .. since .. "; apply the instance again to serve"
  return hs
end

local generation = meta.generation
local parents = {}
for _, p in ipairs(map(map(obj.status).parents)) do
  if type(p) == "table" then
    parents[#parents + 1] = p
  end
end

if #parents == 0 then
  hs.status = "Healthy"
  hs.message = "No parent reports on this pool (standalone Envoy, or no Gateway routes to it)"
  return hs
end

local waiting = nil
for _, p in ipairs(parents) do
  for _, kind in ipairs({"Accepted", "ResolvedRefs"}) do
    local c = find(p.conditions, kind)
    if c ~= nil and c.status == "False" then
      hs.status = "Degraded"
      hs.message = parent_name(p) .. ": " .. kind .. " is False (" .. text(c.reason) .. "): " .. text(c.message)
      return hs
    end
  end
  if waiting == nil then
    local accepted = find(p.conditions, "Accepted")
    if accepted == nil then
      waiting = parent_name(p) .. " has not reported yet"
    elseif accepted.status ~= "True" then
      waiting = parent_name(p) .. ": Accepted is " .. text(accepted.status) .. " (" .. text(accepted.reason) .. ")"
    elseif type(generation) == "number" and type(accepted.observedGeneration) == "number"
        and accepted.observedGeneration < generation then
      waiting = parent_name(p) .. " has not observed the latest spec yet"
    end
  end
end

if waiting ~= nil then
  hs.status = "Progressing"
  hs.message = waiting
  return hs
end

hs.status = "Healthy"
hs.message = "Accepted by " .. #parents .. " parent(s)"
return hs
