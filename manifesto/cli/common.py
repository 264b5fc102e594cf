"""Helpers every command module shares: argument groups, loading a spec and cluster from
parsed arguments, the cached render, the kubectl edge and the Slurm submit path.

Command modules import from here, never from each other. Nothing heavy is imported at
module level: parsers are built on every start-up, including ``--help`` and completion.
"""

from __future__ import annotations

import argparse

__all__ = [
    "run_of",
    "verbose",
    "info",
    "add",
    "spec_args",
    "kube_args",
    "settings",
    "search_of",
    "load_cluster_for",
    "load_pair",
    "plan_for_args",
    "resolve_loaded",
    "pick_namespace",
    "cached_command",
    "render_cached",
    "kube",
    "refuse_slurm_cluster",
    "refuse_slurm_if_named",
    "slurm_cluster",
    "slurm_submit",
    "target_args",
]


# -- -q / -v and warnings: the run ---------------------------------------------------------

def run_of(args):
    """The run of this command (``manifesto.errors.Run``: its -q/-v and the warnings it has
    given), which ``main`` puts on ``args``. A caller that parsed ``args`` itself (a test
    calling a handler) gets a run of its own, kept on ``args`` for the rest of the command."""
    run = getattr(args, "run", None)
    if run is None:
        from manifesto.errors import Run

        run = args.run = Run(quiet=getattr(args, "quiet", False), verbose=getattr(args, "verbose", False))
    return run


def verbose(args) -> bool:
    """Whether -v was given: kubectl and Slurm calls are traced."""
    return run_of(args).verbose


def info(args, message: str) -> None:
    """A line for the person at the terminal (stderr), silenced by -q; data goes to stdout."""
    run_of(args).info(message)


# -- parsers ----------------------------------------------------------------------------

def add(sub, name: str, **kwargs):
    """A subcommand parser whose help is sized without importing shutil."""
    from manifesto.cli.build_cmds import formatter

    return sub.add_parser(name, formatter_class=formatter(), **kwargs)


def wants(sub, *names: str) -> bool:
    """Whether the parsers of commands ``names`` are needed under ``sub``: always, but when a run
    builds only its own command (``manifesto.cli.parser._OnlyOne``). A command module is
    imported only when it is."""
    check = getattr(sub, "wants", None)
    return check is None or check(*names)


def spec_args(p: argparse.ArgumentParser, render: bool = True, *,
              context_help: str = "kube context used to pick a cluster profile and namespace",
              namespace_help: str = "namespace (default: MANIFESTO_NAMESPACE or the kube context's)",
              specs_help: str | None = None, slurm_only: bool = False) -> None:
    """SPEC and the options that pick a cluster, identity and namespace; with ``render``, the
    options that change what is rendered (``slurm_only``: but the Kubernetes-only ones, for a
    command that renders only for Slurm). A command whose --context or --namespace means more
    (``test e2e``) passes its own help for them; one that takes several specs (``render
    monitoring``) passes ``specs_help``, and gets them as ``args.specs``."""
    if not isinstance(p, argparse.ArgumentParser):  # a command this run does not build
        return
    from manifesto.cli.hints import CATALOG

    if specs_help is None:
        p.add_argument("spec", metavar="SPEC", help="model spec: a path or a catalog name such as qwen/aggregated"
                       ).complete = CATALOG["models"]
    else:
        p.add_argument("specs", nargs="+", metavar="SPEC", help=specs_help).complete = CATALOG["models"]
    p.add_argument("--cluster", "-c", help="cluster profile: a path or catalog name "
                   "(default: MANIFESTO_CLUSTER or the kube context)").complete = CATALOG["clusters"]
    p.add_argument("--context", help=context_help)
    from manifesto.cli.flags import KUBERNETES_ONLY, add_option_flags

    completers = {"routing": CATALOG["routing"]}
    add_option_flags(p, "select", help_for={"namespace": namespace_help}, complete=completers)
    if render:
        add_option_flags(p, "render", complete=completers, leave_out=KUBERNETES_ONLY if slurm_only else frozenset())


def kube_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--context", help="kube context passed to kubectl")
    p.add_argument("--namespace", "-n", help="namespace (default: MANIFESTO_NAMESPACE or the kube context's)")


# -- loading ----------------------------------------------------------------------------

def search_of(args):
    """Where names resolve for this run (``catalog.SearchPath``), which ``main`` puts on
    ``args``; None (the environment's catalogs, no build addresses) for a caller that did not."""
    return getattr(args, "search", None)


def settings(args) -> dict[str, str]:
    """The run's settings (``cli.settings``); a workspace .env line that is ignored is warned
    about once per run, however often the settings are read."""
    import manifesto.cli.settings as cli_settings

    env = cli_settings.settings()
    run = run_of(args)
    for warning in env.ignored:
        run.once(f"warning: {warning}")
    return env


def pick_namespace(args, env) -> str:
    """--namespace, else MANIFESTO_NAMESPACE, else the kube context's namespace; a value that is
    not a DNS label is refused, naming where it came from."""
    import manifesto.cli.settings as cli_settings

    return cli_settings.checked_namespace(args.namespace, env, args.context)


def load_cluster_for(args, env):
    """The cluster profile --cluster, MANIFESTO_CLUSTER(_MAP) or the kube context selects."""
    import manifesto.cli.settings as cli_settings
    from manifesto.cluster import load_cluster

    return load_cluster(cli_settings.pick_cluster(args.cluster, env, args.context), search=search_of(args))


def load_pair(args):
    """(spec, cluster, options) from SPEC, --cluster and the settings."""
    import manifesto.cli.settings as cli_settings
    from manifesto.spec import load_spec

    env = cli_settings.settings()
    cluster = load_cluster_for(args, env)
    spec = load_spec(args.spec, cluster, search=search_of(args))
    return spec, cluster, cli_settings.options(args, env, kube=cluster.platform != "slurm")


def plan_for_args(args, env, command: str, cluster=None):
    """(plan, spec, cluster) of a Kubernetes cluster; Slurm clusters are refused. ``cluster``:
    the profile the caller already loaded with ``load_cluster_for``."""
    import manifesto.cli.settings as cli_settings
    from manifesto.spec import load_spec

    cluster = cluster or load_cluster_for(args, env)
    refuse_slurm_cluster(cluster, command)
    spec = load_spec(args.spec, cluster, search=search_of(args))
    plan = resolve_loaded(spec, cluster, cli_settings.options(args, env), search_of(args))
    return plan, spec, cluster


def resolve_loaded(spec, cluster, options, search, hf_home: str | None = None):
    """The Plan of the loaded ``spec`` on the loaded ``cluster``: the pair's RESOLVE task
    (``manifesto.tasks.runner.run`` on a PairRequest of the loaded inputs, nothing kept on
    disk), its error raised. ``search``: where a routing profile name resolves; ``hf_home``: a Hugging Face
    cache a config.json may come from (``explain`` only)."""
    from manifesto.errors import say_warnings
    from manifesto.store import Store
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    request = PairRequest(spec, cluster, options, catalogs=True, search=search, hf_home=hf_home)
    return say_warnings(run(Task.RESOLVE, request, Tasks(Store(None), ""))).ok().plan


def artifact_loaded(spec, cluster, options, search, layer: str = "manifest"):
    """(Plan, Artifact) of the loaded ``spec`` on the loaded ``cluster``: the pair's ARTIFACT
    task (``manifesto.tasks.runner.run`` on a PairRequest of the loaded inputs, nothing kept on
    disk), its error raised. The Artifact (``manifesto.render.products.Artifact``: objects with the
    artifact-digest annotation, names and sizes checked) is None when the plan has no such
    ``layer`` (the routing layer of a plan without routing)."""
    from manifesto.errors import say_warnings
    from manifesto.store import Store
    from manifesto.tasks.core import PairRequest, Task
    from manifesto.tasks.memo import Tasks
    from manifesto.tasks.runner import run

    request = PairRequest(spec, cluster, options, catalogs=True, search=search, layer=layer)
    outcome = say_warnings(run(Task.ARTIFACT, request, Tasks(Store(None), ""))).ok()
    return outcome.plan, outcome.artifact


def artifact_for_args(args, env, command: str, cluster=None, layer: str = "manifest"):
    """(Plan, Artifact, spec) of SPEC on a Kubernetes cluster (:func:`artifact_loaded`); Slurm
    clusters are refused. ``cluster``: the profile the caller already loaded with ``load_cluster_for``."""
    import manifesto.cli.settings as cli_settings
    from manifesto.spec import load_spec

    cluster = cluster or load_cluster_for(args, env)
    refuse_slurm_cluster(cluster, command)
    spec = load_spec(args.spec, cluster, search=search_of(args))
    plan, made = artifact_loaded(spec, cluster, cli_settings.options(args, env), search_of(args), layer)
    return plan, made, spec


def render_cached(args, command: str = "render manifest") -> tuple[str, str]:
    """(text, suffix) of a render, served from the store when its inputs are unchanged."""
    text, suffix, _ = cached_command(args, command)
    return text, suffix


def cached_command(args, command: str, task: str = "render", hf_home: str | None = None) -> tuple[str, str, str]:
    """``tasks.commands.cached`` for SPEC, --cluster and the settings: (text, suffix, label) of
    the pair's ``task`` (a ``manifesto.tasks.Task`` value: "render" or "explain")."""
    import os

    from manifesto.load.catalog import find
    import manifesto.cli.settings as cli_settings

    env = cli_settings.settings()
    search = search_of(args)
    cluster_ref = str(find("clusters", cli_settings.pick_cluster(args.cluster, env, args.context), search=search))
    spec_ref = str(find("models", args.spec, search=search))
    cluster, spec = os.path.abspath(cluster_ref), os.path.abspath(spec_ref)
    raw = cli_settings.raw_options(args, env, kube=_reads_kube_namespace(args, env, cluster_ref, search))
    # Names resolve through the catalogs, so key on the files they resolve to: a user entry
    # that starts shadowing a bundled one must not be answered from the old entry.
    routing = (os.path.abspath(find("routing", raw["routing_profile"], search=search))
               if raw["routing_profile"] else None)
    from manifesto.tasks import commands

    # a search confined to some folders (regen's private one) confines every file the pair reads
    roots = tuple(search.within) if search is not None else ()
    query = commands.Query(command, spec, cluster, routing, raw, task=task, hf_home=hf_home, refs=(spec_ref, cluster_ref))
    return commands.cached(commands.cache_dir(env), query, env.get("MANIFESTO_STORE_LIMIT"), roots)


def _reads_kube_namespace(args, env, cluster_ref: str, search) -> bool:
    """Whether a namespace not given falls back to the kube context's: not for a Slurm
    cluster, whose renders read no kube context (the profile is read only when it decides)."""
    if getattr(args, "namespace", None) or env.get("MANIFESTO_NAMESPACE"):
        return True
    from manifesto.cluster import load_cluster

    return load_cluster(cluster_ref, search=search).platform != "slurm"


# -- Kubernetes -------------------------------------------------------------------------

def kube(args, env, namespace, kube_context):
    """The kubectl call builder for one namespace and context, tuned by MANIFESTO_KUBECTL_*
    (and traced under -v)."""
    from manifesto.cli.settings import kube_env
    from manifesto.ops.kubectl import Kube, settings_from_env

    tuned = settings_from_env(env)
    tuned["trace"] = tuned["trace"] or verbose(args)
    return Kube(namespace=namespace, context=kube_context, extra_env=kube_env(env), **tuned)


def refuse_slurm_cluster(cluster, command: str) -> None:
    from manifesto.errors import OpsError

    if cluster.platform == "slurm":
        raise OpsError(f"cluster '{cluster.name}' is a Slurm cluster; `manifesto {command}` is Kubernetes-only, "
                       "use `manifesto slurm ...` instead")


def refuse_slurm_if_named(args, env, command: str) -> None:
    """Without a spec only an explicitly named cluster (flag or MANIFESTO_CLUSTER) is checked."""
    name = getattr(args, "cluster", None) or env.get("MANIFESTO_CLUSTER")
    if name:
        from manifesto.cluster import load_cluster

        refuse_slurm_cluster(load_cluster(name, search=search_of(args)), command)


# -- Slurm ------------------------------------------------------------------------------

def slurm_cluster(args, cluster=None):
    """The cluster --cluster (or the settings) names (``cluster``: already loaded); anything but a
    Slurm cluster is refused."""
    from manifesto.errors import OpsError

    cluster = cluster or load_cluster_for(args, settings(args))
    if cluster.platform != "slurm":
        raise OpsError(f"cluster '{cluster.name}' is not a Slurm cluster (platform: {cluster.platform})")
    return cluster


def slurm_submit(args, cluster=None) -> int:
    """Render (through the render cache) and submit; the job ID goes to stdout (-o json: an object).
    ``cluster``: the profile the caller already loaded."""
    import shlex

    from manifesto.ops import slurm
    from manifesto.util.outputs import emit

    cluster = slurm_cluster(args, cluster)
    text, _ = render_cached(args)
    s = cluster.profile.slurm
    proc = slurm.run(slurm.submit_call(text, s.ssh_host if s else None, args.test_only), trace=verbose(args))
    if args.test_only:
        from manifesto.errors import printable

        answer = (proc.stderr or proc.stdout).strip()  # sbatch answers on stderr
        info(args, printable(answer[-4000:], keep="\n"))
        return 0
    job = slurm.job_id(proc.stdout)
    where = f" over ssh to {s.ssh_host}" if s and s.ssh_host else ""
    # The same selection again: the flag as given, or nothing when the settings picked the profile.
    flag = f" --cluster {shlex.quote(args.cluster)}" if args.cluster else ""
    info(args, f"submitted Slurm job {job} to {cluster.name}{where}; list it with `manifesto slurm servers{flag}`, "
               f"cancel it with `manifesto slurm stop {job}{flag}`")
    output = getattr(args, "output", "text")
    emit(output, {"job": job, "cluster": cluster.name}, text=lambda: print(job), names=lambda: [job])
    return 0


# -- deployment targets -----------------------------------------------------------------

def target_args(p: argparse.ArgumentParser, dry_run: bool = True) -> None:
    """Flags of commands that take a deployment target address or out/ path."""
    p.add_argument("--build", action="store_true", help="with a deployment target: build its out/ artifact first "
                   "when stale (default: refuse a stale artifact)")
    if dry_run:
        p.add_argument("--dry-run", action="store_true", help="with a deployment target: print the kubectl or "
                       "sbatch calls, run none")
