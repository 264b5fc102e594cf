"""A reviewer's diff of two builds: what each changed artifact means for a running deployment.

The facts come from the artifacts themselves (the bytes ``deploy`` would apply), so a change
of code or defaults shows up as surely as a change of a spec. For each artifact present on
either side it reports:

- per role: pods, GPUs, parallelism (TP/PP/DP/EP as vLLM will be told), the vLLM image and
  the ``vllm serve`` arguments added, removed or changed;
- the endpoint picker's plugins added or removed;
- every changed object with how the change reaches the cluster (``Impact``):
  *in place* (ConfigMap, Service, RBAC, routing objects, a replica count), *rolling* (a
  Deployment's or LeaderWorkerSet's pod template), or *recreate* (a LeaderWorkerSet's group
  size, a renamed DRA claim template, an immutable selector, a Job, a removed workload, any
  change of a Slurm batch script: every pod or job is replaced).

Everything here is a pure function of artifact texts; ``git_artifacts`` is the one place that
reads a git revision.
"""

from __future__ import annotations

import enum
import shlex

import msgspec

__all__ = ["Impact", "RoleFacts", "ArtifactDiff", "BuildDiff", "artifact_facts", "diff_artifacts",
           "compare", "diff_builds", "git_artifacts", "worktree_artifacts", "format_text", "format_markdown"]

DIGEST_ANNOTATION = "manifesto.llm-d.ai/artifact-digest"
ROLE_LABEL = "manifesto.llm-d.ai/role"
COMPONENT_LABEL = "app.kubernetes.io/component"
WORKLOADS = ("Deployment", "LeaderWorkerSet", "Job", "StatefulSet")
# Flags the role summary already states (TP/PP/DP/EP), or that the launch script derives per node.
SUMMARISED = ("--tensor-parallel-size", "--pipeline-parallel-size", "--enable-expert-parallel")


class Impact(str, enum.Enum):
    """How a change reaches a running deployment; ``worst`` orders them, mildest first."""

    NONE = "none"
    IN_PLACE = "in place"
    ROLLING = "rolling"
    RECREATE = "recreate"

    @property
    def label(self) -> str:
        return self.value


_ORDER = {impact: i for i, impact in enumerate(Impact)}


def worst(impacts) -> Impact:
    """The most disruptive of ``impacts`` (NONE when there are none)."""
    return max(impacts, key=_ORDER.__getitem__, default=Impact.NONE)


class RoleFacts(msgspec.Struct, frozen=True):
    name: str
    kind: str
    pods: int
    gpus: int
    nodes: int = 0  # as resolve.budget counts them: pods packed onto nodes (Slurm: a node per pod)
    hourly_cost: float | None = None  # when the cluster profile prices the accelerator
    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: bool = False
    image: str = ""
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # NAME=value of the model server container (valueFrom shown as <ref>)
    resources: tuple[str, ...] = ()


class ObjectChange(msgspec.Struct, frozen=True):
    kind: str
    name: str
    change: str  # added, removed, changed
    impact: Impact
    why: str


class Totals(msgspec.Struct, frozen=True):
    """What an artifact, or a cluster's artifacts, ask for; cost None when not every part is priced."""

    gpus: int = 0
    nodes: int = 0
    pods: int = 0
    hourly_cost: float | None = 0.0

    def __add__(self, other: "Totals") -> "Totals":
        cost = None if self.hourly_cost is None or other.hourly_cost is None else \
            round(self.hourly_cost + other.hourly_cost, 4)
        return Totals(self.gpus + other.gpus, self.nodes + other.nodes, self.pods + other.pods, cost)


class ArtifactDiff(msgspec.Struct, frozen=True):
    path: str
    status: str  # added, removed, changed
    impact: Impact
    roles: tuple[str, ...]  # one line per role change, e.g. "decode: TP 8->16, +16 GPUs"
    objects: tuple[ObjectChange, ...]
    before: Totals
    after: Totals


class BuildDiff(msgspec.Struct, frozen=True):
    base: str
    artifacts: tuple[ArtifactDiff, ...]
    totals: dict[str, tuple[Totals, Totals]]  # cluster -> (before, after)
    impact: Impact


# ---------------------------------------------------------------- facts of one artifact

class Facts(msgspec.Struct, frozen=True):
    objects: dict[str, dict]  # "Kind/name" -> object without the artifact digest
    roles: dict[str, RoleFacts]
    plugins: tuple[str, ...]
    epp_config: str  # the endpoint picker's configuration text, "" when there is none


def artifact_facts(path: str, text: str) -> Facts:
    """What a reviewer cares about in one artifact's text."""
    if path.endswith(".sbatch"):
        return _slurm_facts(text)
    from ruamel.yaml import YAML

    docs = [d for d in YAML(typ="safe", pure=True).load_all(text) if isinstance(d, dict)]
    objects = {f"{d.get('kind')}/{(d.get('metadata') or {}).get('name')}": _without_digest(d) for d in docs}
    claims = {o["metadata"]["name"]: _claim_count(o) for o in docs if o.get("kind") == "ResourceClaimTemplate"}
    accel = accelerator_facts(text)
    roles = {}
    for obj in docs:
        if obj.get("kind") in WORKLOADS:
            fact = _workload_facts(obj, claims, accel)
            if fact is not None:
                roles[fact.name] = fact
    config = _epp_config(docs)
    return Facts(objects=objects, roles=roles, plugins=_plugins(config), epp_config=config)


def _without_digest(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k != DIGEST_ANNOTATION}
    meta = {k: v for k, v in meta.items() if k != "annotations"} | ({"annotations": notes} if notes else {})
    return {**obj, "metadata": meta}


def _claim_count(template: dict) -> int:
    total = 0
    for request in (((template.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or []:
        exact = request.get("exactly") or request
        if "gpu" in str(exact.get("deviceClassName", "")).lower():
            total += int(exact.get("count") or 1)
    return total


def _pod_spec(obj: dict) -> tuple[dict, int]:
    """(leader or only pod spec, pods per replica)."""
    spec = obj.get("spec") or {}
    if obj["kind"] == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        template = lwt.get("leaderTemplate") or lwt.get("workerTemplate") or {}
        return template.get("spec") or {}, int(lwt.get("size") or 1)
    if obj["kind"] == "Job":
        return (spec.get("template") or {}).get("spec") or {}, int(spec.get("parallelism") or 1)
    return (spec.get("template") or {}).get("spec") or {}, 1


def accelerator_facts(text: str) -> tuple[int | None, float | None]:
    """(GPUs per node, hourly price per GPU) of the accelerator the artifact was rendered for,
    from the inputs its provenance header carries (the cluster profile and the spec as
    heredocs, an --accelerator flag); (None, None) when the header does not tell."""
    from ruamel.yaml import YAML

    docs, flags = _header_inputs(text)
    try:
        cluster = YAML(typ="safe", pure=True).load(docs.get("MANIFESTO_CLUSTER", "")) or {}
        model = YAML(typ="safe", pure=True).load(docs.get("MANIFESTO_MODEL", docs.get("MANIFESTO_MODEL_1", ""))) or {}
    except Exception:  # noqa: BLE001 - a hand-written header: no facts, not an error
        return None, None
    accels = cluster.get("accelerators") if isinstance(cluster, dict) else None
    if not isinstance(accels, dict) or not isinstance(accels.get("profiles"), dict):
        return None, None
    name = flags.get("--accelerator") or flags.get("--gpu") or (model.get("accelerator") if isinstance(model, dict)
                                                                else None) or accels.get("default")
    profile = accels["profiles"].get(name)
    if not isinstance(profile, dict):
        return None, None
    per_node, price = profile.get("gpus_per_node"), profile.get("hourly_price")
    return (per_node if isinstance(per_node, int) else None,
            float(price) if isinstance(price, (int, float)) and not isinstance(price, bool) else None)


def _header_inputs(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """The heredoc inputs (tag -> text) and the ``--flag value`` pairs of the header command."""
    from manifesto.render.header import regenerate_command

    docs: dict[str, str] = {}
    flags: dict[str, str] = {}
    tag, body = None, []
    for line in (regenerate_command(text) or "").splitlines():
        if tag is not None:
            if line == tag:
                docs[tag], tag, body = "\n".join(body) + "\n", None, []
            else:
                body.append(line)
        elif "<<'" in line:
            tag = line.split("<<'", 1)[1].split("'", 1)[0]
        else:
            words = _split(line.replace("\\", " "))
            for flag, value in zip(words, words[1:]):
                if flag.startswith("--") and not value.startswith("-"):
                    flags.setdefault(flag, value)
    return docs, flags


def _workload_facts(obj: dict, claims: dict[str, int], accel: tuple[int | None, float | None]) -> RoleFacts | None:
    meta = obj.get("metadata") or {}
    role = (meta.get("labels") or {}).get(ROLE_LABEL)
    if role is None:
        return None
    pod, size = _pod_spec(obj)
    replicas = int((obj.get("spec") or {}).get("replicas", 1) or 0)
    containers = pod.get("containers") or []
    main = next((c for c in containers if c.get("name") == "vllm"), containers[0] if containers else {})
    gpus = sum(int(v) for c in containers for k, v in ((c.get("resources") or {}).get("limits") or {}).items()
               if "gpu" in k.lower())
    for ref in pod.get("resourceClaims") or []:
        gpus += claims.get(ref.get("resourceClaimTemplateName", ""), 0)
    script = _script(main)
    args = launch_args(script)
    pods, per_node, price = replicas * size, accel[0], accel[1]
    fits = max(per_node // gpus, 1) if per_node and gpus else 1  # pods sharing a node, as resolve.budget packs them
    return RoleFacts(name=str(role), kind=obj["kind"], pods=pods, gpus=pods * gpus, nodes=-(-pods // fits),
                     hourly_cost=None if price is None else round(pods * gpus * price, 4),
                     tp=_int_flag(args, "--tensor-parallel-size", 1), pp=_int_flag(args, "--pipeline-parallel-size", 1),
                     dp=_int_flag(args, "--data-parallel-size", 1), ep="--enable-expert-parallel" in args,
                     image=str(main.get("image", "")), args=_reviewed_args(script),
                     env=tuple(sorted(f"{e.get('name')}={e['value'] if 'value' in e else '<ref>'}"
                                      for e in main.get("env") or [])),
                     resources=_resources(main.get("resources") or {}))


def _resources(resources: dict) -> tuple[str, ...]:
    """``kind name value`` per request and limit, GPUs left out (the summary states them)."""
    return tuple(f"{side} {key} {value}" for side in ("requests", "limits")
                 for key, value in sorted((resources.get(side) or {}).items()) if "gpu" not in key.lower())


def _script(container: dict) -> str:
    command = container.get("command") or []
    return command[-1] if command and isinstance(command[-1], str) else ""


def launch_args(script: str, *, topology: bool = True) -> list[str]:
    """Flags the launch script gives ``vllm serve``: the ``args=( ... )`` block, plus (with
    ``topology``) the literal flags of its ``args+=(...)`` lines, whose values depend on the node
    and are kept as written."""
    words: list[str] = []
    inside = False
    for line in script.splitlines():
        stripped = line.strip()
        if stripped == "args=(":
            inside = True
        elif inside and stripped == ")":
            inside = False
        elif inside:
            words += _split(stripped)
        elif topology and stripped.startswith("args+=(") and stripped.endswith(")"):
            words += _split(stripped[len("args+=("):-1])
    return _pair_flags(words)


def _reviewed_args(script: str) -> tuple[str, ...]:
    """The serve arguments a reviewer compares: the fixed block, less what the summary states."""
    return tuple(a for a in launch_args(script, topology=False) if a.partition(" ")[0] not in SUMMARISED)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _pair_flags(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        if word.startswith("-") or not out or word == "serve":
            out.append(word)
        elif out[-1].startswith("-") and " " not in out[-1]:
            out[-1] = f"{out[-1]} {word}"
        else:
            out.append(word)
    return out


def _int_flag(args: list[str], flag: str, default: int) -> int:
    for item in args:
        name, _, value = item.partition(" ")
        if name == flag and value.isascii() and value.isdigit():
            return int(value)
    return default


def _epp_config(docs: list[dict]) -> str:
    for obj in docs:
        if obj.get("kind") == "ConfigMap":
            for value in (obj.get("data") or {}).values():
                if "EndpointPickerConfig" in str(value):
                    return str(value)
    return ""


def _plugins(config: str) -> tuple[str, ...]:
    if not config:
        return ()
    from ruamel.yaml import YAML

    data = YAML(typ="safe", pure=True).load(config) or {}
    found = [f"{p.get('type')}" + (f" ({p['name']})" if p.get("name") else "") for p in data.get("plugins") or []]
    return tuple(sorted(found))


def _slurm_facts(text: str) -> Facts:
    directives: list[str] = []
    roles: dict[str, RoleFacts] = {}
    components = [[0, 0]]  # [nodes, GPUs per node] per heterogeneous job component
    for line in text.splitlines():
        if not line.startswith("#SBATCH "):
            continue
        directive = line[len("#SBATCH "):]
        directives.append(directive)
        key, _, value = directive.partition("=")
        if key == "hetjob":
            components.append([0, 0])
        elif key == "--nodes" and value.isascii() and value.isdigit():
            components[-1][0] = int(value)
        elif key == "--gres":
            count = value.rsplit(":", 1)[-1]
            if count.isascii() and count.isdigit():
                components[-1][1] = int(count)
    nodes = sum(n for n, _ in components)
    gpus = sum(n * g for n, g in components)
    price = accelerator_facts(text)[1]
    args = launch_args(text)
    roles["job"] = RoleFacts(name="job", kind="SlurmJob", pods=nodes, gpus=gpus, nodes=nodes,
                             hourly_cost=None if price is None else round(gpus * price, 4),
                             tp=_int_flag(args, "--tensor-parallel-size", 1),
                             pp=_int_flag(args, "--pipeline-parallel-size", 1),
                             dp=_int_flag(args, "--data-parallel-size", 1),
                             ep="--enable-expert-parallel" in args, args=_reviewed_args(text))
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# ") and line != "#")
    return Facts(objects={"SlurmJob/script": {"directives": directives, "body": body}}, roles=roles,
                 plugins=(), epp_config="")


# ---------------------------------------------------------------- comparing two artifacts

def diff_artifacts(path: str, old: str | None, new: str | None) -> ArtifactDiff | None:
    """The reviewer's view of one artifact's change; None when nothing that deploys changed."""
    before = artifact_facts(path, old) if old is not None else None
    after = artifact_facts(path, new) if new is not None else None
    return compare(path, before, after)


def compare(path: str, before: Facts | None, after: Facts | None) -> ArtifactDiff | None:
    """``diff_artifacts`` on facts already read (None: the artifact is absent on that side)."""
    if before is None and after is None:
        return None
    if before is None or after is None:
        facts = after or before
        status = "added" if before is None else "removed"
        impact = Impact.IN_PLACE if before is None else Impact.RECREATE
        lines = tuple(f"{r.name}: {_role_summary(r)}" for r in facts.roles.values())
        total = totals_of(facts)
        return ArtifactDiff(path=path, status=status, impact=impact, roles=lines, objects=(),
                            before=Totals() if before is None else total, after=total if before is None else Totals())
    objects = tuple(_object_changes(before, after))
    if not objects:
        return None
    roles = tuple(_role_changes(before, after))
    plugin_line = _plugin_change(before, after)
    if plugin_line:
        roles += (plugin_line,)
    impact = worst(o.impact for o in objects)
    return ArtifactDiff(path=path, status="changed", impact=impact, roles=roles, objects=objects,
                        before=totals_of(before), after=totals_of(after))


def totals_of(facts: Facts) -> Totals:
    total = Totals()
    for r in facts.roles.values():
        total = total + Totals(r.gpus, r.nodes, r.pods, r.hourly_cost)
    return total


def _role_summary(r: RoleFacts) -> str:
    parts = [f"{r.pods} pods", f"{r.nodes} nodes", f"{r.gpus} GPUs", f"TP {r.tp}"]
    if r.hourly_cost is not None:
        parts.insert(3, f"{r.hourly_cost:g}/h")
    if r.pp > 1:
        parts.append(f"PP {r.pp}")
    if r.dp > 1:
        parts.append(f"DP {r.dp}")
    if r.ep:
        parts.append("EP")
    if r.image:
        parts.append(f"image {r.image}")
    return ", ".join(parts)


def _role_changes(before: Facts, after: Facts):
    for name in sorted(set(before.roles) | set(after.roles)):
        old, new = before.roles.get(name), after.roles.get(name)
        if old is None:
            yield f"{name}: added ({_role_summary(new)})"
            continue
        if new is None:
            yield f"{name}: removed (was {_role_summary(old)})"
            continue
        parts = []
        for label, attr in (("TP", "tp"), ("PP", "pp"), ("DP", "dp")):
            if getattr(old, attr) != getattr(new, attr):
                parts.append(f"{label} {getattr(old, attr)}\u2192{getattr(new, attr)}")
        if old.ep != new.ep:
            parts.append("EP on" if new.ep else "EP off")
        for label, attr in (("pods", "pods"), ("nodes", "nodes"), ("GPUs", "gpus")):
            delta = getattr(new, attr) - getattr(old, attr)
            if delta:
                parts.append(f"{delta:+d} {label}")
        if old.hourly_cost is not None and new.hourly_cost is not None and old.hourly_cost != new.hourly_cost:
            parts.append(f"{new.hourly_cost - old.hourly_cost:+g}/h")
        if old.image != new.image:
            parts.append(f"image {old.image}\u2192{new.image}")
        added, removed, changed = _arg_changes(old.args, new.args)
        if added or removed or changed:
            parts.append("args: " + ", ".join([f"+{a}" for a in added] + [f"\u2212{a}" for a in removed] + changed))
        added, removed, changed = _arg_changes(tuple(e.replace("=", " ", 1) for e in old.env),
                                               tuple(e.replace("=", " ", 1) for e in new.env))
        if added or removed or changed:
            parts.append("env: " + ", ".join([f"+{a.split(' ', 1)[0]}" for a in added] +
                                             [f"\u2212{a.split(' ', 1)[0]}" for a in removed] +
                                             [f"~{c.split(' ', 1)[0]}" for c in changed]))
        resources = _value_changes(old.resources, new.resources)
        if resources:
            parts.append("resources: " + ", ".join(resources))
        if parts:
            yield f"{name}: " + "; ".join(parts)


def _arg_changes(old: tuple[str, ...], new: tuple[str, ...]):
    def split(items):
        out: dict[str, list[str]] = {}
        for item in items:
            flag, _, value = item.partition(" ")
            out.setdefault(flag, []).append(value)
        return out

    a, b = split(old), split(new)
    added = [_join(f, v) for f in b if f not in a for v in b[f]]
    removed = [_join(f, v) for f in a if f not in b for v in a[f]]
    changed = [f"{f} {'/'.join(a[f]) or 'on'}\u2192{'/'.join(b[f]) or 'on'}" for f in a if f in b and a[f] != b[f]]
    return added, removed, changed


def _value_changes(old: tuple[str, ...], new: tuple[str, ...]) -> list[str]:
    """``requests memory 128Gi->256Gi`` per entry (``kind name value`` items) that differs."""
    def table(items):
        return {item.rsplit(" ", 1)[0]: item.rsplit(" ", 1)[1] for item in items}

    a, b = table(old), table(new)
    return [f"{k} {a.get(k, 'unset')}\u2192{b.get(k, 'unset')}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _join(flag: str, value: str) -> str:
    return f"{flag} {value}" if value else flag


def _plugin_change(before: Facts, after: Facts) -> str:
    old, new = before.plugins, after.plugins
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    if added or removed:
        return "EPP: " + ", ".join([f"+{p}" for p in added] + [f"\u2212{p}" for p in removed])
    if before.epp_config != after.epp_config:
        return "EPP: plugin parameters or scheduling profiles changed"
    return ""


def _object_changes(before: Facts, after: Facts):
    renamed_claims = _renamed_claims(before, after)
    for key in sorted(set(before.objects) | set(after.objects)):
        old, new = before.objects.get(key), after.objects.get(key)
        if old == new:
            continue
        kind, _, name = key.partition("/")
        if old is None:
            yield ObjectChange(kind, name, "added", Impact.IN_PLACE, "created beside the running objects")
        elif new is None:
            serving = kind in WORKLOADS and _is_model_workload(old)
            yield ObjectChange(kind, name, "removed", Impact.RECREATE if serving else Impact.IN_PLACE,
                               "its model servers stop" if serving else "deleted")
        else:
            impact, why = classify(kind, old, new, renamed_claims)
            yield ObjectChange(kind, name, "changed", impact, why)


def _is_model_workload(obj: dict) -> bool:
    return ROLE_LABEL in ((obj.get("metadata") or {}).get("labels") or {})


def _renamed_claims(before: Facts, after: Facts) -> bool:
    names = lambda f: {k for k in f.objects if k.startswith("ResourceClaimTemplate/")}  # noqa: E731
    return names(before) != names(after)


def classify(kind: str, old: dict, new: dict, renamed_claims: bool = False) -> tuple[Impact, str]:
    """How a change of one object reaches the cluster, and why."""
    if kind == "SlurmJob":
        return Impact.RECREATE, "a changed batch script means cancelling and resubmitting the job"
    if kind == "Job":
        return Impact.RECREATE, "a Job's pod template is immutable: the Job is deleted and created again"
    if kind == "ConfigMap":
        return Impact.IN_PLACE, "applied in place; pods that read it only at start-up see it after a restart"
    if kind not in WORKLOADS:
        return Impact.IN_PLACE, "applied in place"
    if (old.get("metadata") or {}).get("labels", {}).get(COMPONENT_LABEL) == "idle-shutdown":
        return Impact.IN_PLACE, "the idle-shutdown controller restarts; serving is not interrupted"
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if old_spec.get("selector") != new_spec.get("selector"):
        return Impact.RECREATE, "the selector is immutable: the workload is deleted and created again"
    if kind == "LeaderWorkerSet":
        old_lwt, new_lwt = old_spec.get("leaderWorkerTemplate") or {}, new_spec.get("leaderWorkerTemplate") or {}
        if old_lwt.get("size") != new_lwt.get("size"):
            return Impact.RECREATE, (f"group size {old_lwt.get('size')}\u2192{new_lwt.get('size')}: "
                                     "every group is replaced")
        templates_changed = _strip(old_lwt) != _strip(new_lwt)
    else:
        templates_changed = old_spec.get("template") != new_spec.get("template")
    if templates_changed and renamed_claims and _claims_of(old) != _claims_of(new):
        return Impact.RECREATE, "a DRA claim template was renamed: every pod is replaced"
    if templates_changed:
        return Impact.ROLLING, "pod template changed: pods are replaced by a rolling update"
    return Impact.IN_PLACE, "no pod template change"


def _strip(lwt: dict) -> dict:
    return {k: v for k, v in lwt.items() if k != "size"}


def _claims_of(obj: dict) -> list:
    found = []

    def walk(value):
        if isinstance(value, dict):
            if "resourceClaimTemplateName" in value:
                found.append(value["resourceClaimTemplateName"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(obj.get("spec"))
    return sorted(found)


# ---------------------------------------------------------------- two builds

def diff_builds(base: str, old: dict[str, str], new: dict[str, str]) -> BuildDiff:
    """``old``/``new``: artifact path (relative to out/) -> text."""
    artifacts = []
    totals: dict[str, list[Totals]] = {}
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)  # each text read once; an unchanged one once for both sides
        before = artifact_facts(path, a) if a is not None else None
        after = before if b == a else artifact_facts(path, b) if b is not None else None
        sides = totals.setdefault(path.split("/", 1)[0], [Totals(), Totals()])
        for side, facts in ((0, before), (1, after)):
            if facts is not None:
                sides[side] = sides[side] + totals_of(facts)
        d = compare(path, before, after) if a != b else None
        if d is not None:
            artifacts.append(d)
    impact = worst(a.impact for a in artifacts)
    return BuildDiff(base=base, artifacts=tuple(artifacts), impact=impact,
                     totals={k: (v[0], v[1]) for k, v in sorted(totals.items()) if v[0].gpus or v[1].gpus})


ARTIFACT_SUFFIXES = (".yaml", ".sbatch")


def git_artifacts(root: str, rev: str, prefix: str = "out") -> dict[str, str]:
    """Artifact texts of ``prefix/`` at git revision ``rev`` (path relative to ``prefix/``)."""
    from manifesto.build_graph.changes import git
    from manifesto.errors import BuildError

    what = f"--base {rev}"
    if rev.startswith("-") or git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}",
                                  check=False, what=what) is None:
        raise BuildError(f"--base: unknown git revision '{rev}'")
    top = git(root, "rev-parse", "--show-prefix", what=what).strip()
    names = git(root, "ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, "--", f"{top}{prefix}/",
                what=what).split("\0")
    out = {}
    for name in names:
        if name.endswith(ARTIFACT_SUFFIXES) and "/.cache/" not in name:
            out[name[len(top) + len(prefix) + 1:]] = git(root, "show", f"{rev}:{name}", what=what)
    return out


def worktree_artifacts(out_dir: str) -> dict[str, str]:
    """Artifact texts below ``out_dir`` in the working tree (path relative to it)."""
    import os

    found = {}
    for top, dirs, files in os.walk(out_dir):
        dirs[:] = sorted(d for d in dirs if d != ".cache" and not os.path.islink(os.path.join(top, d)))
        for name in sorted(files):
            path = os.path.join(top, name)
            if name.endswith(ARTIFACT_SUFFIXES) and not os.path.islink(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    found[os.path.relpath(path, out_dir).replace(os.sep, "/")] = f.read()
    return found


# ---------------------------------------------------------------- output

def format_text(d: BuildDiff) -> str:
    if not d.artifacts:
        return f"no artifact changed since {d.base}\n"
    lines = []
    for a in d.artifacts:
        lines.append(f"{a.path}: {a.status}, {a.impact.label}")
        lines += [f"  {r}" for r in a.roles]
        lines += [f"  {o.kind}/{o.name}: {o.change}, {o.impact.label} ({o.why})" for o in a.objects]
    lines.append("per cluster: " + "; ".join(f"{c} {_totals(b, n)}" for c, (b, n) in d.totals.items()))
    lines.append(f"overall: {d.impact.label}")
    return "\n".join(lines) + "\n"


def format_markdown(d: BuildDiff) -> str:
    lines = [f"### manifesto: rendered changes since `{d.base}`", ""]
    if not d.artifacts:
        return "\n".join(lines + ["No artifact changed."]) + "\n"
    if d.impact is Impact.RECREATE:
        lines += ["> **Recreate:** at least one change replaces every pod or job of a deployment.", ""]
    lines += ["| artifact | change | impact |", "| --- | --- | --- |"]
    for a in d.artifacts:
        summary = "<br>".join(_md(r) for r in a.roles) or a.status
        lines.append(f"| `{_md(a.path)}` | {summary} | {a.impact.label} |")
    lines += ["", "| cluster | GPUs | nodes | pods | cost per hour |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {_md(c)} | {b.gpus} \u2192 {n.gpus} | {b.nodes} \u2192 {n.nodes} | {b.pods} \u2192 {n.pods} | "
              f"{_cost(b)} \u2192 {_cost(n)} |" for c, (b, n) in d.totals.items()]
    details = [f"- `{_md(a.path)}` {_md(o.kind)}/{_md(o.name)}: {o.change}, **{o.impact.label}** ({_md(o.why)})"
               for a in d.artifacts for o in a.objects]
    if details:
        lines += ["", "<details><summary>objects</summary>", "", *details, "", "</details>"]
    return "\n".join(lines) + "\n"


def _totals(before: Totals, after: Totals) -> str:
    text = (f"GPUs {before.gpus}\u2192{after.gpus}, nodes {before.nodes}\u2192{after.nodes}, "
            f"pods {before.pods}\u2192{after.pods}")
    if before.hourly_cost is not None and after.hourly_cost is not None and (before.hourly_cost or after.hourly_cost):
        text += f", cost {_cost(before)}\u2192{_cost(after)} per hour"
    return text


def _cost(t: Totals) -> str:
    return "not priced" if t.hourly_cost is None else f"{t.hourly_cost:g}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")
