"""A reviewer's diff of two builds: what each changed artifact means for a running deployment.

The facts come from the artifacts themselves (the bytes ``deploy`` would apply), so a change
of code or defaults shows up as surely as a change of a spec. For each artifact present on
either side it reports:

- per role: pods, GPUs, parallelism (TP/PP/DP/EP as vLLM will be told), the vLLM image and
  the ``vllm serve`` arguments added, removed or changed;
- the endpoint picker's plugins added or removed;
- every changed object with how the change reaches the cluster (``Impact``):
  *in place* (ConfigMap, Service, RBAC, routing objects, a replica count), *rolling* (a
  Deployment's or LeaderWorkerSet's pod template; any role template of a DisaggregatedSet,
  which rolls every role to a new revision together), or *recreate* (a LeaderWorkerSet's group
  size, a role added to or removed from a DisaggregatedSet, a renamed DRA claim template, an
  immutable selector, a Job, a removed workload, any change of a Slurm batch script: every
  pod or job is replaced; a DisaggregatedSet rollout that leaves a role with no serving
  replica, an outage, as :mod:`manifesto.review.dset_rollout` plans it; a change of a set
  role's labels, annotations, startupPolicy or networkConfig alone, which its controller
  never copies onto running LeaderWorkerSets).

Everything here is a pure function of artifact texts; ``git_artifacts`` and
``worktree_artifacts`` read them through the edge (:mod:`manifesto.edge.git`). Each text is
parsed by the loader (``yamlio.parse_yaml``: size, alias and depth limits) and every field is
read with its type checked, so an artifact that is not a rendered one (bad YAML, an alias
bomb, a non-number where a count goes, a wrong type anywhere) is one error naming it, never a
traceback or a hang. The reports escape every name and value for where they go.
"""

from __future__ import annotations

import enum
import posixpath
import re
import shlex

import msgspec

__all__ = ["Impact", "RoleFacts", "ArtifactDiff", "BuildDiff", "artifact_facts", "diff_artifacts",
           "compare", "diff_builds", "git_artifacts", "worktree_artifacts", "format_text", "format_markdown"]

DIGEST_ANNOTATION = "manifesto.llm-d.ai/artifact-digest"
ROLE_LABEL = "manifesto.llm-d.ai/role"
COMPONENT_LABEL = "app.kubernetes.io/component"
WORKLOADS = ("Deployment", "LeaderWorkerSet", "DisaggregatedSet", "Job", "StatefulSet")
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

class ArtifactFacts(msgspec.Struct, frozen=True):
    objects: dict[str, dict]  # "Kind/name" -> object without the artifact digest
    roles: dict[str, RoleFacts]
    plugins: tuple[str, ...]
    epp_config: str  # the endpoint picker's configuration text, "" when there is none
    cluster: str = ""  # the cluster profile's name in the provenance header, "" when it does not tell


#: The largest whole number read where a count is expected (replicas, GPUs, group size, nodes).
MAX_COUNT = 1_000_000
#: The deepest nesting an artifact's YAML may have (a rendered object nests about 15 deep).
MAX_DEPTH = 100
#: The most YAML documents in one artifact (the monitoring artifact has about 70).
MAX_DOCUMENTS = 2_000
#: The most lines plus ','-separated items in one artifact (each document is also held to
#: ``yamlio.MAX_ENTRIES``); the largest rendered artifact has about 13,000. A bound on the time
#: one artifact takes to read.
MAX_ARTIFACT_ENTRIES = 200_000
#: The most values (scalars, lists, mappings) in one artifact once aliases are expanded: the
#: loader bounds each document's aliases, this bounds their sum (a rendered artifact has at
#: most a few thousand values and no alias).
MAX_ARTIFACT_NODES = 200_000
#: The most values all the artifacts of one diff may hold (both sides; the bundled out/ has about
#: 30,000, a tree of a thousand pairs a few million).
MAX_DIFF_NODES = 20_000_000
_LONG_LINE = 64 * 1024


class _Doc:
    """One YAML document of an artifact: plain data, where each field is, and the artifact's
    name for errors. Every read of a field checks its type; a wrong one is one BuildError at
    the field's file:line:col."""

    __slots__ = ("data", "locs", "name")

    def __init__(self, data, locs, name: str) -> None:
        self.data, self.locs, self.name = data, locs, name

    def fail(self, path: tuple, message: str):
        from manifesto.errors import BuildError, format_path

        raise BuildError(message, self.locs.find(path), format_path(path))

    def get(self, path: tuple, kind: type | tuple, default=None):
        """The value at ``path`` (``default`` when a key on the way is absent or null), of ``kind``."""
        value = self.data
        for i, key in enumerate(path):
            if value is None:
                return default
            if isinstance(key, str) and not isinstance(value, dict):
                self.fail(path[:i], f"expected a mapping, got {_what(value)}")
            if isinstance(key, int) and not isinstance(value, list):
                self.fail(path[:i], f"expected a list, got {_what(value)}")
            value = value.get(key) if isinstance(key, str) else value[key]
        if value is None:
            return default
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
            self.fail(path, f"expected {_names(kind)}, got {_what(value)}")
        return value

    def mapping(self, path: tuple) -> dict:
        return self.get(path, dict, {})

    def items(self, path: tuple) -> list:
        return self.get(path, list, [])

    def entries(self, path: tuple) -> list[tuple]:
        """The paths of the items of the list at ``path``, each checked to be a mapping."""
        found = []
        for i, item in enumerate(self.items(path)):
            if not isinstance(item, dict):
                self.fail(path + (i,), f"expected a mapping, got {_what(item)}")
            found.append(path + (i,))
        return found

    def text(self, path: tuple, default: str = "") -> str:
        return self.get(path, str, default)

    def count(self, path: tuple, default: int) -> int:
        """A whole number (a YAML integer, or a Kubernetes quantity of digits such as ``"8"``)
        in 0..MAX_COUNT; ``default`` when absent or null."""
        value = self.get(path, (int, str), default)
        return _count(value, lambda message: self.fail(path, message))


def _kinds(kind) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def _names(kind) -> str:
    words = {dict: "a mapping", list: "a list", str: "a string", int: "a whole number", bool: "true or false"}
    return " or ".join(words.get(k, k.__name__) for k in _kinds(kind))


def _what(value) -> str:
    from manifesto.edge.escape import terminal
    from manifesto.errors import show_value

    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return terminal(show_value(value), 100)


def _count(value, fail) -> int:
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit() and len(value) <= 9):
            fail(f"expected a whole number, got {_what(value)}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        fail(f"expected a whole number, got {_what(value)}")
    if not 0 <= value <= MAX_COUNT:
        fail(f"{value if value.bit_length() < 64 else 'a number this large'} is out of range "
             f"(0 to {MAX_COUNT})")
    return value


class _Budget:
    """Values read so far by one diff (aliases expanded), bounded by MAX_DIFF_NODES."""

    __slots__ = ("spent",)

    def __init__(self) -> None:
        self.spent = 0


def _documents(text: str, name: str, budget: _Budget | None = None, kinds: frozenset | None = None) -> list[_Doc]:
    """Each YAML document of an artifact, parsed by the loader with its limits (size, aliases,
    depth, integers); errors are placed in the artifact (line numbers count from its top).
    With ``kinds``, a document whose text names one other kind is not parsed (``_may_be``)."""
    from manifesto.errors import Origin, YamlSyntaxError
    from manifesto.load.yamlio import parse_documents

    docs = []
    nodes = 0
    keep = None if kinds is None else (lambda chunk: _may_be(chunk, kinds))
    for data, locs in parse_documents(text, name, max_entries=MAX_ARTIFACT_ENTRIES, max_documents=MAX_DOCUMENTS,
                                      keep=keep):
        doc = _Doc(data, locs, name)
        nodes = _check_depth(doc, nodes)
        docs.append(doc)
    if budget is not None:
        budget.spent += nodes
        if budget.spent > MAX_DIFF_NODES:
            raise YamlSyntaxError(f"the artifacts read so far hold more than {MAX_DIFF_NODES} values (aliases "
                                  "expanded); not a build's output", Origin(name))
    return docs


# A document's top-level `kind:` line, as the renderers write it (block style, plain value).
_KIND_LINE = re.compile(r"^kind:[ \t]*([A-Za-z][A-Za-z0-9]*)[ \t]*$", re.M)
# A line starting a top-level key that is not plain (quoted, complex) or a flow mapping as the
# document: its `kind` could hide from the line above.
_ODD_TOP = re.compile(r"^[\"'?{]", re.M)


def _may_be(chunk: str, kinds: frozenset) -> bool:
    """Whether a document's text may be of one of ``kinds``: False only when exactly one
    top-level ``kind:`` line names another kind and no top-level key is written otherwise."""
    found = _KIND_LINE.findall(chunk)
    return len(found) != 1 or found[0] in kinds or _ODD_TOP.search(chunk) is not None


def _check_depth(doc: _Doc, before: int = 0) -> int:
    """Refuse a document nested deeper than MAX_DEPTH (what follows compares and walks it), or
    one that brings the artifact's values past MAX_ARTIFACT_NODES; the count so far."""
    stack = [(doc.data, ())]
    count = before
    while stack:
        value, path = stack.pop()
        count += 1
        if count > MAX_ARTIFACT_NODES:
            doc.fail((), f"holds more than {MAX_ARTIFACT_NODES} values (aliases expanded); not a rendered artifact")
        if len(path) > MAX_DEPTH:
            doc.fail(path, f"nests more than {MAX_DEPTH} deep; not a rendered object")
        if isinstance(value, dict):
            stack.extend((v, path + (k,)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(value))
    return count


def artifact_facts(path: str, text: str, name: str | None = None, budget: _Budget | None = None) -> ArtifactFacts:
    """What a reviewer cares about in one artifact's text. ``name`` names the artifact in errors
    (``out/PATH``, ``REV:out/PATH``; default ``path``): any text that is not a rendered artifact
    (bad YAML, a wrong type, a number out of range) is one BuildError there, never a traceback."""
    name = name or path
    if path.endswith(".sbatch"):
        return _slurm_facts(text, name)
    docs = _documents(text, name, budget)
    objects: dict[str, dict] = {}
    for doc in docs:
        if not isinstance(doc.data, dict):
            doc.fail((), f"expected a Kubernetes object (a mapping), got {_what(doc.data)}")
        kind, meta = doc.text(("kind",)), doc.mapping(("metadata",))
        key = f"{kind}/{doc.text(('metadata', 'name'))}"
        for field in ("labels", "annotations"):
            for label, value in doc.mapping(("metadata", field)).items():
                doc.get(("metadata", field, label), (str, int, float, bool))
        if kind in WORKLOADS:  # what classify() compares: its reasons quote only checked numbers
            doc.mapping(("spec",))
            doc.mapping(("spec", "selector"))
            doc.mapping(("spec", "leaderWorkerTemplate"))
            doc.count(("spec", "replicas"), 1)
            doc.count(("spec", "leaderWorkerTemplate", "size"), 1)
            for at in doc.entries(("spec", "roles")):  # a DisaggregatedSet: each role an LWS spec
                doc.text(at + ("name",))
                doc.mapping(at + ("spec", "leaderWorkerTemplate"))
                doc.count(at + ("spec", "leaderWorkerTemplate", "size"), 1)
                doc.count(at + ("spec", "replicas"), 1)
                for bound in ("maxSurge", "maxUnavailable"):
                    doc.get(at + ("spec", "rolloutStrategy", "rollingUpdateConfiguration", bound), (int, str))
        objects[key] = _without_digest(doc.data, meta)
    claims = {doc.text(("metadata", "name")): _claim_count(doc) for doc in docs
              if doc.data.get("kind") == "ResourceClaimTemplate"}
    accel = accelerator_facts(text, name)
    roles = {}
    for doc in docs:
        for part in _set_roles(doc) if doc.data.get("kind") == "DisaggregatedSet" else [doc]:
            if part.data.get("kind") not in WORKLOADS:
                continue
            fact = _workload_facts(part, claims, accel)
            if fact is not None:
                roles[fact.name] = fact
    config, where = _epp_config(docs)
    return ArtifactFacts(objects=objects, roles=roles, plugins=_plugins(config, where), epp_config=config,
                 cluster=accel[2])


#: What the totals read of an artifact: its workloads and the claims their GPUs may come from.
_TOTAL_KINDS = frozenset(WORKLOADS) | {"ResourceClaimTemplate"}


def artifact_totals(path: str, text: str, name: str | None = None, budget: _Budget | None = None
                    ) -> tuple[Totals, str]:
    """``totals_of(artifact_facts(...))`` and the artifact's cluster, reading only what they
    take: the documents that may be workloads or claims (a ConfigMap's scripts, the RBAC and
    the Services are not parsed) and of each workload its counts, not its arguments. For an
    artifact the diff does not compare (the same bytes on both sides): what it reads fails
    with the same error as there; what it does not read is not checked, since no change of
    it is under review."""
    name = name or path
    if path.endswith(".sbatch"):
        facts = _slurm_facts(text, name)
        return totals_of(facts), facts.cluster
    docs = _documents(text, name, budget, kinds=_TOTAL_KINDS)
    for doc in docs:
        if not isinstance(doc.data, dict):
            doc.fail((), f"expected a Kubernetes object (a mapping), got {_what(doc.data)}")
        doc.text(("kind",))
    claims = {doc.text(("metadata", "name")): _claim_count(doc) for doc in docs
              if doc.data.get("kind") == "ResourceClaimTemplate"}
    accel = accelerator_facts(text, name)
    counted: dict[str, tuple] = {}  # role -> counts; a later workload of a role replaces it, as in facts.roles
    for doc in docs:
        for part in _set_roles(doc) if doc.data.get("kind") == "DisaggregatedSet" else [doc]:
            if part.data.get("kind") in WORKLOADS:
                counts = _workload_counts(part, claims, accel)
                if counts is not None:
                    counted[counts[0]] = counts
    total = Totals()
    for _, _, pods, gpus, nodes, cost in counted.values():
        total = total + Totals(gpus, nodes, pods, cost)
    return total, accel[2]


class _RoleLocs:
    """Positions of a DisaggregatedSet role read as a LeaderWorkerSet of its own: its
    ``metadata`` and ``spec`` sit at ``spec.roles[i]`` of the set."""

    __slots__ = ("locs", "at")

    def __init__(self, locs, at: tuple) -> None:
        self.locs, self.at = locs, at

    def find(self, path: tuple):
        return self.locs.find(self.at + path if path and path[0] in ("metadata", "spec") else path)


def _set_roles(doc: _Doc) -> list[_Doc]:
    """Each role of a DisaggregatedSet as the LeaderWorkerSet the controller creates from it."""
    out = []
    for at in doc.entries(("spec", "roles")):
        role = doc.data["spec"]["roles"][at[-1]]
        data = {"kind": "LeaderWorkerSet", "metadata": role.get("metadata") or {}, "spec": role.get("spec") or {}}
        out.append(_Doc(data, _RoleLocs(doc.locs, at), doc.name))
    return out


def _without_digest(obj: dict, meta: dict) -> dict:
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k != DIGEST_ANNOTATION}
    meta = {k: v for k, v in meta.items() if k != "annotations"} | ({"annotations": notes} if notes else {})
    return {**obj, "metadata": meta}


def _claim_count(doc: _Doc) -> int:
    total = 0
    requests = ("spec", "spec", "devices", "requests")
    for at in doc.entries(requests):
        if doc.get(at + ("exactly",), dict):
            at += ("exactly",)
        if "gpu" in doc.text(at + ("deviceClassName",)).lower():
            total += doc.count(at + ("count",), 1) or 1
    return total


def _pod_spec(doc: _Doc) -> tuple[tuple, int]:
    """(path of the leader or only pod spec, pods per replica)."""
    kind = doc.data["kind"]
    if kind == "LeaderWorkerSet":
        lwt = ("spec", "leaderWorkerTemplate")
        template = lwt + ("leaderTemplate",) if doc.mapping(lwt + ("leaderTemplate",)) else lwt + ("workerTemplate",)
        return template + ("spec",), doc.count(lwt + ("size",), 1) or 1
    if kind == "Job":
        return ("spec", "template", "spec"), doc.count(("spec", "parallelism"), 1) or 1
    return ("spec", "template", "spec"), 1


def accelerator_facts(text: str, name: str = "artifact") -> tuple[int | None, float | None, str]:
    """(GPUs per node, hourly price per GPU, cluster name) of the accelerator the artifact was
    rendered for, from the inputs its provenance header carries (the cluster profile and the
    spec as heredocs, an --accelerator flag); None (and "") where the header does not tell.
    The header's YAML goes through the loader's limits; a header that does not parse gives no facts."""
    from manifesto.errors import ManifestoError
    from manifesto.load.yamlio import parse_yaml

    docs, flags = _header_inputs(text)
    try:
        cluster = parse_yaml(docs.get("MANIFESTO_CLUSTER", ""), f"{name} (header)")[0]
        model = parse_yaml(docs.get("MANIFESTO_MODEL", docs.get("MANIFESTO_MODEL_1", "")), f"{name} (header)")[0]
    except ManifestoError:  # a hand-written header: no facts, not an error
        return None, None, ""
    cluster = cluster if isinstance(cluster, dict) else {}
    model = model if isinstance(model, dict) else {}
    label = cluster.get("name") if isinstance(cluster.get("name"), str) else ""
    accels = cluster.get("accelerators")
    if not isinstance(accels, dict) or not isinstance(accels.get("profiles"), dict):
        return None, None, label
    chosen = flags.get("--accelerator") or flags.get("--gpu") or model.get("accelerator") or accels.get("default")
    profile = accels["profiles"].get(chosen) if isinstance(chosen, str) else None
    if not isinstance(profile, dict):
        return None, None, label
    per_node, price = profile.get("gpus_per_node"), profile.get("hourly_price")
    import math

    per_node = per_node if type(per_node) is int and 0 < per_node <= MAX_COUNT else None
    if type(price) is int:
        price = float(price) if 0 <= price < 10**9 else None
    price = price if type(price) is float and math.isfinite(price) and 0 <= price < 1e9 else None
    return per_node, price, label


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


def _workload_facts(doc: _Doc, claims: dict[str, int], accel: tuple) -> RoleFacts | None:
    counted = _workload_counts(doc, claims, accel)
    if counted is None:
        return None
    role, main, pods, gpus, nodes, cost = counted
    script = _script(doc, main)
    args = launch_args(script)
    image = doc.text(main + ("image",)) if main else ""
    return RoleFacts(name=role, kind=doc.data["kind"], pods=pods, gpus=gpus, nodes=nodes, hourly_cost=cost,
                     tp=_int_flag(args, "--tensor-parallel-size", 1, doc.name),
                     pp=_int_flag(args, "--pipeline-parallel-size", 1, doc.name),
                     dp=_int_flag(args, "--data-parallel-size", 1, doc.name), ep="--enable-expert-parallel" in args,
                     image=image, args=_reviewed_args(script), env=_env(doc, main) if main else (),
                     resources=_resources(doc, main + ("resources",)) if main else ())


def _workload_counts(doc: _Doc, claims: dict[str, int], accel: tuple) -> tuple | None:
    """(role, path of the model server's container or None, pods, GPUs, nodes, hourly cost)
    of a workload carrying a role label, else None: what the totals count of it."""
    role = doc.get(("metadata", "labels", ROLE_LABEL), (str, int, float, bool))
    if role is None:
        return None
    pod, size = _pod_spec(doc)
    spec = doc.mapping(("spec",))
    replicas = doc.count(("spec", "replicas"), 1) if "replicas" not in spec or spec["replicas"] is not None else 0
    doc.entries(pod + ("containers",))
    containers = doc.items(pod + ("containers",))
    index = next((i for i, c in enumerate(containers) if c.get("name") == "vllm"), 0 if containers else None)
    main = pod + ("containers", index) if index is not None else None
    gpus = 0
    for i, container in enumerate(containers):
        limits = pod + ("containers", i, "resources", "limits")
        gpus += sum(doc.count(limits + (k,), 0) for k in doc.mapping(limits) if "gpu" in k.lower())
    for at in doc.entries(pod + ("resourceClaims",)):
        gpus += claims.get(doc.text(at + ("resourceClaimTemplateName",)), 0)
    pods, per_node, price = replicas * size, accel[0], accel[1]
    fits = max(per_node // gpus, 1) if per_node and gpus else 1  # pods sharing a node, as resolve.budget packs them
    return (str(role), main, pods, pods * gpus, -(-pods // fits),
            None if price is None else round(pods * gpus * price, 4))


def _env(doc: _Doc, main: tuple) -> tuple[str, ...]:
    """NAME=value of the container's env (valueFrom shown as <ref>)."""
    out = []
    for at in doc.entries(main + ("env",)):
        value = doc.get(at + ("value",), (str, int, float, bool), "") if "value" in doc.mapping(at) else "<ref>"
        out.append(f"{doc.text(at + ('name',))}={value}")
    return tuple(sorted(out))


def _resources(doc: _Doc, at: tuple) -> tuple[str, ...]:
    """``kind name value`` per request and limit, GPUs left out (the summary states them)."""
    out = []
    for side in ("requests", "limits"):
        for key in sorted(doc.mapping(at + (side,))):
            if "gpu" not in key.lower():
                out.append(f"{side} {key} {doc.get(at + (side, key), (str, int, float, bool), '')}")
    return tuple(out)


def _script(doc: _Doc, main: tuple | None) -> str:
    command = doc.items(main + ("command",)) if main else []
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
    if len(text) > _LONG_LINE:  # shlex reads about 1 MB/s: a line no renderer writes is split at blanks
        return text.split()
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


def _int_flag(args: list[str], flag: str, default: int, name: str) -> int:
    from manifesto.errors import BuildError, Origin

    def fail(message: str):
        raise BuildError(f"{flag}: {message}", Origin(name))

    for item in args:
        key, _, value = item.partition(" ")
        if key == flag and value.isascii() and value.isdigit():
            return _count(value, fail)
    return default


def _epp_config(docs: list[_Doc]) -> tuple[str, str]:
    """The endpoint picker's configuration text and where it is (``NAME: ConfigMap/x data.key``)."""
    for doc in docs:
        if doc.data.get("kind") == "ConfigMap":
            for key, value in doc.mapping(("data",)).items():
                if isinstance(value, str) and "EndpointPickerConfig" in value:
                    return value, f"{doc.name}: ConfigMap/{doc.text(('metadata', 'name'))} data.{key}"
    return "", ""


def _plugins(config: str, where: str) -> tuple[str, ...]:
    if not config:
        return ()
    from manifesto.edge.escape import terminal
    from manifesto.load.yamlio import parse_yaml

    data, locs = parse_yaml(config, terminal(where))
    if not isinstance(data, dict):
        return ()
    doc = _Doc(data, locs, where)
    _check_depth(doc)
    found = []
    for at in doc.entries(("plugins",)):
        plugin = str(doc.get(at + ("type",), (str, int, float, bool), "None"))
        label = doc.get(at + ("name",), (str, int, float, bool), "")
        found.append(plugin + (f" ({label})" if label else ""))
    return tuple(sorted(found))


def _slurm_facts(text: str, name: str = "artifact") -> ArtifactFacts:
    from manifesto.errors import BuildError, Origin

    directives: list[str] = []
    roles: dict[str, RoleFacts] = {}
    components = [[0, 0]]  # [nodes, GPUs per node] per heterogeneous job component
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("#SBATCH "):
            continue

        def fail(message: str, number=number):
            raise BuildError(message, Origin(name, number, 1))

        directive = line[len("#SBATCH "):]
        directives.append(directive)
        key, _, value = directive.partition("=")
        if key == "hetjob":
            components.append([0, 0])
        elif key == "--nodes" and value.isascii() and value.isdigit():
            components[-1][0] = _count(value, lambda m: fail(f"--nodes: {m}"))
        elif key == "--gres":
            count = value.rsplit(":", 1)[-1]
            if count.isascii() and count.isdigit():
                components[-1][1] = _count(count, lambda m: fail(f"--gres: {m}"))
    nodes = sum(n for n, _ in components)
    gpus = sum(n * g for n, g in components)
    _, price, cluster = accelerator_facts(text, name)
    args = launch_args(text)
    roles["job"] = RoleFacts(name="job", kind="SlurmJob", pods=nodes, gpus=gpus, nodes=nodes,
                             hourly_cost=None if price is None else round(gpus * price, 4),
                             tp=_int_flag(args, "--tensor-parallel-size", 1, name),
                             pp=_int_flag(args, "--pipeline-parallel-size", 1, name),
                             dp=_int_flag(args, "--data-parallel-size", 1, name),
                             ep="--enable-expert-parallel" in args, args=_reviewed_args(text))
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# ") and line != "#")
    return ArtifactFacts(objects={"SlurmJob/script": {"directives": directives, "body": body}}, roles=roles,
                 plugins=(), epp_config="", cluster=cluster)


# ---------------------------------------------------------------- comparing two artifacts

def diff_artifacts(path: str, old: str | None, new: str | None) -> ArtifactDiff | None:
    """The reviewer's view of one artifact's change; None when nothing that deploys changed."""
    before = artifact_facts(path, old) if old is not None else None
    after = artifact_facts(path, new) if new is not None else None
    return compare(path, before, after)


def compare(path: str, before: ArtifactFacts | None, after: ArtifactFacts | None) -> ArtifactDiff | None:
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


def totals_of(facts: ArtifactFacts) -> Totals:
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


def _role_changes(before: ArtifactFacts, after: ArtifactFacts):
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


def _plugin_change(before: ArtifactFacts, after: ArtifactFacts) -> str:
    old, new = before.plugins, after.plugins
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    if added or removed:
        return "EPP: " + ", ".join([f"+{p}" for p in added] + [f"\u2212{p}" for p in removed])
    if before.epp_config != after.epp_config:
        return "EPP: plugin parameters or scheduling profiles changed"
    return ""


def _object_changes(before: ArtifactFacts, after: ArtifactFacts):
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
            if kind == "Application":
                yield _removed_application(name, old)
                continue
            yield ObjectChange(kind, name, "removed", Impact.RECREATE if serving else Impact.IN_PLACE,
                               "its model servers stop" if serving else "deleted")
        else:
            impact, why = classify(kind, old, new, renamed_claims)
            yield ObjectChange(kind, name, "changed", impact, why)


#: The finalizer with which deleting an Argo CD Application deletes what it deployed.
_ARGOCD_FINALIZER = "resources-finalizer.argocd.argoproj.io"


def _removed_application(name: str, old: dict) -> ObjectChange:
    """An Argo CD Application gone from a gitops artifact: the root Application prunes it, and
    with the resources finalizer Argo CD deletes what it deployed (a deployment target's
    instance: its model servers stop)."""
    meta, spec = old.get("metadata") or {}, old.get("spec") or {}
    source = spec.get("source") or {}
    what = "/".join(p for p in (source.get("path"), (source.get("directory") or {}).get("include")) if p)
    if not any(f == _ARGOCD_FINALIZER or str(f).startswith(_ARGOCD_FINALIZER + "/")
               for f in meta.get("finalizers") or []):
        return ObjectChange("Application", name, "removed", Impact.IN_PLACE,
                            f"Argo CD stops syncing {what or 'its source'}; what it deployed stays running")
    serving = posixpath.basename(posixpath.normpath(source.get("path") or "")) == "deploy"
    return ObjectChange("Application", name, "removed", Impact.RECREATE if serving else Impact.IN_PLACE,
                        f"Argo CD deletes {what or 'its source'} with it" + ("; its model servers stop" if serving
                                                                              else ""))


def _is_model_workload(obj: dict) -> bool:
    return ROLE_LABEL in ((obj.get("metadata") or {}).get("labels") or {}) or obj.get("kind") == "DisaggregatedSet"


def _renamed_claims(before: ArtifactFacts, after: ArtifactFacts) -> bool:
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
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if ((old.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL) == "idle-shutdown":
        if old_spec.get("template") == new_spec.get("template"):  # metadata or replicas only
            return Impact.IN_PLACE, "no pod template change"
        return Impact.IN_PLACE, "the idle-shutdown controller restarts; serving is not interrupted"
    if old_spec.get("selector") != new_spec.get("selector"):
        return Impact.RECREATE, "the selector is immutable: the workload is deleted and created again"
    if kind == "DisaggregatedSet":
        return _classify_set(old, new, renamed_claims)
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


def _set_roles_of(obj: dict) -> dict:
    """Role name -> the role's entry, in the set's order."""
    roles = (obj.get("spec") or {}).get("roles") or []
    return {r.get("name"): r for r in roles if isinstance(r, dict)}


def _set_templates(obj: dict) -> dict:
    """Role name -> its LeaderWorkerSet template, in the set's order."""
    return {name: (r.get("spec") or {}).get("leaderWorkerTemplate") or {} for name, r in _set_roles_of(obj).items()}


#: A role's fields the DisaggregatedSet controller (LWS v0.10.0) copies onto the LeaderWorkerSet
#: it creates and never updates on a running one: it makes a role's LeaderWorkerSet once per
#: revision (pkg/controllers/disaggregatedset/lws_manager.go:59-111, an existing one is left
#: alone at :101-104), only scales it afterwards (:113-131, replicas alone), and the revision
#: hashes only the roles' names and leaderWorkerTemplates (pkg/utils/disaggregatedset/
#: utils.go:144-169), so these change no revision either.
_COPIED_ONCE = (("metadata", "labels"), ("metadata", "annotations"), ("spec", "startupPolicy"),
                ("spec", "networkConfig"))
#: Simulating a rollout is linear in the replicas; past this the review says nothing about it.
_SIMULATED_REPLICAS = 1000


def _field(role: dict, path: tuple):
    value = role
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _replicas(role: dict) -> int:
    value = (role.get("spec") or {}).get("replicas", 1)
    return int(value) if isinstance(value, int) or (isinstance(value, str) and value.isdigit()) else 1


def _dark(old: dict, new: dict) -> list[str] | None:
    """The roles the set's rollout from ``old`` to ``new`` leaves with no serving replica
    (:mod:`manifesto.review.dset_rollout`, LWS v0.10.0's planner); None when it cannot tell."""
    from manifesto.review import dset_rollout

    before, after = _set_roles_of(old), _set_roles_of(new)
    names = list(after)
    initial = [_replicas(before[n]) if n in before else 0 for n in names]
    target = [_replicas(after[n]) for n in names]
    if max([*initial, *target, 0]) > _SIMULATED_REPLICAS:
        return None
    try:
        config = [dset_rollout.role_config(_field(after[n], ("spec", "rolloutStrategy", "rollingUpdateConfiguration")),
                                           target[i]) for i, n in enumerate(names)]
    except ValueError:
        return None
    return [str(names[i]) for i in dset_rollout.dark_roles(initial, target, config)]


def _classify_set(old: dict, new: dict, renamed_claims: bool) -> tuple[Impact, str]:
    """The DisaggregatedSet controller (LWS v0.10.0) hashes every role's name and template into
    one revision and rolls all roles to a new revision together; replica counts and slices
    scale without a rollout. A role's labels, annotations, startupPolicy and networkConfig
    reach only the LeaderWorkerSets of a new revision; its rolloutStrategy is read from the set
    by the next rollout."""
    before, after = _set_templates(old), _set_templates(new)
    if list(before) != list(after):
        added = [r for r in after if r not in before]
        removed = [r for r in before if r not in after]
        what = "; ".join(part for part in (f"role {', '.join(map(str, added))} added" if added else "",
                                           f"role {', '.join(map(str, removed))} removed" if removed else "",
                                           "roles reordered" if not added and not removed else "") if part)
        return Impact.RECREATE, (f"{what}: every role gets new LeaderWorkerSets of a new revision and the old ones "
                                 "are deleted")
    changed = [r for r in after if before[r] != after[r]]
    if not changed:
        roles_before, roles_after = _set_roles_of(old), _set_roles_of(new)
        stuck = [f"{name} {path[-1]}" for name in roles_after
                 for path in _COPIED_ONCE if _field(roles_before[name], path) != _field(roles_after[name], path)]
        if stuck:
            return Impact.RECREATE, (
                f"{', '.join(map(str, stuck))} changed: the DisaggregatedSet controller sets these on a role's "
                "LeaderWorkerSet only when it creates one (a new revision) and never updates a running one, so "
                "applying the set changes nothing that runs; it takes deleting the set and deploying it again "
                "(manifesto stop, then deploy; deploy does it for a Kueue queue or priority class), or comes with "
                "the next pod template change")
        policy = [str(name) for name in roles_after if _field(roles_before[name], ("spec", "rolloutStrategy"))
                  != _field(roles_after[name], ("spec", "rolloutStrategy"))]
        if policy:
            return Impact.IN_PLACE, (f"rolloutStrategy of {', '.join(policy)} changed: the set's next rollout "
                                     "uses it (no pod template change)")
        return Impact.IN_PLACE, "no pod template change (replicas and slices scale without a rollout)"
    if renamed_claims and _claims_of(old) != _claims_of(new):
        return Impact.RECREATE, "a DRA claim template was renamed: every pod is replaced"
    sizes = [f"{r} group size {before[r].get('size')}\u2192{after[r].get('size')}" for r in changed
             if before[r].get("size") != after[r].get("size")]
    what = "; ".join(sizes) if sizes else f"pod template of {', '.join(map(str, changed))} changed"
    rolls = f"{what}: the DisaggregatedSet rolls every role ({', '.join(map(str, after))}) out together to a new revision"
    dark = _dark(old, new)
    if dark:
        return Impact.RECREATE, (
            f"{rolls}, and the rollout leaves {', '.join(dark)} with no serving replica: an outage (its old "
            "revision stops before the new one is ready: the set surges no extra replica, so a role of one "
            "replica is down between the two). Run 2 or more replicas of each role to keep serving through a "
            "rollout")
    if dark is None:
        return Impact.ROLLING, f"{rolls} (how many replicas keep serving is not worked out: over {_SIMULATED_REPLICAS} " \
            "replicas, or a rollingUpdateConfiguration that is no count or percentage)"
    return Impact.ROLLING, f"{rolls}, each role keeping replicas serving throughout"


def _strip(lwt: dict) -> dict:
    return {k: v for k, v in lwt.items() if k != "size"}


def _claims_of(obj: dict) -> list:
    """Every ``resourceClaimTemplateName`` below the object's spec (an iterative walk)."""
    found = []
    stack = [obj.get("spec")]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if "resourceClaimTemplateName" in value:
                found.append(str(value["resourceClaimTemplateName"]))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return sorted(found)


# ---------------------------------------------------------------- two builds

def diff_builds(base: str, old: dict[str, str], new: dict[str, str], *, prefix: str = "out",
                totals_when_unchanged: bool = True) -> BuildDiff:
    """``old``/``new``: artifact path (relative to out/) -> text. Errors name an old artifact
    ``BASE:out/PATH`` and a new one ``out/PATH``. The totals per cluster count every artifact,
    so they read the unchanged ones too; ``totals_when_unchanged=False`` leaves them out
    (empty) when no artifact changed, for a report that shows none then: on a clean tree
    nothing is parsed at all (issue 41: 3.5 s of YAML for "no artifact changed")."""
    artifacts = []
    budget = _Budget()
    sides: list[tuple[str, tuple[Totals, str] | None, tuple[Totals, str] | None]] = []  # no ArtifactFacts kept
    paths = sorted(set(old) | set(new))
    if not totals_when_unchanged and all(old.get(p) == new.get(p) for p in paths):
        return BuildDiff(base=base, artifacts=(), impact=worst(()), totals={})
    for path in paths:
        a, b = old.get(path), new.get(path)  # each text read once; an unchanged one once for both sides
        if a == b:  # nothing to compare: only its totals count, the same on both sides
            counted = artifact_totals(path, a, f"{base}:{prefix}/{path}", budget)
            sides.append((path, counted, counted))
            continue
        before = artifact_facts(path, a, f"{base}:{prefix}/{path}", budget) if a is not None else None
        after = before if b == a else artifact_facts(path, b, f"{prefix}/{path}", budget) if b is not None else None
        sides.append((path, *((totals_of(f), f.cluster) if f is not None else None for f in (before, after))))
        d = compare(path, before, after) if a != b else None
        if d is not None:
            artifacts.append(d)
    names = _cluster_names(sides)
    totals: dict[str, list[Totals]] = {}
    for path, *facts in sides:
        for side, fact in enumerate(facts):
            if fact is not None:
                pair = totals.setdefault(_cluster_of(path, fact[1], names), [Totals(), Totals()])
                pair[side] = pair[side] + fact[0]
    impact = worst(a.impact for a in artifacts)
    return BuildDiff(base=base, artifacts=tuple(artifacts), impact=impact,
                     totals={k: (v[0], v[1]) for k, v in sorted(totals.items()) if v[0].gpus or v[1].gpus})


#: Folders of out/ that are not clusters: deployment, monitoring and gitops targets (build_graph.graph).
NOT_CLUSTERS = ("deploy", "monitoring", "gitops")
UNKNOWN_CLUSTER = "(cluster not named in the header)"


def _cluster_names(sides) -> dict[str, str]:
    """The cluster profile's name (from artifact headers) -> the out/ folder of its pairs."""
    found: dict[str, str] = {}
    for path, *facts in sides:
        folder, sep, _ = path.partition("/")
        if sep and folder not in NOT_CLUSTERS:
            for fact in facts:
                if fact is not None and fact[1]:
                    found.setdefault(fact[1], folder)
    return found


def _cluster_of(path: str, cluster: str, names: dict[str, str]) -> str:
    """The cluster an artifact's pods run on: a pair's out/ folder; for a deployment or
    monitoring target (out/deploy/NAME.yaml), the cluster its header names (``cluster``), said
    as the folder of that cluster's pairs when they are in the diff."""
    folder, sep, _ = path.partition("/")
    if sep and folder not in NOT_CLUSTERS:
        return folder
    if cluster:
        return names.get(cluster, cluster)
    return UNKNOWN_CLUSTER


ARTIFACT_SUFFIXES = (".yaml", ".sbatch")


def git_artifacts(root: str, rev: str, prefix: str = "out") -> dict[str, str]:
    """Artifact texts of ``prefix/`` at git revision ``rev`` (path relative to ``prefix/``),
    read through the edge (:mod:`manifesto.edge.git`): bounded, strictly UTF-8, no link
    followed, the revision checked."""
    from manifesto.edge import git

    what = "--base"
    commit = git.commit_of(root, rev, what)
    top = git.show_prefix(root, what)
    folder = f"{top}{prefix}"
    blobs = git.tree(root, commit, folder, rev, what, suffixes=ARTIFACT_SUFFIXES)
    texts = git.read_blobs(root, blobs, rev, what)
    return {path[len(folder) + 1:]: text for path, text in texts.items()}


def worktree_artifacts(out_dir: str, label: str = "out") -> dict[str, str]:
    """Artifact texts below ``out_dir`` in the working tree (path relative to it), read through
    the edge: regular files only, no link followed, bounded, strictly UTF-8."""
    from manifesto.edge import git

    return git.worktree_texts(out_dir, label, suffixes=ARTIFACT_SUFFIXES)


# ---------------------------------------------------------------- output
#
# Every name and value in a report comes from artifacts (so from specs, profiles and file
# names a pull request may set): on a terminal each line goes through ``escape.terminal`` (no
# escape sequence or line break can forge a line); in markdown each goes into a code span
# (``escape.md_code``) or is escaped (``escape.md_text``), and the report uses no raw HTML, so
# no link, image, HTML or mention can form in a pull-request comment.

def format_text(d: BuildDiff) -> str:
    from manifesto.edge.escape import terminal

    if not d.artifacts:
        return terminal(f"no artifact changed since {d.base}") + "\n"
    lines = []
    for a in d.artifacts:
        lines.append(f"{a.path}: {a.status}, {a.impact.label}")
        lines += [f"  {r}" for r in a.roles]
        lines += [f"  {o.kind}/{o.name}: {o.change}, {o.impact.label} ({o.why})" for o in a.objects]
    lines.append("per cluster: " + "; ".join(f"{c} {_totals(b, n)}" for c, (b, n) in d.totals.items()))
    lines.append(f"overall: {d.impact.label}")
    return "\n".join(terminal(line) for line in lines) + "\n"


def format_markdown(d: BuildDiff) -> str:
    from manifesto.edge.escape import md_code, md_text

    lines = [f"### manifesto: rendered changes since {md_code(d.base)}", ""]
    if not d.artifacts:
        return "\n".join(lines + ["No artifact changed."]) + "\n"
    if d.impact is Impact.RECREATE:
        lines += ["> **Recreate:** at least one change replaces every pod or job of a deployment.", ""]
    lines += ["| artifact | change | impact |", "| --- | --- | --- |"]
    for a in d.artifacts:
        summary = "; ".join(md_code(r) for r in a.roles) or a.status
        lines.append(f"| {md_code(a.path)} | {summary} | {a.impact.label} |")
    lines += ["", "| cluster | GPUs | nodes | pods | cost per hour |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {md_code(c)} | {b.gpus} \u2192 {n.gpus} | {b.nodes} \u2192 {n.nodes} | {b.pods} \u2192 {n.pods} | "
              f"{_cost(b)} \u2192 {_cost(n)} |" for c, (b, n) in d.totals.items()]
    details = [f"- {md_code(a.path)} {md_code(f'{o.kind}/{o.name}')}: {o.change}, **{o.impact.label}** "
               f"({md_text(o.why)})" for a in d.artifacts for o in a.objects]
    if details:
        lines += ["", "#### Objects", "", *details]
    return "\n".join(lines) + "\n"


def _totals(before: Totals, after: Totals) -> str:
    text = (f"GPUs {before.gpus}\u2192{after.gpus}, nodes {before.nodes}\u2192{after.nodes}, "
            f"pods {before.pods}\u2192{after.pods}")
    if before.hourly_cost is not None and after.hourly_cost is not None and (before.hourly_cost or after.hourly_cost):
        text += f", cost {_cost(before)}\u2192{_cost(after)} per hour"
    return text


def _cost(t: Totals) -> str:
    return "not priced" if t.hourly_cost is None else f"{t.hourly_cost:g}"
