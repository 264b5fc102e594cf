"""``manifesto init [DIR]``: scaffold a workspace of one's own (see ``manifesto.build_graph.scaffold``)."""

from __future__ import annotations
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]


def register(sub, add) -> None:
    from manifesto.cli.hints import CATALOG

    p = add(sub, "init", help=SUMMARIES["init"])
    p.add_argument("directory", nargs="?", default=".", metavar="DIR", help="where to create it (default: .)")
    p.add_argument("--model", default="qwen/qwen3-0.6b", help="model spec to start from: a path or catalog name "
                   "(default: qwen/qwen3-0.6b)").complete = CATALOG["models"]
    p.add_argument("--cluster", "-c", default="example-gb200", help="cluster profile to start from: a path or "
                   "catalog name, e.g. your private one (default: example-gb200)").complete = CATALOG["clusters"]
    p.add_argument("--user", help="user of the deployment target (default: $USER)")
    p.add_argument("--namespace", "-n", default="default", help="namespace of the deployment target (default: default)")
    p.add_argument("--context", help="kube context the deployment target belongs to (default: the current one, "
                   "else the cluster's name)")
    p.add_argument("--slurm-host", metavar="HOST", help="with a Slurm cluster profile: the host whose Slurm the "
                   "deployment target belongs to (default: the profile's slurm.ssh_host, else this host)")
    p.add_argument("--gitops-repo", metavar="URL", help="deliver the deployment target through Argo CD: add a "
                   "gitops target whose Application syncs out/deploy/ from this repository URL (the one this "
                   "workspace is pushed to)")
    p.add_argument("--gitops-revision", metavar="REV", default="main", help="with --gitops-repo: the branch, tag "
                   "or commit Argo CD follows (default: main)")
    p.add_argument("--package", metavar="SPEC", help="what the CI workflow pip-installs: a requirement for this "
                   "version of llm-manifesto, e.g. a wheel URL or git+https://HOST/REPO@TAG (default: "
                   "MANIFESTO_PACKAGE, else llm-manifesto==VERSION)")
    p.set_defaults(func=_init)


def _init(args) -> int:
    import re
    import shlex
    from pathlib import Path

    from manifesto.cli.common import info
    from manifesto.load.catalog import find
    import manifesto.cli.settings as cli_settings
    from manifesto.errors import say_warnings
    from manifesto.load.inputs import load_model_data
    from manifesto.build_graph.scaffold import DEFAULT_PACKAGE, cluster_text, workspace_files, write_workspace
    from manifesto.util.yamlemit import dump_yaml

    env = cli_settings.settings()
    model_path = find("models", args.model, search=getattr(args, "search", None))
    cluster_path = find("clusters", args.cluster, search=getattr(args, "search", None))
    cluster_yaml = cluster_text(cluster_path)  # validated before anything is written
    user = args.user or re.sub(r"[^a-z0-9-]+", "-", cli_settings.current_user(None, env).lower()).strip("-")
    cluster_name = Path(cluster_path).name.removesuffix(".yaml")
    slurm_host = _slurm_host(args, cluster_path)
    context = args.context or (None if slurm_host else cli_settings.kube_context(None, env)) or cluster_name
    model_name = Path(model_path).name.removesuffix(".yaml")
    model = say_warnings(load_model_data(model_path))  # the reference spellings it maps: said here
    files = workspace_files((model_name, dump_yaml(model.data)), (cluster_name, cluster_yaml),
                            user=user or "user", namespace=args.namespace, context=context,
                            package=args.package or env.get("MANIFESTO_PACKAGE") or DEFAULT_PACKAGE,
                            slurm_host=slurm_host, gitops=_gitops(args, slurm_host))
    written = write_workspace(args.directory, files)
    for rel in written:
        info(args, f"wrote {Path(args.directory) / rel}")
    name = re.search(r"(?m)^    name: (\S+)$", files["BUILD.yaml"]).group(1)
    where = "" if args.directory == "." else f"cd {shlex.quote(args.directory)} && "
    # As printed it runs: a Kubernetes target applies only in its own kube context, which need not
    # be the current one (or there may be none), and its deploy, dry run too, needs HF_TOKEN.
    if slurm_host:
        info(args, f"next: {where}manifesto build && manifesto deploy //:{name} --dry-run")
    else:
        info(args, f"next: {where}manifesto build && manifesto deploy //:{name} --context {shlex.quote(context)} "
             "--dry-run")
        info(args, "      (deploy, its dry run too, reads HF_TOKEN from the environment or .env for hf-secret)")
    if args.gitops_repo:
        info(args, f"then: commit and push the workspace to {args.gitops_repo}, and `kubectl apply --server-side -n "
             "argocd -f out/gitops/argocd.yaml` (README, \"GitOps with Argo CD\")")
    return 0


def _gitops(args, slurm_host: str | None) -> tuple[str, str] | None:
    """(repository URL, revision) of the gitops target to write, None without --gitops-repo."""
    from manifesto.errors import InputError

    if not args.gitops_repo:
        if args.gitops_revision != "main":
            raise InputError("--gitops-revision: only with --gitops-repo URL")
        return None
    if slurm_host is not None:
        raise InputError("--gitops-repo: the cluster profile is a Slurm cluster; Argo CD delivers to Kubernetes "
                         "clusters only")
    return args.gitops_repo, args.gitops_revision


def _slurm_host(args, cluster_path: str) -> str | None:
    """For a Slurm profile, the host its deployment target belongs to: --slurm-host, the
    profile's ssh host, else this host (where sbatch then runs); None for Kubernetes."""
    from manifesto.cluster import load_cluster
    from manifesto.errors import InputError

    cluster = load_cluster(cluster_path)
    if cluster.platform != "slurm":
        if args.slurm_host:
            raise InputError(f"--slurm-host: cluster '{cluster.name}' is a {cluster.platform} cluster; its "
                             "deployment target names a kube context (--context)")
        return None
    if args.context:
        raise InputError(f"--context: cluster '{cluster.name}' is a Slurm cluster; its deployment target names a "
                         "Slurm host (--slurm-host)")
    if args.slurm_host:
        return args.slurm_host
    ssh_host = cluster.profile.slurm.ssh_host if cluster.profile.slurm else None
    if ssh_host:
        return ssh_host
    import os

    return os.uname().nodename  # gethostname() without a socket module
