"""The one-line help of each command a module of its own registers (``commands._TOP_MODULES``,
``_RENDER_MODULES``, ``_CONFIG_MODULES``; a command under ``render`` or ``config`` by its
path), in one place: the module passes it to ``add`` and ``commands.register`` lists the
command by it, so the top-level ``--help``, a completion of command names and a mistyped
command's listing import none of those modules."""

from __future__ import annotations

__all__ = ["SUMMARIES"]

SUMMARIES = {
    "migrate": (
        "rewrite a reference-format model spec or cluster profile in this format (comments "
        "kept), reporting what could not be mapped"
    ),
    "completion": "print a shell completion script (bash, zsh or fish)",
    "man": "print the manual page (roff); view it with: manifesto man | man -l -",
    "file": "diff, apply or delete a rendered manifest file against the cluster",
    "deploy": "render a spec and apply it (or: deploy routing SPEC, deploy bootstrap)",
    "servers": (
        "list live Manifesto instances in the namespace (with ADDR: that deployment target's "
        "status)"
    ),
    "stop": "delete the live objects of an instance (interactive picker without a target)",
    "ready": "wait until a spec's model pods and routing frontend are ready",
    "test": "end-to-end tests against a cluster",
    "slurm": "submit, list and cancel Slurm jobs (locally or over ssh)",
    "diff": (
        "kubectl diff a deployment target's out/ artifact against the cluster (exit 1: "
        "differs); with --base REV, a reviewer's diff of out/ at a git revision against the "
        "working tree"
    ),
    "status": (
        "whether a deployment target's live objects are in-sync, idle, drifted or missing "
        "(exit 1 unless in-sync or idle)"
    ),
    "init": (
        "scaffold a workspace: BUILD.yaml with a deployment target, models/, clusters/, "
        ".gitignore and a CI workflow"
    ),
    "regen": (
        "render again what an artifact's header records and compare it with the file (exit 0 "
        "identical, 1 differs, 2 error); runs no shell"
    ),
    "plan": (
        "propose every layout of a model that fits each cluster target's GPUs (weights and KV "
        "cache, as render checks them), ranked by cost, then GPUs, then headroom; --write one "
        "as a spec"
    ),
    # commands a module adds under `render` and under `config`, by their path
    "render workload": (
        "render a workload (Job, Deployment, LeaderWorkerSet) with a cluster's accelerator, "
        "placement and Kueue settings"
    ),
    "render monitoring": (
        "render namespace-scoped monitoring (PodMonitors, Prometheus and Grafana configuration "
        "and RBAC, dashboards) for the instances of SPECs"
    ),
    "config export": "write a self-contained copy of an entry (model extends flattened)",
    "config import": "validate a file and install it in the user catalog",
    "config edit": "edit the user-catalog copy of an entry in $EDITOR (bundled entries are copied first)",
}
