"""The health of a live object, as the Argo CD checks in ``manifesto/data/argocd`` give it.

One function per kind that has a check (LeaderWorkerSet, InferencePool, DisaggregatedSet),
each a line-for-line reading of its ``health.lua``: the same order of tests, the same
status and the same message, so ``manifesto status`` and Argo CD agree on every object
(``tests/argocd/test_health_agreement.py`` runs both over every test object). Objects come
from the cluster: every field is read defensively, as the scripts do, and a half-written
object still gets a status.
"""

from __future__ import annotations

import math
import re
import time

__all__ = ["HEALTH_ORDER", "health", "lws_health", "pool_health", "dset_health", "worst"]

#: Argo CD's health statuses, from best to worst (gitops-engine pkg/health, IsWorse).
HEALTH_ORDER = ("Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown")

DEADLINE_ANNOTATION = "manifesto.llm-d.ai/progress-deadline-seconds"
DEFAULT_DEADLINE = 3600

#: An RFC 3339 time's fields, as the scripts match them (Lua's %d is an ASCII digit).
_STAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})")
#: A deadline annotation the scripts read: whole seconds in 1 to 9 ASCII digits.
_SECONDS = re.compile(r"[0-9]{1,9}")


# -- reading an object as the Lua scripts do ---------------------------------------------

def _map(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    """A Lua ``ipairs`` over the value: a list's items, nothing for anything else. Argo CD
    drops a list's null items when it builds the script's ``obj`` (util/lua decodeValue
    appends each item, and gopher-lua's LTable.Append ignores nil), so they are skipped."""
    return [v for v in value if v is not None] if isinstance(value, list) else []


def _number(value, default):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _show(value) -> str:
    """A number as gopher-lua (Argo CD's Lua) concatenates it (LNumber.String): a whole
    number in int64's range as an integer, any other as Go's ``fmt.Sprint`` of a float64."""
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value == int(value) and -2**63 <= value < 2**63:
        return str(int(value))
    return _go_float(value)


def _go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (strconv 'g', shortest): the shortest digits that read
    back, with an exponent (``1.25e+07``, ``1e-05``) when it is below -4 or at least 6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if value < 0 else ""
    # repr gives the same shortest round-trip digits; reread them as digits and exponent.
    text = repr(abs(value))
    base, _, e = text.partition("e")
    whole, _, frac = base.partition(".")
    run = (whole + frac).lstrip("0")
    exponent = (int(e) if e else 0) + len(whole) - 1 - (len(whole + frac) - len(run))
    digits = run.rstrip("0") or "0"
    if exponent < -4 or exponent >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    if len(digits) <= exponent + 1:
        return sign + digits + "0" * (exponent + 1 - len(digits))
    return f"{sign}{digits[:exponent + 1]}.{digits[exponent + 1:]}"


def _true(status: dict, kind: str) -> dict | None:
    for c in _list(status.get("conditions")):
        if isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True":
            return c
    return None


def _since(stamp, now: float) -> float | None:
    """Seconds since an RFC 3339 UTC time (the date fields carried over, as mktime does;
    counted from the fields, as the scripts do, in no local zone)."""
    import datetime

    m = _STAMP.match(stamp) if isinstance(stamp, str) else None
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups())
    y, mo = y + (mo - 1) // 12, (mo - 1) % 12 + 1
    try:
        day = datetime.date(y, mo, 1).toordinal() - datetime.date(1970, 1, 1).toordinal() + d - 1
    except (ValueError, OverflowError):
        return None
    return now - (day * 86400 + h * 3600 + mi * 60 + s)


def _deadline(meta: dict) -> int:
    """The annotation when it is whole seconds in 1 to 9 digits and not zero, else the default."""
    value = _map(meta.get("annotations")).get(DEADLINE_ANNOTATION)
    if not isinstance(value, str) or not _SECONDS.fullmatch(value) or int(value) <= 0:
        return DEFAULT_DEADLINE
    return int(value)


def _verdict(status: str, message: str) -> dict:
    return {"status": status, "message": message}


# -- the checks ----------------------------------------------------------------------------

def lws_health(obj: dict, now: float | None = None) -> dict:
    """LeaderWorkerSet: leaderworkerset.x-k8s.io/LeaderWorkerSet/health.lua."""
    now = time.time() if now is None else now
    meta, spec, status = _map(obj.get("metadata")), _map(obj.get("spec")), _map(obj.get("status"))
    wanted = _number(spec.get("replicas"), 1)
    ready = _number(status.get("readyReplicas"), 0)
    updated = _number(status.get("updatedReplicas"), 0)
    observed = _number(status.get("observedGeneration"), None)
    generation = _number(meta.get("generation"), None)
    if wanted == 0:
        return _verdict("Suspended", "Scaled to zero groups (idle shutdown, or by hand); scale it up to serve again")
    # observedGeneration: from lws v0.9.0; an older controller's conditions stand as they are.
    reported = _true(status, "Available") or _true(status, "Progressing") or _true(status, "UpdateInProgress")
    if (observed is None and reported is None) or (observed is not None and generation is not None
                                                   and observed < generation):
        return _verdict("Progressing", "Waiting for the LeaderWorkerSet controller to observe the latest spec")
    if _true(status, "Available") is not None and ready >= wanted:
        return _verdict("Healthy", f"All {_show(wanted)} groups are ready")
    rolling = _true(status, "UpdateInProgress")
    started = _true(status, "Progressing") or rolling
    if rolling is not None:
        what = f"Rolling update: {_show(updated)} of {_show(wanted)} groups updated, {_show(ready)} ready"
    else:
        what = f"{_show(ready)} of {_show(wanted)} groups ready"
    limit = _deadline(meta)
    elapsed = _since(started.get("lastTransitionTime"), now) if started is not None else None
    if elapsed is not None and elapsed > limit:
        return _verdict("Degraded", f"{what}; still progressing since {started['lastTransitionTime']}, past the "
                                    f"progress deadline of {_show(limit)} s (see the pods' events and the vLLM logs)")
    return _verdict("Progressing", what)


def pool_health(obj: dict, now: float | None = None) -> dict:
    """InferencePool: inference.networking.k8s.io/InferencePool/health.lua."""
    from manifesto.render.k8s.idle import IDLE_ANNOTATION

    meta = _map(obj.get("metadata"))
    since = _text(_map(meta.get("annotations")).get(IDLE_ANNOTATION))
    if since:
        return _verdict("Suspended", f"Scaled to zero by idle shutdown at {since}; apply the instance again to serve")
    generation = meta.get("generation")
    parents = [p for p in _list(_map(obj.get("status")).get("parents")) if isinstance(p, dict)]
    if not parents:
        return _verdict("Healthy", "No parent reports on this pool (standalone Envoy, or no Gateway routes to it)")

    def find(conditions, kind):
        return next((c for c in _list(conditions) if isinstance(c, dict) and c.get("type") == kind), None)

    def name(p: dict) -> str:
        ref = _map(p.get("parentRef"))
        shown = f"{_text(ref.get('namespace'))}/{_text(ref.get('name'))}" if _text(ref.get("namespace")) \
            else _text(ref.get("name"))
        return f"{_text(ref.get('kind')) or 'Gateway'} {shown}"

    waiting = None
    for p in parents:
        for kind in ("Accepted", "ResolvedRefs"):
            c = find(p.get("conditions"), kind)
            if c is not None and c.get("status") == "False":
                return _verdict("Degraded", f"{name(p)}: {kind} is False ({_text(c.get('reason'))}): "
                                            f"{_text(c.get('message'))}")
        if waiting is None:
            accepted = find(p.get("conditions"), "Accepted")
            if accepted is None:
                waiting = f"{name(p)} has not reported yet"
            elif accepted.get("status") != "True":
                waiting = f"{name(p)}: Accepted is {_text(accepted.get('status'))} ({_text(accepted.get('reason'))})"
            elif (_number(generation, None) is not None and _number(accepted.get("observedGeneration"), None)
                  is not None and accepted["observedGeneration"] < generation):
                waiting = f"{name(p)} has not observed the latest spec yet"
    if waiting is not None:
        return _verdict("Progressing", waiting)
    return _verdict("Healthy", f"Accepted by {len(parents)} parent(s)")


def dset_health(obj: dict, now: float | None = None) -> dict:
    """DisaggregatedSet: disaggregatedset.x-k8s.io/DisaggregatedSet/health.lua."""
    now = time.time() if now is None else now
    meta, spec, status = _map(obj.get("metadata")), _map(obj.get("spec")), _map(obj.get("status"))
    slices = _number(spec.get("slices"), 1)
    generation = _number(meta.get("generation"), None)
    roles = []  # (name, groups wanted per slice, or None when an autoscaler sets them)
    for r in _list(spec.get("roles")):
        if isinstance(r, dict):
            external = _map(r.get("scaling")).get("mode") == "External"
            roles.append((_text(r.get("name")), None if external else _number(_map(r.get("spec")).get("replicas"), 1)))
    inline = [wanted for _, wanted in roles if wanted is not None]
    if inline and all(wanted == 0 for wanted in inline):
        return _verdict("Suspended", "Every role is scaled to zero (idle shutdown, or by hand); scale them up to serve "
                                     "again")

    def ready_summary() -> tuple[str | None, bool]:
        seen = {s["name"]: s for s in _list(status.get("roleStatuses"))
                if isinstance(s, dict) and isinstance(s.get("name"), str)}
        parts, complete = [], True
        for role, wanted in roles:
            s = seen.get(role)
            if s is None:
                return None, False
            want = _number(s.get("replicas"), 0) if wanted is None else wanted * slices
            ready, updated = _number(s.get("readyReplicas"), 0), _number(s.get("updatedReplicas"), 0)
            if ready < want or updated < want:
                complete = False
            parts.append(f"{role} {_show(ready)}/{_show(want)}")
        if not parts:
            return None, False
        return ", ".join(parts) + " groups ready", complete

    degraded = _true(status, "Degraded")
    if degraded is not None:
        return _verdict("Degraded", f"{_text(degraded.get('reason'))}: {_text(degraded.get('message'))}")
    available = _true(status, "Available")
    progressing = _true(status, "Progressing")
    current = available or progressing
    if current is not None:
        observed = _number(current.get("observedGeneration"), None)
        if generation is not None and observed is not None and observed < generation:
            return _verdict("Progressing", "Waiting for the DisaggregatedSet controller to observe the latest spec")
    summary, complete = ready_summary()
    if available is not None:
        return _verdict("Healthy", summary or f"All {len(roles)} roles are ready")
    if progressing is not None:
        what = summary or "Roles are progressing"
        limit = _deadline(meta)
        elapsed = _since(progressing.get("lastTransitionTime"), now)
        if elapsed is not None and elapsed > limit:
            return _verdict("Degraded", f"{what}; still progressing since {progressing['lastTransitionTime']}, past "
                                        f"the progress deadline of {_show(limit)} s (see its LeaderWorkerSets and the "
                                        "vLLM logs)")
        return _verdict("Progressing", what)
    if summary is not None:
        return _verdict("Healthy" if complete else "Progressing", summary)
    return _verdict("Healthy", "No status from the DisaggregatedSet controller (lws v0.10.0 writes none); readiness "
                               "shows on its LeaderWorkerSets")


#: Kind -> check, for the kinds manifesto ships an Argo CD health check for.
CHECKS = {"LeaderWorkerSet": lws_health, "InferencePool": pool_health, "DisaggregatedSet": dset_health}


#: An RFC 3339 time as Go's time.Parse(time.RFC3339) reads one (ASCII digits, "T", "Z" or an offset).
_RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,][0-9]+)?"
                      r"(Z|([+-])([0-9]{2}):([0-9]{2}))")
HOOK_FINALIZER = "argocd.argoproj.io/hook-finalizer"


def _pending_deletion(meta: dict) -> bool:
    """gitops-engine's GetResourceHealth, before any check: ``metadata.deletionTimestamp`` is a
    valid RFC 3339 time other than Go's zero time, and ``metadata.finalizers`` (a list of
    strings, else none) lacks Argo CD's hook finalizer."""
    import datetime

    m = _RFC3339.fullmatch(meta.get("deletionTimestamp")) if isinstance(meta.get("deletionTimestamp"), str) else None
    if m is None:
        return False
    y, mo, d, h, mi, sec = (int(g) for g in m.groups()[:6])
    try:
        offset = 0 if m[7] == "Z" else (1 if m[8] == "+" else -1) * (int(m[9]) * 60 + int(m[10]))
        if m[7] != "Z" and (int(m[9]) > 24 or int(m[10]) > 60):  # Go takes +24:00 and +23:60
            return False
        local = datetime.datetime(y, mo, d, h, mi, sec)
    except ValueError:
        return False
    try:
        if local - datetime.timedelta(minutes=offset) == datetime.datetime(1, 1, 1):  # time.Time.IsZero
            return False
    except OverflowError:  # an instant before year 1: not Go's zero time
        pass
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
        finalizers = []
    return HOOK_FINALIZER not in finalizers


def health(obj: dict, now: float | None = None) -> dict | None:
    """``{"status", "message"}`` of a live object, or None when its kind has no check. An
    object being deleted is Progressing ("Pending deletion") whatever its check says, as Argo
    CD decides before it runs one."""
    check = CHECKS.get(obj.get("kind")) if isinstance(obj, dict) else None
    if check is None:
        return None
    if _pending_deletion(_map(obj.get("metadata"))):
        return _verdict("Progressing", "Pending deletion")
    return check(obj, now)


def worst(statuses) -> str | None:
    """The worst of some health statuses, as Argo CD aggregates an application's."""
    ranked = [s for s in statuses if s in HEALTH_ORDER]
    return max(ranked, key=HEALTH_ORDER.index) if ranked else None
