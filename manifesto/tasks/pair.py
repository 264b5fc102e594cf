"""A pair's tasks: load (parse and validate), resolve, render or explain one spec on one
cluster, and the monitoring of several specs on one cluster (``manifesto.tasks.runner.run``
calls :func:`pair` and :func:`monitoring`).

Everything a task reads is in its outcome's ``inputs``, so the build graph can key its
record on exactly those bytes, failures included. Nothing here reads the environment.
"""

from __future__ import annotations

import os

import msgspec

import manifesto.resolve.options as _options

__all__ = ["RenderOptions", "Products", "PRODUCTS", "pair", "monitoring", "gitops", "health_checks", "prepare",
           "code_fingerprint_paths"]

#: The options of one render: the Struct of every render option (``manifesto.resolve.options``),
#: the same class as ``resolve.plan.Options``.
RenderOptions = _options.Options


class Products:
    """The parse tasks' products in one process (a build, or one worker of its pool).

    Each input file is parsed once (``parse``, keyed by its name and text), and each
    cluster profile, spec and routing profile validated once (``get``), whatever the number
    of pairs that use it. A validated product is reused only while every file it was made
    from still has the bytes it had, so an edit is seen by the next build. ``parses`` and
    ``validations`` count the work done (the tests read them).
    """

    def __init__(self) -> None:
        self.yaml: dict = {}  # text -> (display name, data, locations); never mutated
        self.named: dict = {}  # (display name, text) -> (data, locations named after it)
        self.made: dict = {}  # (kind, path) -> (product, ((file, digest), ...))
        self.parses = 0
        self.validations = 0

    def parse(self, path, name, within=(), tasks=None):
        """(data, locations) of the YAML file at ``path`` (``yamlio.load_yaml``'s checks,
        ``within`` the directories it may be read from). With ``tasks`` (a
        ``manifesto.tasks.memo.Tasks``) the file is read once per build and its product
        goes through the store's parse task, so a build's workers parse each file once
        between them.

        Parsing is keyed by the file's bytes: two files with one content (copies of a spec)
        are parsed once, and the second gets the positions under its own name.
        """
        from manifesto.load import yamlio

        text = yamlio.read_text(path, name, within) if tasks is None else tasks.text(path, name, within)
        hit = self.named.get((name, text))
        if hit is not None:
            return hit
        parsed = self.yaml.get(text)
        if parsed is None:
            def run():
                self.parses += 1
                return yamlio.parse_yaml(text, name)
            parsed = self.yaml[text] = (name, *(run() if tasks is None else tasks.parse(text, name, run)))
        first, data, locs = parsed
        hit = self.named[(name, text)] = (data, locs if first == name else _renamed(locs, name))
        return hit

    def get(self, kind: str, path: str, make, files, tasks=None):
        """The product ``make()`` for ``(kind, path)``; ``files(product)`` lists what it read,
        digested through ``tasks`` (once per build) when given."""
        from manifesto.load.digest import file_digest

        digest = file_digest if tasks is None else tasks.file_digest
        key = (kind, path)
        hit = self.made.get(key)
        if hit is not None and all(digest(f) == d for f, d in hit[1]):
            return hit[0]
        product = make()
        self.validations += 1
        self.made[key] = (product, tuple((f, digest(f)) for f in files(product)))
        return product


def _renamed(locs, name: str):
    """``locs`` (the positions of one parse) as positions in the file ``name``."""
    from manifesto.errors import Origin
    from manifesto.load.yamlio import Locations

    return Locations(name, {k: Origin(name, o.line, o.col) for k, o in locs.table.items()})


#: The parse products of this process's builds (``manifesto.build_graph.executor`` hands it
#: to each build's memo).
PRODUCTS = Products()


def _search(tasks, roots: tuple[str, ...], catalogs: bool):
    """Where names and paths resolve: below ``roots`` only (a build: every input is a path,
    so no catalog name, user catalog or environment can leak in), the user's catalogs
    (``catalogs``: a single command), else paths only. Made once per memo ``tasks`` (the
    roots' real paths are resolved once for a build's pairs)."""
    from manifesto.load.catalog import PATHS_ONLY, SearchPath, bundled_dir
    from manifesto.load.yamlio import confinement

    if not roots:
        return None if catalogs else PATHS_ONLY
    return tasks.once(("search", roots), lambda: SearchPath(within=confinement([*roots, bundled_dir()])))


def _request_search(tasks, request):
    """Where ``request``'s names resolve: its own ``search`` when the caller gave one, else
    from its ``roots`` and ``catalogs`` (:func:`_search`)."""
    if request.search is not None:
        return request.search
    return _search(tasks, request.roots, request.catalogs)


def _named(ref, tasks) -> list[str]:
    """The files a reference to an input names before it is loaded: its path (a file that
    cannot be loaded is still an input of the failure), or what a loaded input read."""
    if isinstance(ref, str):
        return [tasks.realpath(ref)]
    return list(ref.loaded.files)


def _loading(ref, loaded) -> tuple[str, ...]:
    """The warnings of loading ``loaded`` (a spec or cluster, as ``_spec``/``_cluster`` gave it
    for ``ref``) when this task loaded it; none when the caller did (``_spec`` and ``_cluster``
    hand a loaded input back as it is, and its caller said them)."""
    return () if loaded is ref else loaded.loaded.warnings


def _failed(exc, read, products=(), warnings=()):
    """The outcome of a ManifestoError ``exc`` after reading the files ``read`` (``warnings``:
    loading's and the Plan's, found before the error)."""
    from manifesto.errors import IncompatiblePairError
    from manifesto.tasks.status import Status
    from manifesto.tasks.core import Outcome

    status = Status.SKIPPED if isinstance(exc, IncompatiblePairError) else Status.FAILED
    return Outcome(status, reason=str(exc), inputs=tuple(sorted(set(read))), products=products, error=exc,
                   warnings=warnings)


def pair(task, request, tasks):
    """The RESOLVE, RENDER, ARTIFACT or EXPLAIN task of ``request`` (a ``PairRequest``: its
    spec and cluster by path, or as the caller loaded them) through the memo ``tasks``: an
    ``Outcome``. With ``roots`` every file read must resolve below one of them or the bundled
    catalog: a symlink or an ``extends`` that leads elsewhere is an error naming the file,
    not a silent read of, say, a home directory."""
    from manifesto.load.catalog import images_file
    from manifesto.errors import ManifestoError
    from manifesto.resolve.plan import to_builtins
    from manifesto.tasks.status import Status
    from manifesto.tasks.core import Outcome, Task

    ro = request.options
    search = _request_search(tasks, request)
    roots = request.roots
    read = [*_named(request.spec, tasks), *_named(request.cluster, tasks), tasks.realpath(images_file())]
    loading: tuple[str, ...] = ()  # the warnings of what this task loaded (the caller's loads say theirs)
    try:
        c = _cluster(request.cluster, tasks, search)
        read += c.loaded.files
        loading += _loading(request.cluster, c)
        s = _spec(request.spec, tasks, search)
        read += s.files
        loading += _loading(request.spec, s)
        routing = _routing(ro, tasks, search)
        resolved, rkey, error, files = _resolve(tasks, s, c, ro, search, routing, roots, request.hf_home)
    except ManifestoError as exc:
        return _failed(exc, read, warnings=_once(loading + exc.warnings))
    keys = (rkey,) if rkey else ()
    if resolved.status != Status.OK:
        return Outcome(resolved.status, reason=resolved.reason, inputs=tuple(sorted(set(read))), products=keys,
                       cluster_name=c.name, error=error, warnings=loading)
    from manifesto.tasks.inputs.plan import plan_warnings

    plan = resolved.plan
    inputs = tuple(sorted(set(files)))
    budget = to_builtins(plan.budget) if plan.budget is not None else None
    warnings = _once(loading + plan_warnings(plan, c.profile))  # data on the outcome: the caller says them
    if task is Task.RESOLVE:
        return Outcome(Status.OK, inputs=inputs, products=keys, budget=budget, cluster_name=c.name, plan=plan,
                       warnings=warnings)
    if task is Task.EXPLAIN:
        from manifesto.resolve.explain import explain_text

        return Outcome(Status.OK, explain_text(plan), inputs=inputs, products=keys, cluster_name=c.name, plan=plan,
                       warnings=warnings)
    if task is Task.ARTIFACT:
        return _artifact(request.layer, resolved, s, c, read, keys, inputs, warnings)
    from manifesto.render import place

    rendered, dkey = tasks.render(f"{_name(s.path, roots)} @ {_name(c.path, roots)}", plan,
                                  resolved.header, resolved.plan_digest, _render_text)
    keys += (dkey,) if dkey else ()
    if rendered.refusal is not None:  # the render's own refusal, placed at the input field behind it
        return _failed(place(rendered.refusal, s, c), read, keys, warnings)
    return Outcome(Status.OK, rendered.text, rendered.suffix, inputs=inputs, products=keys, budget=budget,
                   cluster_name=c.name, plan=plan, text_digest=rendered.text_digest, warnings=warnings)


def _render_text(plan, header):
    """``((text, suffix), None)`` of the artifact the RENDER task keeps, or ``(None, Refusal)``."""
    from manifesto import render

    try:
        return render.render_plan(plan, header), None
    except render.Refused as exc:
        return None, exc.refusal


def _artifact(layer, resolved, s, c, read, keys, inputs, warnings):
    """The ARTIFACT task's outcome: ``render.artifact`` of the ``resolved`` pair's Plan (its
    refusal placed at the input field behind it), with the files the pair read and the Plan's
    ``warnings``."""
    from manifesto.render import Refused, artifact, place
    from manifesto.resolve.plan import to_builtins
    from manifesto.tasks.status import Status
    from manifesto.tasks.core import Outcome

    plan, header = resolved.plan, resolved.header
    budget = to_builtins(plan.budget) if plan.budget is not None else None
    made = None
    if layer == "manifest" or (plan.platform != "slurm" and plan.routing is not None):
        try:
            made = artifact(plan, header, layer).read_from(inputs, warnings)
        except Refused as exc:
            return _failed(place(exc.refusal, s, c), read, keys, warnings)
    text, suffix = (made.text, made.suffix) if made is not None else ("", "")
    return Outcome(Status.OK, text, suffix, inputs=inputs, products=keys, budget=budget, cluster_name=c.name,
                   plan=plan, artifact=made, warnings=warnings)


def _name(path: str, roots: tuple[str, ...]) -> str:
    """``path`` relative to the build's workspace (as the store's task names show it)."""
    prefix = os.path.join(roots[0], "") if roots else None
    path = str(path)
    return path[len(prefix):] if prefix and path.startswith(prefix) else path


def _resolve(tasks, s, c, ro, search, routing, roots, hf_home=None):
    """The resolve task of one pair through the memo: ``(Resolved, its key, the error when
    this process raised one, the files it read)``. The monitoring render asks it for the
    plans of the pairs it watches, which their own renders have stored by then."""
    from manifesto.render import header_inputs
    from manifesto.tasks.inputs.plan import resolution

    files, resolve = resolution(s, c, ro, search, routing, hf_home, tasks.realpath)
    paths = sorted(set(files))
    names = [_name(p, roots) for p in paths]
    digests = [tasks.file_digest(p) or "-" for p in paths]

    def run():
        plan = resolve()
        return plan, header_inputs(plan, s, c, ro)

    options = msgspec.msgpack.encode(ro) + (b"\0hf_home\0" + hf_home.encode() if hf_home else b"")
    resolved, key, error = tasks.resolve(f"{_name(s.path, roots)} @ {_name(c.path, roots)}", names, digests,
                                         options, run, keep=tasks.settled(paths))
    return resolved, key, error, files


def _cluster(ref, tasks, search):
    """The cluster ``ref`` refers to: loaded (and validated once per build) from its path,
    or the ``Cluster`` the caller loaded, as it is."""
    if not isinstance(ref, str):
        return ref
    path = ref
    from manifesto.load.catalog import find, within
    from manifesto.cluster import Cluster
    from manifesto.load.inputs import load_cluster_file

    def make():
        found = find("clusters", path, search=search)
        profile, loaded = load_cluster_file(found, within(search), _parser(tasks))
        return Cluster(profile, loaded, str(found))

    return _product(tasks, "cluster", path, make, lambda c: c.loaded.files)


def _spec(ref, tasks, search):
    """The spec ``ref`` refers to: loaded (and validated once per build) from its path, or the
    ``LoadedSpec`` the caller loaded, as it is."""
    if not isinstance(ref, str):
        return ref
    path = ref
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import LoadedSpec, load_model

    def make():
        found = find("models", path, search=search)
        model, loaded = load_model(found, within(search), _parser(tasks))
        return LoadedSpec(model, loaded, str(found))

    return _product(tasks, "spec", path, make, lambda s: s.files)


def _routing(ro, tasks, search):
    """The routing profile the options name, loaded (``tasks.inputs.routing.load_routing_profile``), or None."""
    if not ro.routing_profile:
        return None
    from manifesto.tasks.inputs.routing import load_routing_profile

    ref = ro.routing_profile
    return _product(tasks, "routing", ref, lambda: load_routing_profile(ref, search), lambda r: [r[2]])


def _product(tasks, kind: str, path: str, make, files):
    """``make()``, or the process's validated product of it while its files are unchanged."""
    if tasks.products is None:
        return make()
    return tasks.products.get(kind, path, make, files, tasks)


def _parser(tasks):
    """The loaders' ``parse``: the process's products through the memo (None: the loaders' own)."""
    if tasks.products is None:
        return None
    return lambda path, name, within=(): tasks.products.parse(path, name, within, tasks)


def monitoring(request, tasks):
    """The MONITORING task: the monitoring of the instances of ``request.specs`` on its cluster
    (a Slurm cluster is refused first: monitoring objects are Kubernetes-only). A spec the
    cluster cannot run (another accelerator) is left out of a build's monitoring target and
    fails an ``explicit`` request (``render monitoring`` named it). Every file is parsed and
    validated through the memo, once per build like the pairs' own renders, and each spec
    resolved once, through the store, where the pair's own render left its plan (so an edit
    to one spec resolves that spec again, not every one)."""
    from manifesto.load.catalog import images_file
    from manifesto.errors import ManifestoError
    from manifesto.tasks.status import Status
    from manifesto.tasks.core import Outcome
    from manifesto.tasks.inputs.monitoring import monitoring_text, refuse_slurm
    from manifesto.tasks.inputs.plan import plan_warnings

    ro = request.options
    warnings: tuple[str, ...] = ()
    search = _request_search(tasks, request)
    read = [*_named(request.cluster, tasks), tasks.realpath(images_file())]
    try:
        c = _cluster(request.cluster, tasks, search)
        read += c.loaded.files
        warnings += _loading(request.cluster, c)
        refuse_slurm(c)  # before resolving anything
        routing = _routing(ro, tasks, search)
        specs, plans = [], []
        for ref in request.specs:
            s = _spec(ref, tasks, search)
            read += s.files  # the spec and its extends chain, even when the cluster cannot run it
            warnings += _loading(ref, s)
            resolved, _key, error, files = _resolve(tasks, s, c, ro, search, routing, request.roots)
            if resolved.status == Status.SKIPPED and not request.explicit:  # not for this cluster
                continue
            if resolved.status != Status.OK:
                return Outcome(Status.FAILED, reason=resolved.reason, inputs=tuple(sorted(set(read))), error=error,
                               warnings=_once(warnings))
            plans.append((resolved.plan, files))
            specs.append(s)
            warnings += plan_warnings(resolved.plan, c.profile)
        text, inputs = monitoring_text(specs, c, ro, plans)
    except ManifestoError as exc:
        return _failed(exc, read, warnings=_once(warnings + exc.warnings))
    return Outcome(Status.OK, text, ".yaml", inputs=tuple(sorted(set(read + inputs))), cluster_name=c.name,
                   warnings=_once(warnings))


def gitops(request, tasks):
    """The GITOPS task: the Argo CD objects of a gitops target. Each covered deployment is
    resolved as its own render resolves it (through the store, where that render left its
    Plan) for the objects its Application must know (what the idle-shutdown controller owns);
    the bundled health checks go into the argocd-cm patch."""
    from manifesto.errors import BuildError, ManifestoError
    from manifesto.render import Refused, artifact, place
    from manifesto.render.gitops import render_gitops
    from manifesto.tasks.status import Status
    from manifesto.tasks.core import Outcome

    from manifesto.tasks.inputs.plan import plan_warnings

    search = _search(tasks, request.roots, False)
    read = [os.path.realpath(request.buildfile)]
    deployments = []
    warnings: tuple[str, ...] = ()
    try:
        for dep in request.deployments:
            c = _cluster(dep.cluster, tasks, search)
            read += c.loaded.files
            warnings += _loading(dep.cluster, c)
            if c.platform == "slurm":
                fix = ("leave it out of the target's `deployments:`" if request.explicit
                       else "give it its `slurm_host`, or name the Kubernetes ones in `deployments:`")
                raise BuildError(f"gitops target //:{request.name}: deployment target //:{dep.name} runs on "
                                 f"Slurm cluster '{c.name}', and Argo CD delivers to Kubernetes only; {fix}")
            s = _spec(dep.spec, tasks, search)
            read += s.files
            warnings += _loading(dep.spec, s)
            routing = _routing(dep.options, tasks, search)
            resolved, _key, error, files = _resolve(tasks, s, c, dep.options, search, routing, request.roots)
            read += files
            if resolved.status != Status.OK:
                return Outcome(Status.FAILED, reason=resolved.reason, inputs=tuple(sorted(set(read))), error=error,
                               warnings=_once(warnings))
            warnings += plan_warnings(resolved.plan, c.profile)
            destination = request.settings.destination or {"name": dep.context or c.name}
            try:  # the deployment's artifact, as its own render makes it
                objs = artifact(resolved.plan, resolved.header).objects
            except Refused as exc:
                raise place(exc.refusal, s, c) from None
            deployments.append(({"name": dep.name, "namespace": dep.options.namespace, "file": f"{dep.name}.yaml",
                                 "destination": destination}, objs))
        monitoring = []
        for mon in request.monitoring:
            c = _cluster(mon.cluster, tasks, search)
            read += c.loaded.files
            warnings += _loading(mon.cluster, c)
            if c.platform != "slurm":
                monitoring.append({"name": mon.name, "namespace": mon.namespace, "file": f"{mon.name}.yaml",
                                   "destination": request.settings.destination or {"name": mon.context or c.name}})
        # Package files like the code: their bytes are in the code fingerprint, not the inputs.
        checks = [(group, kind, _package_text(path)) for group, kind, path in health_checks()]
        text = render_gitops(request.name, request.settings, deployments, checks, monitoring)
    except ManifestoError as exc:
        return _failed(exc, read, warnings=_once(warnings + exc.warnings))
    return Outcome(Status.OK, text, ".yaml", inputs=tuple(sorted(set(read))), warnings=_once(warnings))


def _once(lines: tuple[str, ...]) -> tuple[str, ...]:
    """``lines`` with each said once, in the order first found."""
    return tuple(dict.fromkeys(lines))


#: Argo CD health checks shipped with the package, laid out as Argo CD's resource_customizations.
HEALTH_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "argocd",
                          "resource_customizations")


def health_checks() -> list[tuple[str, str, str]]:
    """``(group, Kind, path of health.lua)`` of every bundled Argo CD health check, sorted."""
    found = []
    for group in sorted(_names(HEALTH_DIR)):
        for kind in sorted(_names(os.path.join(HEALTH_DIR, group))):
            path = os.path.join(HEALTH_DIR, group, kind, "health.lua")
            if os.path.isfile(path):
                found.append((group, kind, path))
    return found


def _names(path: str) -> list[str]:
    try:
        return [n for n in os.listdir(path) if not n.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _package_text(path: str) -> str:
    """A file of the package itself (a health check), read through the edge's bounded reader."""
    from manifesto.edge.raw import read_regular

    return read_regular(path).decode("utf-8")


def prepare() -> None:
    """Import what every render needs and build its validators: a process pool forked after
    this shares them, instead of each worker importing and building them again."""
    import ruamel.yaml  # noqa: F401

    from manifesto import cluster, render  # noqa: F401
    from manifesto.load import spellings as legacy  # noqa: F401
    from manifesto.render import header, k8s, monitoring, slurm  # noqa: F401
    from manifesto.render.k8s import idle  # noqa: F401
    from manifesto.resolve import core, router_check, vllm_check  # noqa: F401
    from manifesto.schema import quick, runtime  # noqa: F401
    from manifesto.tasks import core as _core, entries, memo  # noqa: F401
    from manifesto.tasks.inputs import architecture, images, monitoring as _monitoring, plan, routing  # noqa: F401

    for model in ("ClusterProfile", "ModelSpec", "EndpointPickerConfig"):
        quick.checker(model)
    images.load_images()


def code_fingerprint_paths() -> list[str]:
    """Files whose bytes define the renderer: the package's Python code and the image catalog."""
    from manifesto.load.digest import code_files

    return code_files()
