"""One (model, cluster) pair -> one artifact: the entry point the build graph calls.

Everything a render reads is returned in ``Artifact.inputs``, so the build graph can key
its cache on exactly those bytes. Nothing here reads the environment.
"""

from __future__ import annotations

import os

import msgspec

import manifesto.resolve.options as _options

__all__ = ["RenderOptions", "Artifact", "Products", "PRODUCTS", "prepare", "render_pair", "code_fingerprint_paths",
           "options_from"]


#: ``render_pair`` takes ``tasks=``: the build keeps its resolve and render products in the store.
STORES_TASKS = True

#: The options of one render: the Struct of every render option (``manifesto.resolve.options``),
#: the same class as ``resolve.plan.Options``.
RenderOptions = _options.Options


class Artifact(msgspec.Struct, frozen=True):
    text: str
    suffix: str  # .yaml or .sbatch
    inputs: tuple[str, ...]
    budget: dict | None = None  # the Plan's GPU budget as plain data (manifesto.resolve.budget)
    products: tuple[str, ...] = ()  # the store keys of its resolve and render products (manifesto.store.tasks)


def options_from(ro: RenderOptions):
    """The resolution options of a render: the same Struct (kept for callers of the old API)."""
    return ro


class Products:
    """The parse tasks' products in one process (a build, or one worker of its pool).

    Each input file is read and parsed once (``parse``, keyed by its name and text), and
    each cluster profile, spec and routing profile validated once (``get``), whatever the
    number of pairs that use it. A validated product is reused only while every file it
    was made from still has the bytes it had, so an edit is seen by the next render.
    ``parses`` and ``validations`` count the work done (the tests read them).
    """

    def __init__(self) -> None:
        self.yaml: dict = {}  # text -> (display name, data, locations); never mutated
        self.named: dict = {}  # (display name, text) -> (data, locations named after it)
        self.made: dict = {}  # (kind, path) -> (product, ((file, digest), ...))
        self.parses = 0
        self.validations = 0

    def parse(self, path, name, within=(), tasks=None):
        """(data, locations) of the YAML file at ``path`` (``yamlio.load_yaml``'s checks,
        ``within`` the directories it may be read from); with ``tasks``, through the store's
        parse task, so a build's workers parse each file once between them.

        Parsing is keyed by the file's bytes: two files with one content (copies of a spec)
        are parsed once, and the second gets the positions under its own name.
        """
        from manifesto.load import yamlio

        text = yamlio.read_text(path, name, within)
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

    def get(self, kind: str, path: str, make, files):
        """The product ``make()`` for ``(kind, path)``; ``files(product)`` lists what it read."""
        from manifesto.load.digest import file_digest

        key = (kind, path)
        hit = self.made.get(key)
        if hit is not None and all(file_digest(f) == d for f, d in hit[1]):
            return hit[0]
        product = make()
        self.validations += 1
        self.made[key] = (product, tuple((f, file_digest(f)) for f in files(product)))
        return product


def _renamed(locs, name: str):
    """``locs`` (the positions of one parse) as positions in the file ``name``."""
    from manifesto.errors import Origin
    from manifesto.load.yamlio import Locations

    return Locations(name, {k: Origin(name, o.line, o.col) for k, o in locs.table.items()})


#: The products of this process's renders (``render_pair``'s default).
PRODUCTS = Products()


def render_pair(model: str, cluster: str, options: RenderOptions, roots: tuple[str, ...] = (),
                products: Products | None = None, tasks=None) -> Artifact:
    """Render ``model`` against ``cluster``; raises IncompatiblePairError or another ManifestoError.
    With ``roots`` (the build's workspace), every file read must resolve below one of them or
    the bundled catalog: a symlink or an ``extends`` that leads elsewhere is an error naming
    the file, not a silent read of, say, a home directory.

    An error carries ``inputs``: the files read before it, so the build graph can cache the
    failure (or the skip) against exactly those bytes. ``products`` holds what earlier
    renders parsed (by default this process's :data:`PRODUCTS`). With ``tasks`` (a
    ``manifesto.store.tasks.Tasks``) the resolve and render tasks reuse and keep their
    products in the store, and the artifact (or the error, as ``products``) names their keys.
    """
    from manifesto.load.catalog import PATHS_ONLY, SearchPath, bundled_dir, images_file
    from manifesto.errors import ManifestoError
    from manifesto.resolve.plan import to_builtins
    from manifesto.load.yamlio import confinement

    # Every input is a path: no catalog name, user catalog or environment can leak in.
    search = SearchPath(within=confinement([*roots, bundled_dir()])) if roots else PATHS_ONLY
    products = PRODUCTS if products is None else products
    if isinstance(model, tuple):
        return _render_monitoring(model, cluster, options, search, products, tasks, roots)
    read = [os.path.realpath(model), os.path.realpath(cluster), os.path.realpath(images_file())]
    ro = options_from(options)
    keys: tuple[str, ...] = ()
    try:
        c = products.get("cluster", cluster, lambda: _cluster(cluster, products, search, tasks),
                         lambda c: c.loaded.files)
        read += c.loaded.files
        s = products.get("spec", model, lambda: _spec(model, products, search, tasks), lambda s: s.files)
        read += s.files
        routing = None
        if ro.routing_profile:
            ref = ro.routing_profile
            routing = products.get("routing", ref, lambda: _routing(ref, search), lambda r: [r[2]])
        if tasks is None:
            from manifesto.render import artifact_text
            from manifesto.service import plan_for

            plan, inputs = plan_for(s, c, ro, search, routing)
            text, suffix = artifact_text(plan, s, c, ro)
        else:
            plan, inputs, text, suffix, keys = _run_tasks(tasks, s, c, ro, search, routing, roots)
    except ManifestoError as exc:
        exc.inputs = tuple(sorted(set(read)))
        raise
    budget = to_builtins(plan.budget) if plan.budget is not None else None
    return Artifact(text=text, suffix=suffix, inputs=tuple(sorted(set(inputs))), budget=budget, products=keys)


def _run_tasks(tasks, s, c, ro, search, routing, roots):
    """The resolve and render tasks of one pair through the store: (plan, files read, text,
    suffix, product keys). A render refusal is placed in the current files; the keys of
    the products made before an error ride on it as ``products``."""
    from manifesto.render import Refused, place, render_plan

    plan, header, files, rkey, pd, task = _resolve_task(tasks, s, c, ro, search, routing, roots)
    try:
        text, suffix, dkey = tasks.render(task, plan, header, pd, render_plan)
    except Refused as exc:
        error = place(exc.refusal, s, c)
        error.products = tuple(k for k in (rkey, *getattr(exc, "products", ())) if k)
        raise error from None
    return plan, files, text, suffix, tuple(k for k in (rkey, dkey) if k)


def _resolve_task(tasks, s, c, ro, search, routing, roots):
    """The resolve task of one pair through the store: (plan, header inputs, files read, its
    key, the plan's digest, the task's name). The monitoring render asks it for the plans of
    the pairs it watches, which their own renders have stored by then."""
    from manifesto.load.digest import file_digest
    from manifesto.render import header_inputs
    from manifesto.service import resolution

    files, resolve = resolution(s, c, ro, search, routing)
    paths = sorted(set(files))
    prefix = os.path.join(roots[0], "") if roots else None

    def rel(path: str) -> str:
        return path[len(prefix):] if prefix and path.startswith(prefix) else path

    names = [rel(p) for p in paths]
    digests = [file_digest(p) or "-" for p in paths]

    def run():
        plan = resolve()
        return plan, header_inputs(plan, s, c, ro)

    task = f"{rel(str(s.path))} @ {rel(str(c.path))}"
    plan, header, rkey, pd = tasks.resolve(task, names, digests, msgspec.msgpack.encode(ro), run,
                                           keep=tasks.settled(paths))
    return plan, header, files, rkey, pd, task


def _cluster(path: str, products: Products, search, tasks=None):
    from manifesto.load.catalog import find, within
    from manifesto.cluster import Cluster
    from manifesto.load.inputs import load_cluster_file

    found = find("clusters", path, search=search)
    profile, loaded = load_cluster_file(found, within(search), _parser(products, tasks))
    return Cluster(profile, loaded, str(found))


def _spec(path: str, products: Products, search, tasks=None):
    from manifesto.load.catalog import find, within
    from manifesto.load.inputs import load_model
    from manifesto.spec import Spec

    found = find("models", path, search=search)
    model, loaded = load_model(found, within(search), _parser(products, tasks))
    return Spec(model, loaded, str(found))


def _parser(products: Products, tasks):
    """The loaders' ``parse``: ``products``' own, through the store's parse task with ``tasks``."""
    if tasks is None:
        return products.parse
    return lambda path, name, within=(): products.parse(path, name, within, tasks)


def _routing(ref: str, search):
    from manifesto.service import load_routing_profile

    return load_routing_profile(ref, search)


def prepare() -> None:
    """Import what every render needs and build its validators: a process pool forked after
    this shares them, instead of each worker importing and building them again."""
    import ruamel.yaml  # noqa: F401

    from manifesto import cluster, render, service, spec  # noqa: F401
    from manifesto.load import spellings as legacy  # noqa: F401
    from manifesto.render import header, k8s, monitoring, slurm  # noqa: F401
    from manifesto.render.k8s import idle  # noqa: F401
    from manifesto.resolve import core, router_check, vllm_check  # noqa: F401
    from manifesto.schema import quick, runtime  # noqa: F401
    from manifesto.store import tasks  # noqa: F401

    for model in ("ClusterProfile", "ModelSpec", "EndpointPickerConfig"):
        quick.checker(model)
    service.load_images()


def _render_monitoring(models: tuple, cluster: str, options: RenderOptions, search, products: Products,
                       tasks=None, roots: tuple[str, ...] = ()) -> Artifact:
    """The monitoring of the instances of ``models`` ((shown name, path) each) on ``cluster``;
    models the cluster cannot run (another accelerator) are left out. Every file is parsed and
    validated through ``products``, once per build like the pairs' own renders, and each
    spec resolved once: with ``tasks``, through the store, where the pair's own render left
    its plan (so an edit to one spec resolves that spec again, not every one)."""
    from manifesto.load.catalog import images_file
    from manifesto.errors import IncompatiblePairError, ManifestoError
    from manifesto.service import monitoring_text, plan_for

    read = [os.path.realpath(cluster), os.path.realpath(images_file())]
    ro = options_from(options)
    try:
        c = products.get("cluster", cluster, lambda: _cluster(cluster, products, search, tasks),
                         lambda c: c.loaded.files)
        read += c.loaded.files
        routing = None
        if ro.routing_profile:
            ref = ro.routing_profile
            routing = products.get("routing", ref, lambda: _routing(ref, search), lambda r: [r[2]])
        specs, resolved = [], []
        for _name, path in models:
            s = products.get("spec", path, lambda: _spec(path, products, search, tasks), lambda s: s.files)
            read += s.files  # the spec and its extends chain, even when the cluster cannot run it
            try:
                if tasks is None:
                    resolved.append(plan_for(s, c, ro, search, routing))
                else:
                    plan, _header, files, *_ = _resolve_task(tasks, s, c, ro, search, routing, roots)
                    resolved.append((plan, files))
            except IncompatiblePairError:
                continue
            specs.append(s)
        text, inputs = monitoring_text(specs, c, ro, search, routing, resolved)
    except ManifestoError as exc:
        exc.inputs = tuple(sorted(set(read)))
        raise
    return Artifact(text=text, suffix=".yaml", inputs=tuple(sorted(set(read + inputs))))


def code_fingerprint_paths() -> list[str]:
    """Files whose bytes define the renderer: the package's Python code and the image catalog."""
    from manifesto.load.digest import code_files

    return code_files()
