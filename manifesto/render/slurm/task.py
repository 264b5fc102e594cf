"""Per-node scripts of a serving role: the host-side task prelude and the shared launch script.

One srun task runs on each node of a role. Its *task* script works out where the node sits
(position in ``MANIFESTO_HOSTS``, replica, leader, pod identity, IPv4) and then starts the
*launch* script in the model image (or on the host). The launch script is
``manifesto.render.launch.launch_script`` with the Slurm ``Platform`` below, preceded by
the role's environment: no vLLM flag is decided here.
"""

from __future__ import annotations

import shlex

import msgspec

from manifesto.render.launch import Platform, launch_script, literal_note
import manifesto.render.slurm.runtime as rt
from manifesto.render.slurm.checks import SlurmUnsupported

__all__ = ["SLURM", "launch_text", "task_text", "forwarded_names", "needs_node_ip"]

# Node N of this replica is the Nth host after the replica's leader in MANIFESTO_HOSTS
# (the role's allocated hosts, in Slurm's order, comma separated).
SLURM = Platform(
    node_index='"${LWS_WORKER_INDEX:-0}"',
    leader='"$LWS_LEADER_ADDRESS"',
    node_address_body=(
        "  local hosts i\n"
        '  IFS=, read -r -a hosts <<< "$MANIFESTO_HOSTS"\n'
        '  for i in "${!hosts[@]}"; do\n'
        '    if [ "${hosts[i]}" = "$LEADER" ]; then echo "${hosts[i + $1]}"; return; fi\n'
        "  done\n"
        '  echo "manifesto: leader $LEADER is not in MANIFESTO_HOSTS" >&2; return 1'
    ),
    log_name='"${MANIFESTO_POD_UID}-${HOSTNAME}.log"',
)

# Kubernetes downward-API fields and the per-task shell value that replaces each on Slurm.
_FIELD_REFS = {
    "metadata.uid": '"$MANIFESTO_POD_UID"',
    "metadata.name": '"$HOSTNAME"',
    "spec.nodeName": '"$HOSTNAME"',
    "status.podIP": '"$MANIFESTO_NODE_IP"',
    "status.hostIP": '"$MANIFESTO_NODE_IP"',
}
# Writable compiled caches are private to one job (array element, routed replica) and node.
CACHE_SUFFIX = '"${MANIFESTO_POD_UID}-${HOSTNAME}"'


def needs_node_ip(role) -> bool:
    return any(v.field_ref in ("status.podIP", "status.hostIP") for v in role.env)


def forwarded_names(role) -> list[str]:
    """Variables computed on the host (or set by Slurm, or the user's HF_TOKEN) that the model
    process must see with the host's value, whatever the image defines."""
    names = ["HOSTNAME", "LWS_WORKER_INDEX", "LWS_LEADER_ADDRESS", "MANIFESTO_HOSTS", "MANIFESTO_POD_UID",
             "CUDA_VISIBLE_DEVICES", "HF_TOKEN"]
    if needs_node_ip(role):
        names += ["MANIFESTO_IPS", "MANIFESTO_NODE_IP"]
    return names


def _env_lines(plan, role) -> list[str]:
    cache_dirs = set(role.storage.cache_dirs)
    lines = ["# The model server's environment (cluster, fabric, spec and role settings). HF_TOKEN comes",
             "# from the submitting environment; writable caches are private to this job and node."]
    for var in role.env:
        if var.secret is not None:
            if var.name == "HF_TOKEN":
                continue  # forwarded from the submitter's environment, never written here
            raise SlurmUnsupported(
                f"reads Kubernetes Secret {var.secret[0]}/{var.secret[1]}, which Slurm cannot "
                "provide; export it in the submitting environment instead", "spec", ("env", var.name))
        if var.field_ref is not None:
            expr = _FIELD_REFS.get(var.field_ref)
            if expr is None:
                raise SlurmUnsupported(
                    f"reads the Kubernetes field {var.field_ref}, which has no Slurm equivalent",
                    "spec", ("env", var.name))
            if expr != f'"${var.name}"':
                lines.append(f"export {var.name}={expr}")
            continue
        value = var.value or ""
        suffix = f"/{CACHE_SUFFIX}" if value in cache_dirs else ""
        line = f"export {var.name}={shlex.quote(value)}{suffix}"
        lines += [*literal_note(line), line]
    return lines


def launch_text(plan, role) -> str:
    """The shared launch script, with the role's environment exported first.

    Crash cleanup of compiled caches is left out: the caches are private to the job and
    node, so a crashed run's artifacts are never reused.
    """
    storage = msgspec.structs.replace(role.storage, cleanup_on_crash=False)
    text = launch_script(plan, msgspec.structs.replace(role, storage=storage), SLURM)
    first, rest = text.split("\n", 1)
    return "\n".join([first, *_env_lines(plan, role), rest])


def task_text(plan, role, *, size: int, pod_uid: str | None) -> str:
    """The host-side prelude each task runs; ``$1`` is the launch script.

    ``pod_uid`` is a shell expression (routed: per replica), or None when the batch script
    already exported MANIFESTO_POD_UID (direct serving: one replica per job).
    """
    runtime = plan.slurm.runtime
    label = role.name
    lines = [
        "set -euo pipefail",
        "# Where this node sits among the role's hosts (one task per node).",
        'IFS=, read -r -a hosts <<< "$MANIFESTO_HOSTS"',
        "node=-1",
        'for i in "${!hosts[@]}"; do',
        '  if [ "${hosts[i]}" = "$SLURMD_NODENAME" ]; then node=$i; fi',
        "done",
        'if [ "$node" -lt 0 ]; then',
        '  echo "manifesto: $SLURMD_NODENAME is not one of the role hosts $MANIFESTO_HOSTS" >&2',
        "  exit 1",
        "fi",
        'export HOSTNAME="$SLURMD_NODENAME"',
        f"export LWS_WORKER_INDEX=$((node % {size}))",
        'export LWS_LEADER_ADDRESS="${hosts[node - LWS_WORKER_INDEX]}"',
    ]
    if pod_uid is not None:
        lines.append(f"export MANIFESTO_POD_UID={pod_uid}")
    if needs_node_ip(role):
        lines += ['IFS=, read -r -a ips <<< "$MANIFESTO_IPS"', 'export MANIFESTO_NODE_IP="${ips[node]}"']
    lines.append(f'echo "manifesto: {label} node $LWS_WORKER_INDEX of $MANIFESTO_POD_UID on $HOSTNAME '
                 '(leader $LWS_LEADER_ADDRESS, GPUs ${CUDA_VISIBLE_DEVICES:-none})"')
    prefix = rt.env_prefix(runtime)
    if prefix:
        names = " ".join(forwarded_names(role))
        lines += [
            f"# {runtime} gives the container these host values, ahead of any the image defines.",
            f"for name in {names}; do",
            f'  if [ -n "${{!name+x}}" ]; then export "{prefix}${{name}}=${{!name}}"; fi',
            "done",
        ]
        words = rt.exec_prefix(plan, role.image, gpu=True, binds=rt.binds_of(plan))
        lines.append("exec " + " ".join(words) + ' bash -c "$1"')
    else:
        lines.append('exec bash -c "$1"')
    return "\n".join(lines) + "\n"
