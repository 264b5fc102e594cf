"""Targets and render pairs, built from the BUILD.yaml config and the source listing.

Every model file is one model target, every cluster file one cluster target, every
routing file one routing target. A render pair is (model path, cluster name); its
artifact goes to ``out/<cluster>/<model path below models/>`` plus the suffix the
renderer chose. Errors point into BUILD.yaml.
"""

from __future__ import annotations

import posixpath

from manifesto.build_graph.generators import DeploymentGenerator, GitopsGenerator, MonitoringGenerator, SourceGenerator
from manifesto.build_graph.renderer import OPTION_FIELDS

__all__ = ["Deployment", "GitOps", "Graph", "Monitoring", "Target", "build_graph", "strip_suffix"]

#: Where deployment artifacts go, below out/ (so no cluster target may have this name).
DEPLOY_DIR = "deploy"
#: Where monitoring artifacts go, below out/ (likewise reserved).
MONITORING_DIR = "monitoring"
#: Where the Argo CD objects of gitops targets go, below out/ (likewise reserved).
GITOPS_DIR = "gitops"
#: Target kinds declared in BUILD.yaml itself (``//:name``), not found in a directory.
DECLARED = ("deployment", "monitoring", "gitops")


class GitOps:
    """A gitops target: Argo CD Applications for some deployment targets (their keys, in order),
    ``explicit`` when BUILD.yaml named them, and the declaration's settings."""

    __slots__ = ("name", "deployments", "explicit", "settings")

    def __init__(self, name: str, deployments: tuple, explicit: bool, settings) -> None:
        self.name, self.deployments, self.explicit, self.settings = name, deployments, explicit, settings


class Monitoring:
    """A monitoring target: the namespace monitoring of some models' instances on one cluster."""

    __slots__ = ("name", "models", "cluster")

    def __init__(self, name: str, models: tuple, cluster: str) -> None:
        self.name, self.models, self.cluster = name, models, cluster


class Deployment:
    """A deployment target: one model on one cluster, where it runs, and its render options."""

    __slots__ = ("name", "model", "cluster", "context", "slurm_host")

    def __init__(self, name: str, model: str, cluster: str, context, slurm_host) -> None:
        self.name, self.model, self.cluster = name, model, cluster
        self.context, self.slurm_host = context, slurm_host

    @property
    def address(self) -> str:
        return f"//:{self.name}"


class Target:
    """One file of the graph: ``//dir:name`` of ``kind`` model/cluster/routing.

    A deployment target is declared in BUILD.yaml itself: ``//:name``, and its ``path`` is
    that address (it is no file; real paths never start with ``//``).
    """

    __slots__ = ("kind", "path", "dir", "name", "gen")

    def __init__(self, kind: str, path: str, gen: int) -> None:
        self.kind, self.path, self.gen = kind, path, gen
        if kind in DECLARED:
            self.dir, self.name = "", path[3:]
            return
        self.dir = posixpath.dirname(path)
        self.name = strip_suffix(posixpath.basename(path))

    @property
    def address(self) -> str:
        return f"//{self.dir}:{self.name}"

    def __repr__(self) -> str:
        return f"Target({self.address})"


def strip_suffix(name: str) -> str:
    """A file name without its ``.yaml`` suffix (model files may have none)."""
    return name[:-5] if name.endswith(".yaml") else name


class Graph:
    """All targets, and for each model target its clusters, options and out path."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.targets: dict[str, Target] = {}
        self.by_path: dict[str, Target] = {}
        self.clusters: dict[str, Target] = {}
        self.model_clusters: dict[str, tuple] = {}
        self.model_options: dict[str, tuple] = {}
        self.model_out: dict[str, str] = {}
        #: deployment key (its address) -> Deployment
        self.deployments: dict[str, Deployment] = {}
        #: monitoring key (its address) -> Monitoring
        self.monitors: dict[str, Monitoring] = {}
        #: gitops key (its address) -> GitOps
        self.gitops: dict[str, GitOps] = {}

    def sorted_targets(self) -> list[Target]:
        return [self.targets[a] for a in sorted(self.targets)]

    def pairs(self) -> list[tuple[str, str]]:
        """Every (model path, cluster name) pair, sorted."""
        return sorted((m, c) for m, cs in self.model_clusters.items() for c in cs)

    def out_base(self, pair: tuple[str, str]) -> str:
        """``<cluster>/<model path below models/>`` (a deployment: ``deploy/<name>``), the
        artifact path below out/ without suffix."""
        if pair[0] in self.deployments:
            return f"{DEPLOY_DIR}/{self.deployments[pair[0]].name}"
        if pair[0] in self.monitors:
            return f"{MONITORING_DIR}/{self.monitors[pair[0]].name}"
        if pair[0] in self.gitops:
            return f"{GITOPS_DIR}/{self.gitops[pair[0]].name}"
        return f"{pair[1]}/{self.model_out[pair[0]]}"

    def source(self, unit: str) -> str:
        """The model file a pair's first member renders (itself, or a deployment's model); a
        monitoring target's own address (its models are in ``monitors``)."""
        if unit in self.monitors or unit in self.gitops:
            return unit
        dep = self.deployments.get(unit)
        return dep.model if dep is not None else unit

    def address(self, path: str) -> str:
        return self.by_path[path].address

    def options(self, model: str) -> dict:
        return dict(zip(OPTION_FIELDS, self.model_options[model]))


def build_graph(config: dict, files: dict, locations: dict, display: str, root: str) -> Graph:
    """The graph for ``config`` given each generator's matched ``files``."""
    builder = _GraphBuilder(config, locations, display, root)
    for i, gen in enumerate(config["generators"]):
        if gen.kind not in DECLARED:
            builder.add_generator(i, gen, files.get(i))
    for i, gen in enumerate(config["generators"]):
        if gen.kind == "model":
            builder.wire_models(i, gen)
    for i, gen in enumerate(config["generators"]):
        if gen.kind == "deployment":
            builder.add_deployment(i, gen)
        elif gen.kind == "monitoring":
            builder.add_monitoring(i, gen)
    for i, gen in enumerate(config["generators"]):
        if gen.kind == "gitops":
            builder.add_gitops(i, gen)
    return builder.graph


class _GraphBuilder:
    """Adds the targets and pairs of each generator record (``generators.py``) to a Graph."""

    def __init__(self, config: dict, locations: dict, display: str, root: str) -> None:
        self.config, self.locations, self.display = config, locations, display
        self.graph = Graph(root)
        self.out_owner: dict[str, str] = {}

    def fail(self, path: tuple, message: str):
        from manifesto.build_graph.buildfile import origin_of
        from manifesto.errors import BuildError
        from manifesto.errors import format_path

        raise BuildError(message, origin_of(self.locations, self.display, path), format_path(path))

    def add_generator(self, i: int, gen: SourceGenerator, files) -> None:
        kind, base = gen.kind, gen.path
        if files is None:
            self.fail(("targets", i, "path"), f"directory '{base}' does not exist{self.nearby_dir(base)}")
        for f in files:
            path = f if base == "." else f"{base}/{f}"
            self.add_target(Target(kind, path, i), ("targets", i, "sources"))

    def add_target(self, target: Target, where: tuple) -> None:
        graph = self.graph
        if target.path in graph.by_path:
            other = graph.by_path[target.path].gen
            self.fail(where, f"{target.path} is already a source of targets[{other}]; exclude it from one of them")
        if target.name == "all":
            self.fail(where, f"{target.path}: a target cannot be named 'all' (//dir:all means every target in dir)")
        if target.address in graph.targets:
            clash = graph.targets[target.address].path
            self.fail(where, f"{target.path} and {clash} would both be {target.address}; rename one")
        if target.kind == "cluster" and target.name in graph.clusters:
            clash = graph.clusters[target.name].path
            self.fail(where, f"two cluster targets are named '{target.name}' ({clash}, {target.path})")
        graph.targets[target.address] = target
        graph.by_path[target.path] = target
        if target.kind == "cluster":
            graph.clusters[target.name] = target

    def nearby_dir(self, base: str) -> str:
        import os

        from manifesto.errors import did_you_mean

        parent = os.path.join(self.graph.root, posixpath.dirname(base))
        try:
            names = [n for n in os.listdir(parent) if os.path.isdir(os.path.join(parent, n))]
        except OSError:
            return ""
        prefix = posixpath.dirname(base)
        return did_you_mean(base, [posixpath.join(prefix, n) for n in names])

    def wire_models(self, i: int, gen: SourceGenerator) -> None:
        clusters = self.cluster_names(i, gen.clusters)
        options = self.options(i, gen.options)
        top = gen.path.split("/")[0]
        for target in [t for t in self.graph.by_path.values() if t.gen == i]:
            out = strip_suffix(target.path if top == "." else target.path[len(top) + 1:])
            if out in self.out_owner:
                clash = self.out_owner[out]
                self.fail(("targets", i, "sources"), f"{target.path} and {clash} would write the same artifacts")
            self.out_owner[out] = target.path
            self.graph.model_out[target.path] = out
            self.graph.model_clusters[target.path] = clusters
            self.graph.model_options[target.path] = options

    def declared_key(self, i: int, name: str, out_dir: str, what: str) -> str:
        """The address of a target declared in BUILD.yaml (``//:name``), once no other target
        has it and no cluster target takes the out/ folder its artifacts go to."""
        key = f"//:{name}"
        if key in self.graph.targets:
            self.fail(("targets", i, "name"), f"{key} is already a target; rename one")
        if out_dir in self.graph.clusters:
            self.fail(("targets", i), f"a cluster target is named '{out_dir}', which out/{out_dir}/ "
                      f"(where {what} artifacts go) needs; rename the cluster file")
        return key

    def add_deployment(self, i: int, gen: DeploymentGenerator) -> None:
        name, model_ref, cluster_ref = gen.name, gen.model, gen.cluster
        key = self.declared_key(i, name, DEPLOY_DIR, "deployment")
        model = self.one_model(model_ref, ("targets", i, "model"))
        clusters = self.cluster_ref(cluster_ref, ("targets", i, "cluster"))
        if len(clusters) != 1:
            self.fail(("targets", i, "cluster"), f"{cluster_ref} names several clusters; a deployment has one")
        cluster = clusters[0]
        target = Target("deployment", key, i)
        self.graph.targets[key] = target
        self.graph.by_path[key] = target
        self.graph.deployments[key] = Deployment(name, model, cluster, gen.context, gen.slurm_host)
        self.graph.model_clusters[key] = (cluster,)
        self.graph.model_options[key] = self.options(i, gen.options)

    def add_monitoring(self, i: int, gen: MonitoringGenerator) -> None:
        from manifesto.build_graph.addresses import match, parse_address
        from manifesto.errors import BuildError

        name, model_refs, cluster_ref = gen.name, gen.models, gen.cluster
        key = self.declared_key(i, name, MONITORING_DIR, "monitoring")
        models: set[str] = set()
        for j, ref in enumerate(model_refs):
            try:
                hits = [t.path for t in match(parse_address(ref), self.graph) if t.kind == "model"]
            except BuildError as exc:
                self.fail(("targets", i, "models", j), exc.message)
            if not hits:
                self.fail(("targets", i, "models", j), f"{ref} names no model target")
            models.update(hits)
        clusters = self.cluster_ref(cluster_ref, ("targets", i, "cluster"))
        if len(clusters) != 1:
            self.fail(("targets", i, "cluster"), f"{cluster_ref} names several clusters; monitoring has one")
        target = Target("monitoring", key, i)
        self.graph.targets[key] = target
        self.graph.by_path[key] = target
        self.graph.monitors[key] = Monitoring(name, tuple(sorted(models)), clusters[0])
        self.graph.model_clusters[key] = (clusters[0],)
        self.graph.model_options[key] = self.options(i, gen.options)

    def add_gitops(self, i: int, gen: GitopsGenerator) -> None:
        """A gitops target over deployment targets; each one it covers renders with Argo CD sync
        waves (``argocd_sync_waves``), the artifact its Application syncs."""
        from manifesto.build_graph.addresses import match, parse_address
        from manifesto.build_graph.renderer import OPTION_FIELDS
        from manifesto.errors import BuildError

        name, refs, settings = gen.name, gen.deployments, gen.settings
        key = self.declared_key(i, name, GITOPS_DIR, "gitops")
        graph = self.graph
        if refs is None:  # every deployment target that is not a Slurm one
            covered = [k for k, d in sorted(graph.deployments.items()) if d.slurm_host is None]
            if not covered:
                self.fail(("targets", i), "the gitops target covers no deployment target: declare a `kind: "
                          "deployment` target on a Kubernetes cluster, or name some in `deployments:`")
        else:
            covered = []
            for j, ref in enumerate(refs):
                try:
                    hits = [t.path for t in match(parse_address(ref), graph) if t.kind == "deployment"]
                except BuildError as exc:
                    self.fail(("targets", i, "deployments", j), exc.message)
                if not hits:
                    names = ", ".join(sorted(graph.deployments)) or "none in BUILD.yaml"
                    self.fail(("targets", i, "deployments", j), f"{ref} names no deployment target "
                              f"(deployment targets: {names})")
                for hit in hits:
                    if graph.deployments[hit].slurm_host is not None:
                        self.fail(("targets", i, "deployments", j), f"{hit} runs on a Slurm host; Argo CD "
                                  "delivers to Kubernetes clusters only")
                    if hit not in covered:
                        covered.append(hit)
        waves = OPTION_FIELDS.index("argocd_sync_waves")
        for dep in covered:
            values = list(graph.model_options[dep])
            values[waves] = True
            graph.model_options[dep] = tuple(values)
        target = Target("gitops", key, i)
        graph.targets[key] = target
        graph.by_path[key] = target
        graph.gitops[key] = GitOps(name, tuple(covered), refs is not None, settings)
        # The artifact is one file; the pair goes with the first deployment's cluster (what
        # `build --cluster` filters on), and its render reads every covered deployment's inputs.
        graph.model_clusters[key] = (graph.deployments[covered[0]].cluster,)
        graph.model_options[key] = graph.model_options[covered[0]]

    def one_model(self, ref: str, where: tuple) -> str:
        from manifesto.build_graph.addresses import match, parse_address
        from manifesto.errors import BuildError, did_you_mean

        if ref.startswith("//"):
            try:
                hits = match(parse_address(ref), self.graph)
            except BuildError as exc:
                self.fail(where, exc.message)
        else:
            norm = posixpath.normpath(ref)
            hits = [self.graph.by_path[norm]] if norm in self.graph.by_path else []
            if not hits:
                models = [p for p, t in self.graph.by_path.items() if t.kind == "model"]
                self.fail(where, f"'{ref}' is not a model target{did_you_mean(norm, models)}")
        if len(hits) != 1 or hits[0].kind != "model":
            self.fail(where, f"{ref} must name one model target")
        return hits[0].path

    def cluster_names(self, i: int, refs) -> tuple:
        if refs is None:
            return tuple(sorted(self.graph.clusters))
        names: set[str] = set()
        for j, ref in enumerate(refs):
            names.update(self.cluster_ref(ref, ("targets", i, "clusters", j)))
        return tuple(sorted(names))

    def cluster_ref(self, ref: str, where: tuple) -> list[str]:
        from manifesto.build_graph.addresses import match, parse_address
        from manifesto.errors import BuildError, did_you_mean

        if not ref.startswith("//"):
            if ref not in self.graph.clusters:
                self.fail(where, f"unknown cluster '{ref}'{did_you_mean(ref, self.graph.clusters)}")
            return [ref]
        try:
            hits = [t.name for t in match(parse_address(ref), self.graph) if t.kind == "cluster"]
        except BuildError as exc:
            self.fail(where, exc.message)
        if not hits:
            self.fail(where, f"{ref} names no cluster target")
        return hits

    def options(self, i: int, values: tuple) -> tuple:
        fields = dict(zip(OPTION_FIELDS, values))
        profile = fields["routing_profile"]
        if profile is not None:
            fields["routing_profile"] = self.routing_path(profile, ("targets", i, "options"))
        return tuple(fields[k] for k in OPTION_FIELDS)

    def routing_path(self, profile: str, where: tuple) -> str:
        import os

        from manifesto.build_graph.addresses import match, parse_address
        from manifesto.errors import BuildError

        if not profile.startswith("//"):
            path = posixpath.normpath(profile)
            inside = not (path.startswith("../") or profile.startswith("/"))
            if not inside or not os.path.isfile(os.path.join(self.graph.root, path)):
                self.fail(where, f"routing_profile '{profile}' is not a file below the build root")
            return path
        try:
            hits = match(parse_address(profile), self.graph)
        except BuildError as exc:
            self.fail(where, f"routing_profile: {exc.message}")
        if len(hits) != 1 or hits[0].kind != "routing":
            self.fail(where, f"routing_profile {profile} must name one routing target")
        return hits[0].path
