"""``manifesto slurm submit|servers|stop``: the Slurm workflow commands."""

from __future__ import annotations

from manifesto.cli.common import info, slurm_cluster, slurm_submit, spec_args, target_args, verbose
from manifesto.cli.hints import CATALOG, DEPLOYMENTS, SLURM_JOBS
from manifesto.cli.target_cmds import target_command
from manifesto.cli.flags import add_output
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]


def register(sub, add) -> None:
    slurm = add(sub, "slurm", help=SUMMARIES["slurm"])
    ssub = slurm.add_subparsers(dest="slurm_action", metavar="ACTION")
    ssub.required = True
    p = add(ssub, "submit", help="render a spec for a Slurm cluster and submit it with sbatch")
    spec_args(p, slurm_only=True)
    p.add_argument("--test-only", action="store_true", help="validate with sbatch --test-only; submit nothing")
    add_output(p)
    target_args(p)
    p.set_defaults(func=_submit)
    p = add(ssub, "servers", help="list your Manifesto jobs (with ADDR: that deployment target's jobs and status)")
    p.add_argument("spec", nargs="?", metavar="ADDR", help="a Slurm deployment target (//:NAME)").complete = DEPLOYMENTS
    p.add_argument("--cluster", "-c", help="Slurm cluster profile: a path or catalog name").complete = CATALOG["clusters"]
    p.add_argument("--context", help="kube context used to pick a cluster profile")
    add_output(p)
    target_args(p, dry_run=False)
    p.set_defaults(func=_servers)
    p = add(ssub, "stop", help="cancel a job (N), one array element (N_I), a whole heterogeneous job, or every "
            "job of a deployment target (ADDR)")
    p.add_argument("job", metavar="JOB|ADDR", help="a Slurm job ID as submit printed it (N, N_I for one array "
                   "element, N+C for one heterogeneous component) or a Slurm deployment target (//:NAME)"
                   ).complete = SLURM_JOBS
    p.add_argument("--cluster", "-c", help="Slurm cluster profile: a path or catalog name").complete = CATALOG["clusters"]
    p.add_argument("--context", help="kube context used to pick a cluster profile")
    p.set_defaults(func=_stop)


def _submit(args) -> int:
    done = target_command(args, "submit")
    return slurm_submit(args) if done is None else done


def _servers(args) -> int:
    from manifesto.ops import slurm
    from manifesto.util.outputs import emit

    done = target_command(args, "servers")
    if done is not None:
        return done
    cluster = slurm_cluster(args)
    s = cluster.profile.slurm
    rows = slurm.parse_servers(slurm.run(slurm.servers_call(s.ssh_host if s else None), trace=verbose(args)).stdout)

    def text() -> None:
        from manifesto.errors import printable

        if not rows:
            where = f" on {s.ssh_host}" if s and s.ssh_host else ""
            info(args, f"manifesto: no Manifesto jobs of yours are queued or running on {cluster.name}{where}")
        for row in rows:  # squeue's fields (job names above all) are data from outside: escaped
            job, instance, state, nodes, reason = (printable(row[k]) for k in ("job", "instance", "state", "nodes",
                                                                               "reason"))
            print(f"{job:<14} {instance:<32} {state:<10} {nodes or reason}")

    emit(args.output, rows, text=text, names=lambda: [row["job"] for row in rows])
    return 0


def _stop(args) -> int:
    from manifesto.build_graph.deployments import is_target_ref
    from manifesto.ops import slurm

    if is_target_ref(args.job):
        import manifesto.cli.target_cmds as target_cmds

        args.spec = args.job
        return target_cmds.stop(args)
    cluster = slurm_cluster(args)
    s = cluster.profile.slurm
    if slurm.check_cancelled(args.job, slurm.run(slurm.stop_call(args.job, s.ssh_host if s else None),
                                                 trace=verbose(args))):
        info(args, f"cancelled Slurm job {args.job} on {cluster.name}")
    else:
        info(args, f"manifesto: Slurm job {args.job} on {cluster.name} had already ended; nothing to cancel")
    return 0
