"""The model-server launch script, shared by the Kubernetes and Slurm renderers.

The script is plain bash (``set -euo pipefail``). A platform supplies three shell
expressions: this node's index within the replica, the replica leader's address, and a
function body that prints the address of node N. Everything else (log tee, crash
cleanup of compiled caches, vllm-envs activation, pre-launch hooks, the ``vllm serve``
command line with its DP/TP/PP flags) is decided here, once, from the Plan.
"""

from __future__ import annotations

import re
import shlex

import msgspec

from manifesto.resolve.plan import Plan, RolePlan

__all__ = ["Platform", "K8S", "launch_script", "serve_args", "literal_note"]


class Platform(msgspec.Struct, frozen=True, kw_only=True):
    """What a launch script needs to know of where it runs (a Struct: a dataclass costs a cold
    render 1 ms to build)."""

    node_index: str  # shell expression
    leader: str  # shell expression
    node_address_body: str  # body of node_address() { ... } printing the address of node $1
    log_name: str  # shell expression naming this node's log file
    # body of group_leader() { ... } printing the leader address of pod group $1; only
    # platforms that give each DP rank its own group (Layout.rank_groups > 1) need it.
    group_leader_body: str | None = None


K8S = Platform(
    node_index='"${LWS_WORKER_INDEX:-0}"',
    leader='"${LWS_LEADER_ADDRESS:-127.0.0.1}"',
    node_address_body=(
        '  # LWS pods are <lws>-<group>-<index>.<lws>.<namespace>; the leader drops "-0".\n'
        '  if [ "$1" -eq 0 ]; then echo "$LEADER"; else echo "${LEADER%%.*}-$1.${LEADER#*.}"; fi'
    ),
    log_name='"${HOSTNAME:-pod}.log"',
    group_leader_body=(
        '  # Group G\'s leader is <lws>-<G>.<lws>.<namespace>.\n'
        '  local group="${LEADER%%.*}"\n'
        '  echo "${group%-*}-$1.${LEADER#*.}"'
    ),
)


_QUOTED_EXPANSION = re.compile(r"'[^']*[$`][^']*'")


def literal_note(text: str) -> list[str]:
    """A shellcheck directive for a command whose single-quoted words hold ``$`` or a backtick on
    purpose: they are user values passed on literally, never expanded."""
    return ["# shellcheck disable=SC2016  # quoted values are literal text"] if _QUOTED_EXPANSION.search(text) else []


def _q(text: str) -> str:
    quoted = shlex.quote(text)
    # Commas are safe unquoted, but quoting them keeps readers (and shellcheck) from
    # mistaking a list value for several array elements.
    return f"'{text}'" if quoted == text and "," in text else quoted


def serve_args(plan: Plan, role: RolePlan) -> list[str]:
    """The fixed part of ``vllm serve``, one flag (and its value) per item."""
    lay = role.layout
    out = [f"serve {_q(plan.model_id)}", f"--tensor-parallel-size {lay.tp}"]
    if lay.pp > 1:
        out.append(f"--pipeline-parallel-size {lay.pp}")
    if lay.ep:
        out.append("--enable-expert-parallel")
    for arg in role.args:
        if arg.raw:
            out.append(arg.flag)  # trusted shell syntax, emitted verbatim
        elif arg.value is None:
            out.append(_q(arg.flag))
        else:
            out.append(f"{_q(arg.flag)} {_q(arg.value)}")
    return out


def _independent_block(role: RolePlan) -> list[str]:
    """Data-parallel ranks of a dense model: vLLM 0.33.0 refuses external DP for non-MoE models,
    so each rank is its own server with no DP flags. A rank wider than a pod spans its pods
    with --nnodes/--node-rank of that rank alone; several ranks in a pod are started by
    ``_independent_run`` on their own GPUs and ports."""
    lay = role.layout
    port = lay.backend_ports[0]
    npr = lay.nodes_per_rank
    if npr == 1:
        return [] if lay.ranks_per_node > 1 else [f"args+=(--port {port})"]
    if lay.rank_groups > 1:  # one pod group per rank: the group leader is the rank's head
        lines = [f"RANK_NODES={npr}", 'RANK_NODE="$NODE_INDEX"', 'RANK_HEAD="$LEADER"']
    else:
        lines = [f"RANK_NODES={npr}", "RANK=$((NODE_INDEX / RANK_NODES))", "RANK_NODE=$((NODE_INDEX % RANK_NODES))",
                 "RANK_HEAD=$(node_address $((RANK * RANK_NODES)))"]
    return lines + [
        "# Each DP rank is an independent server (a dense model takes no DP flags); these count its nodes only.",
        'args+=(--nnodes "$RANK_NODES" --node-rank "$RANK_NODE" --master-addr "$RANK_HEAD")',
        'if [ "$RANK_NODE" -eq 0 ]; then', f"  args+=(--port {port})", "else", "  args+=(--headless)", "fi",
    ]


def _independent_run(role: RolePlan, cleanup: bool) -> list[str]:
    """Start one server per local DP rank, each on its own GPUs and port; when one exits, stop
    the others and exit with its status so the pod (or job step) fails as a whole."""
    lay = role.layout
    local, gpus = lay.ranks_per_node, lay.rank_gpus
    lines = [
        "# Independent servers, one per DP rank (a dense model takes no DP flags): each gets",
        "# its slice of this pod's GPUs and its own port.",
        f'IFS=, read -r -a gpus <<< "${{CUDA_VISIBLE_DEVICES:-{",".join(map(str, range(local * gpus)))}}}"',
        "pids=()",
        f"for rank in $(seq 0 {local - 1}); do",
        f'  devices=$(IFS=,; echo "${{gpus[*]:$((rank * {gpus})):{gpus}}}")',
        f'  CUDA_VISIBLE_DEVICES="$devices" vllm "${{args[@]}}" --port $(({lay.backend_ports[0]} + rank)) &',
        '  pids+=("$!")',
        "done",
        "trap 'kill -TERM \"${pids[@]}\" 2>/dev/null' TERM INT",
        "status=0",
        'wait -n "${pids[@]}" || status=$?',
        'kill -TERM "${pids[@]}" 2>/dev/null || true',
        'wait "${pids[@]}" || true',
    ]
    if cleanup:
        lines += ['if [ "$status" -ne 0 ] && [ "$status" -ne 143 ]; then clear_compiled_caches; fi', 'rm -f "$MARKER"']
    return lines + ['exit "$status"']


def _topology_block(role: RolePlan) -> list[str]:
    """Shell lines appending the per-node DP/TP/PP flags to the ``args`` array."""
    lay = role.layout
    if lay.launch == "independent":
        return _independent_block(role)
    port = lay.backend_ports[0]
    lines: list[str] = []
    npr = lay.nodes_per_rank
    groups = lay.rank_groups > 1
    if groups:
        lines += [
            f"RANK_NODES={npr}",
            "# Each DP rank is its own pod group; consecutive groups form one DP world.",
            f'RANK=$((LWS_GROUP_INDEX % {lay.rank_groups}))',
            'RANK_NODE="$NODE_INDEX"',
            'RANK_HEAD="$LEADER"',
            # vLLM counts --nnodes/--node-rank across every DP rank, not within one.
            f'args+=(--nnodes {lay.dp * npr} --node-rank "$((RANK * RANK_NODES + RANK_NODE))" '
            '--master-addr "$RANK_HEAD")',
        ]
    elif npr > 1:
        lines += [
            f"RANK_NODES={npr}",
            'RANK=$((NODE_INDEX / RANK_NODES))',
            'RANK_NODE=$((NODE_INDEX % RANK_NODES))',
            'RANK_HEAD=$(node_address $((RANK * RANK_NODES)))',
            # vLLM counts --nnodes/--node-rank across every DP rank (one rank: the same thing).
            'args+=(--nnodes "$RANK_NODES" --node-rank "$RANK_NODE" --master-addr "$RANK_HEAD")'
            if lay.dp == 1 else
            f'args+=(--nnodes {lay.dp * npr} --node-rank "$NODE_INDEX" --master-addr "$RANK_HEAD")',
        ]
    if lay.launch == "single":
        if lay.nodes > 1:
            lines += ['if [ "$NODE_INDEX" -eq 0 ]; then', f"  args+=(--port {port})", "else", "  args+=(--headless)", "fi"]
        else:
            lines.append(f"args+=(--port {port})")
        return lines
    dp_common = f'args+=(--data-parallel-size {lay.dp} --data-parallel-address "$DP_HEAD" --data-parallel-rpc-port {lay.rpc_port})'
    if groups:
        lines.append('DP_HEAD=$(group_leader $((LWS_GROUP_INDEX - RANK)))')
    else:
        head = '"$LEADER"' if lay.nodes > 1 else "127.0.0.1"
        lines.insert(0, f"DP_HEAD={head}")
    lines.append(dp_common)
    if lay.launch == "internal":
        local = lay.ranks_per_node
        start = "RANK" if npr > 1 else f"$((NODE_INDEX * {local}))"
        first = '[ "$NODE_INDEX" -eq 0 ]'
        lines += [
            f"args+=(--data-parallel-size-local {local})",
            f"if {first}; then",
            f"  args+=(--port {port})",
            "else",
            "  # vLLM's internal load balancer: only node 0 serves HTTP; the rest run engines.",
            f'  args+=(--headless --data-parallel-start-rank "{"$RANK" if npr > 1 else start}")',
            "fi",
        ]
        return lines
    if lay.launch == "external-rank":
        rank = '"$RANK"' if npr > 1 else '"$NODE_INDEX"'
        lines.append(f"args+=(--data-parallel-size-local 1 --data-parallel-rank {rank} --data-parallel-external-lb)")
        if npr > 1:  # a rank wider than a pod: its first pod serves HTTP, the others run its workers
            lines += ['if [ "$RANK_NODE" -eq 0 ]; then', f"  args+=(--port {port})", "else",
                      "  args+=(--headless)", "fi"]
        else:
            lines.append(f"args+=(--port {port})")
        return lines
    local = lay.ranks_per_node
    lines += [
        "# One API server per local DP rank on consecutive ports, under vLLM's DP supervisor.",
        f"args+=(--port {port} --data-parallel-size-local {local} "
        f'--data-parallel-start-rank "$((NODE_INDEX * {local}))" '
        f"--data-parallel-multi-port-external-lb --data-parallel-supervisor-port {lay.supervisor_port})",
    ]
    return lines


def _cleanup_block(role: RolePlan) -> list[str]:
    st = role.storage
    if not st.cleanup_on_crash:
        return []
    dirs = " ".join(_q(d) for d in st.cache_dirs)
    marker = f'{_q(st.marker_dir)}/".manifesto-running-${{HOSTNAME:-pod}}"'
    return [
        "# Compiled caches from a crashed run can be corrupt: clear them after a failed exit, or",
        "# when this container restarts and finds the marker its previous run never removed.",
        "# FlashInfer autotuning results are kept.",
        "clear_compiled_caches() {",
        '  echo "manifesto: clearing compiled caches after an unclean exit" >&2',
        f"  for dir in {dirs}; do",
        '    [ -d "$dir" ] || continue',
        '    find "$dir" -mindepth 1 -maxdepth 1 ! -name flashinfer_autotune_cache -exec rm -rf {} +',
        "  done",
        "}",
        f"MARKER={marker}",
        f"mkdir -p {_q(st.marker_dir)}",
        'if [ -e "$MARKER" ]; then clear_compiled_caches; fi',
        'touch "$MARKER"',
    ]


def launch_script(plan: Plan, role: RolePlan, platform: Platform = K8S) -> str:
    lay = role.layout
    lines = ["set -euo pipefail"]
    topology = _topology_block(role)
    used = "\n".join(topology)
    if "NODE_INDEX" in used:
        lines.append(f"NODE_INDEX={platform.node_index}")
    if "LEADER" in used or lay.nodes_per_rank > 1:
        lines.append(f"LEADER={platform.leader}")
    if "node_address" in used:
        lines += ["node_address() {", platform.node_address_body, "}"]
    if "group_leader" in used:
        if platform.group_leader_body is None:
            raise ValueError("this platform has no pod groups per DP rank")  # resolve never plans them here
        lines += ["group_leader() {", platform.group_leader_body, "}"]
    if role.storage.log_dir:
        lines += [
            f"LOG_DIR={_q(role.storage.log_dir)}",
            'mkdir -p "$LOG_DIR"',
            f'exec > >(tee -a "$LOG_DIR"/{platform.log_name}) 2>&1',
        ]
    lines += _cleanup_block(role)
    if role.vllm_env:
        env = _q(role.vllm_env)
        lines += [
            f"VLLM_ENV={env}",
            'if [ ! -f "$VLLM_ENV/.venv/bin/activate" ]; then',
            '  echo "manifesto: vllm-envs worktree $VLLM_ENV or its .venv/bin/activate is missing" >&2',
            "  exit 1",
            "fi",
            "# shellcheck disable=SC1091",
            'source "$VLLM_ENV/.venv/bin/activate"',
        ]
    for hook in role.pre_launch:
        lines.append(hook)
    items = serve_args(plan, role)
    lines += [*literal_note("\n".join(items)), "args=(", *("  " + item for item in items), ")"]
    lines += topology
    if lay.launch == "independent" and lay.ranks_per_node > 1:
        lines += _independent_run(role, role.storage.cleanup_on_crash)
    elif role.storage.cleanup_on_crash:
        lines += [
            'vllm "${args[@]}" &',
            "child=$!",
            "trap 'kill -TERM \"$child\" 2>/dev/null' TERM INT",
            "status=0",
            'wait "$child" || status=$?',
            '# A signal interrupts the first wait; wait again for the real exit status.',
            'if kill -0 "$child" 2>/dev/null; then wait "$child" || status=$?; fi',
            'if [ "$status" -ne 0 ] && [ "$status" -ne 143 ]; then clear_compiled_caches; fi',
            'rm -f "$MARKER"',
            'exit "$status"',
        ]
    else:
        lines.append('exec vllm "${args[@]}"')
    return "\n".join(lines) + "\n"
