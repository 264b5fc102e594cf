"""Subcommand definitions (argparse only) and their handlers (lazy imports inside)."""

from __future__ import annotations

import sys

from manifesto.cli.common import (add, artifact_loaded, cached_command, info, load_cluster_for, load_pair,
                                  pick_namespace, render_cached, resolve_loaded, search_of, settings, spec_args, wants)
from manifesto.cli.hints import FILES
from manifesto.cli.flags import add_output, file_arg
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]


def _module(name: str):
    """A sibling command module, imported by name: command modules never import each other."""
    import importlib

    return importlib.import_module(f"manifesto.cli.{name}")


#: The command modules registering commands under ``render``, under ``config`` and at the top,
#: with the commands each registers: a run that builds only its own command imports only the
#: module defining it (tests/cli/test_cli_conventions.py checks the words against the modules).
_RENDER_MODULES = (("workload_cmds", ("workload",)), ("monitoring_cmds", ("monitoring",)))
_CONFIG_MODULES = (("catalog_cmds", ("export", "import", "edit")),)
_TOP_MODULES = (
    ("migrate_cmds", ("migrate",)), ("completion", ("completion",)), ("manpage", ("man",)),
    ("ops_cmds", ("file", "deploy", "servers", "stop", "ready")), ("e2e_cmds", ("test",)), ("slurm_cmds", ("slurm",)),
    ("target_cmds", ("diff", "status")), ("init_cmds", ("init",)), ("regen_cmds", ("regen",)),
    ("plan_cmds", ("plan",)),
)


def register(sub) -> None:
    p = add(sub, "explain", help="show how a spec resolves: features, layout, env provenance")
    spec_args(p)
    add_output(p)
    p.set_defaults(func=_explain)

    render = add(sub, "render", help="render artifacts").add_subparsers(dest="what", metavar="WHAT")
    render.required = True
    p = add(render, "manifest", help="render a spec to stdout (Kubernetes YAML or sbatch script)")
    spec_args(p)
    p.set_defaults(func=_render_manifest)
    p = add(render, "file", help="render a spec to a file (default /tmp/manifesto.yaml or MANIFESTO_RENDER_OUT)")
    spec_args(p)
    p.add_argument("--output", "-o", metavar="FILE", type=file_arg, help="file to write (not a format: `-o json` is refused, "
                   "write ./json for a file of that name)").complete = FILES
    p.set_defaults(func=_render_file)
    p = add(render, "slurm", help="render a spec for a Slurm cluster: the sbatch script, to stdout or -o FILE")
    spec_args(p, slurm_only=True)
    p.add_argument("--output", "-o", metavar="FILE", type=file_arg, help="file to write (default: stdout)").complete = FILES
    p.set_defaults(func=_render_slurm)

    p = add(render, "routing", help="render only the llm-d routing layer of a spec")
    spec_args(p)
    p.set_defaults(func=_render_routing)
    p = add(render, "bootstrap", help="render namespace prerequisites of a cluster (shared cache PVC)")
    p.add_argument("--cluster", "-c", help="cluster profile: a path or catalog name")
    p.add_argument("--context", help="kube context used to pick a cluster profile and namespace")
    p.add_argument("--namespace", "-n", help="namespace (default: MANIFESTO_NAMESPACE or the kube context's)")
    p.set_defaults(func=_render_bootstrap)
    _modules(render, _RENDER_MODULES, "render ")

    config = add(sub, "config", help="inspect and validate the user and bundled catalogs")
    csub = config.add_subparsers(dest="action", metavar="ACTION")
    csub.required = True
    p = add(csub, "validate", help="validate a spec against a cluster offline, running the full renderer")
    spec_args(p)
    add_output(p)
    p.set_defaults(func=_config_validate)
    p = add(csub, "home", help="print the user catalog folder")
    add_output(p)
    p.set_defaults(func=_config_home)
    p = add(csub, "list", help="list catalog entries and where each comes from")
    p.add_argument("kind", choices=("models", "clusters", "routing"), help="the catalog: models, clusters or routing (profiles)")
    add_output(p, table=True)
    p.set_defaults(func=_config_list)
    p = add(csub, "resolve", help="print the file a catalog name resolves to")
    p.add_argument("kind", choices=("models", "clusters", "routing"), help="the catalog: models, clusters or routing (profiles)")
    p.add_argument("name", help="a catalog name, e.g. qwen/aggregated or example-gb200")
    add_output(p)
    p.set_defaults(func=_config_resolve)
    _modules(csub, _CONFIG_MODULES, "config ")
    _modules(sub, _TOP_MODULES, "")

    from manifesto.cli.build_cmds import register as register_build

    register_build(sub)


def _modules(sub, table, path: str) -> None:
    """The commands the modules of ``table`` add under ``sub`` (``path``: the words before
    them): a module is imported when this run needs one of its commands in full; otherwise
    each is listed by its name and ``SUMMARIES`` line (or, for a run of one command, left
    out), with no import."""
    for name, words in table:
        if wants(sub, *words):
            _module(name).register(sub, add)
        else:
            for word in words:
                sub.add_parser(word, help=SUMMARIES[path + word])


def _hf_home() -> str:
    """The Hugging Face cache explain may read a model's config.json from (HF_HOME, else the
    library's default ~/.cache/huggingface). Renders and builds never read it."""
    import os

    return os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")


def _explain(args) -> int:
    if args.output == "text":  # the text is a task result in the store, like a render
        # The Hugging Face cache it may read a config.json from is part of what was asked.
        hf_home = _hf_home()
        sys.stdout.write(cached_command(args, f"explain --hf-home {hf_home}", "explain", hf_home)[0])
        sys.stdout.write(_recorded_estimate(args))
        return 0
    from manifesto.util.outputs import emit
    from manifesto.resolve.plan import to_builtins

    spec, cluster, opts = load_pair(args)
    plan = resolve_loaded(spec, cluster, opts, search_of(args), hf_home=_hf_home())

    def text() -> None:
        from manifesto.resolve.explain import explain_text

        sys.stdout.write(explain_text(plan))

    emit(args.output, to_builtins(plan) if args.output in ("json", "yaml") else None, text=text,
         names=lambda: [plan.instance])
    return 0


#: The most lines and characters a line of a spec's recorded estimate ``explain`` shows.
_RECORDED_LINES, _RECORDED_WIDTH = 24, 240


def _recorded_estimate(args) -> str:
    """The estimate ``manifesto plan --write`` recorded in the spec's leading comment (the lines
    from "# Prefill/decode" or "# Estimated at" through "#   source:"), shown as the file says
    it: a comment, so nothing checks it against this render. Empty when there is none."""
    from manifesto.edge.files import read_bytes
    from manifesto.errors import ManifestoError
    from manifesto.load.catalog import find

    try:
        path = find("models", args.spec, search=search_of(args))
        raw = read_bytes(path, str(path))
    except (ManifestoError, OSError):
        return ""
    head = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.startswith("#") or len(head) > 64:
            break
        head.append(line)
    if not head or not head[0].startswith("# Written by `manifesto plan "):
        return ""
    start = next((i for i, line in enumerate(head) if line.startswith(("# Prefill/decode ", "# Estimated at "))), None)
    if start is None:
        return ""
    lines = []
    for line in head[start:]:
        lines.append(line[1:].strip())
        if line.startswith("#   source:"):
            break
    from manifesto.edge.escape import terminal

    shown = [terminal(line, _RECORDED_WIDTH) for line in lines[:_RECORDED_LINES]]
    return ("\nrecorded by plan (the spec's leading comment, as `manifesto plan --write` wrote it; not checked "
            "against this render)\n" + "".join(f"  {line}\n" for line in shown))


def _render_manifest(args) -> int:
    from manifesto.cli.provenance import with_source

    text, _ = render_cached(args)
    sys.stdout.write(with_source(text, settings(args)))
    return 0


def _render_routing(args) -> int:
    spec, cluster, opts = load_pair(args)
    from manifesto.cli.provenance import with_source

    sys.stdout.write(with_source(routing_text(spec, cluster, opts, search_of(args), args.spec), settings(args)))
    return 0


def routing_text(spec, cluster, options, search, shown: str) -> str:
    """The text of the routing layer's Artifact of the loaded ``spec`` on ``cluster`` (``shown``:
    the spec as the user named it); a Slurm cluster or a spec without routing is refused."""
    from manifesto.errors import ResolveError

    plan, made = artifact_loaded(spec, cluster, options, search, layer="routing")
    if plan.platform == "slurm":
        raise ResolveError("render routing is for Kubernetes clusters; Slurm batch scripts embed their router")
    if made is None:
        raise ResolveError(f"{shown} has routing disabled; there is no routing layer to render",
                           spec.where(("routing",)), "routing")
    return made.text


def _render_bootstrap(args) -> int:
    env = settings(args)
    cluster = load_cluster_for(args, env)
    sys.stdout.write(bootstrap_text(cluster, lambda: pick_namespace(args, env)))
    return 0


def bootstrap_text(cluster, namespace) -> str:
    """The bootstrap objects of ``cluster`` in the namespace ``namespace()`` gives, as YAML
    with their provenance header; a Slurm cluster is refused (before the namespace is asked)."""
    from manifesto.errors import ResolveError
    from manifesto.render.k8s.bootstrap import render_bootstrap
    from manifesto.util.yamlemit import dump_yaml

    if cluster.platform == "slurm":
        raise ResolveError(f"cluster '{cluster.name}' is a Slurm cluster; bootstrap objects are Kubernetes-only")
    namespace = namespace()
    try:
        return render_bootstrap(cluster.profile, namespace, dump_yaml(cluster.loaded.data))
    except ResolveError as exc:
        raise ResolveError(exc.message, cluster.where(("storage", "shared_claim")), exc.path) from None


def _check_output_file(value: str | None) -> None:
    """-o of render file/slurm names a file; elsewhere -o is an output format, so a bare format
    name here is almost surely that mistake (``./json`` still writes a file called json)."""
    from manifesto.errors import InputError
    from manifesto.util.outputs import FORMATS

    if value in FORMATS:
        raise InputError(f"--output {value}: here -o is the file to write, not an output format; "
                         f"write ./{value} for a file of that name")


def _write_rendered(args, text: str, target: str, flag: str) -> None:
    from manifesto.errors import InputError
    from manifesto.edge.fs import target_problem, write_atomic

    problem = target_problem(target)
    if problem:
        raise InputError(f"{flag}: {target} {problem}")
    try:
        write_atomic(target, text)
    except OSError as exc:
        raise InputError(f"{flag}: cannot write {target}: {exc.strerror or exc}") from None
    info(args, f"wrote {target}")


def _render_file(args) -> int:
    from manifesto.cli.provenance import with_source

    _check_output_file(args.output)
    text, suffix = render_cached(args)
    env = settings(args)
    text = with_source(text, env)
    target = args.output or env.get("MANIFESTO_RENDER_OUT") or f"/tmp/manifesto{suffix}"
    flag = "--output" if args.output else "MANIFESTO_RENDER_OUT" if env.get("MANIFESTO_RENDER_OUT") \
        else "the default output"
    _write_rendered(args, text, target, flag)
    return 0


def _render_slurm(args) -> int:
    _check_output_file(args.output)
    refuse_kubernetes(load_cluster_for(args, settings(args)))
    from manifesto.cli.provenance import with_source

    text = with_source(render_cached(args)[0], settings(args))
    if args.output:
        _write_rendered(args, text, args.output, "--output")
    else:
        sys.stdout.write(text)
    return 0


def refuse_kubernetes(cluster) -> None:
    """``render slurm`` on a cluster that is not a Slurm cluster: its error."""
    from manifesto.errors import InputError

    if cluster.platform != "slurm":
        raise InputError(f"cluster '{cluster.name}' is a {cluster.platform} cluster; render slurm writes Slurm "
                         "batch scripts (use `manifesto render manifest` or `render file` for it)")


def _config_validate(args) -> int:
    from manifesto.util.outputs import emit

    # The same task as `render manifest`: a render of these inputs is a hit for both.
    text, suffix, cluster = cached_command(args, "render manifest")
    kind = "batch script" if suffix == ".sbatch" else "Kubernetes manifest"
    lines = len(text.splitlines())
    emit(args.output, {"spec": args.spec, "cluster": cluster, "kind": kind, "lines": lines, "ok": True},
         text=lambda: print(f"ok: {args.spec} renders against {cluster} ({kind}, {lines} lines)"),
         names=lambda: [args.spec])
    return 0


def _config_home(args) -> int:
    from manifesto.load.catalog import config_home
    from manifesto.util.outputs import emit

    home = str(config_home())
    emit(args.output, {"path": home}, text=lambda: print(home), names=lambda: [home])
    return 0


def _config_list(args) -> int:
    from manifesto.load.catalog import entries
    from manifesto.util.outputs import emit

    from manifesto.load.catalog import unusable
    from manifesto.errors import printable

    rows = entries(args.kind)
    for path, problem in unusable(args.kind):
        print(f"manifesto: warning: {printable(str(path))} is not in the catalog: {problem}; rename it",
              file=sys.stderr)

    def text() -> None:
        width = max((len(r[0]) for r in rows), default=0)
        for name, origin, _, _ in rows:
            print(f"{printable(name).ljust(width)}  {origin}")

    emit(args.output, [{"name": n, "source": o, "path": str(p), "shadows_bundled": s} for n, o, p, s in rows],
         text=text, names=lambda: [r[0] for r in rows])
    return 0


def _config_resolve(args) -> int:
    from manifesto.load.catalog import find
    from manifesto.util.outputs import emit

    path = str(find(args.kind, args.name, search=search_of(args)))
    emit(args.output, {"kind": args.kind, "name": args.name, "path": path}, text=lambda: print(path),
         names=lambda: [path])
    return 0
