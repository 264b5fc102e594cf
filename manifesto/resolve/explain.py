"""Human-readable explanation of a Plan: what was decided, and from which layer."""

from __future__ import annotations

from manifesto.resolve.features import REGISTRY

__all__ = ["explain_text"]


def _env_value(var) -> str:
    if var.secret:
        return f"<secret {var.secret[0]}/{var.secret[1]}>"
    if var.field_ref:
        return f"<field {var.field_ref}>"
    return var.value or ""


def _layout_lines(lay) -> list[str]:
    lines = [
        f"parallelism     tp={lay.tp} pp={lay.pp} dp={lay.dp} ep={'on' if lay.ep else 'off'}",
        f"GPUs            {lay.gpus_per_pod} per pod (of {lay.gpus_per_node} per node), {lay.nodes} pod(s) per replica, "
        f"{lay.replicas} replica(s): {lay.total_gpus} in total",
    ]
    if lay.rank_groups > 1:
        lines.append(f"DP ranks        each rank spans {lay.nodes_per_rank} nodes ({lay.rank_gpus} GPUs) as its own "
                     f"pod group; {lay.rank_groups} consecutive groups form one DP world")
    elif lay.nodes_per_rank > 1:
        lines.append(f"DP ranks        each rank spans {lay.nodes_per_rank} nodes ({lay.rank_gpus} GPUs)")
    else:
        lines.append(f"DP ranks        {lay.ranks_per_node} per pod, {lay.rank_gpus} GPU(s) each")
    lines.append(f"DP balancing    {lay.dp_mode} (launch: {lay.launch})")
    lines.append(f"HTTP endpoints  node(s) {', '.join(map(str, lay.serving_nodes))} on port(s) "
                 f"{', '.join(map(str, lay.public_ports))}"
                 + (f" (vLLM behind proxy on {', '.join(map(str, lay.backend_ports))})" if lay.public_ports != lay.backend_ports else ""))
    return lines


def _gib2(n: int) -> str:
    return f"{n / 1024**3:.2f} GiB"


def _fit_lines(fit) -> list[str]:
    """The memory-fit arithmetic of one role (resolve/fit.py), one step per line."""
    from manifesto.resolve.fit import gib

    if fit is None:
        return []
    if fit.status == "unknown" and not fit.weights:
        return [f"memory fit      not checked: {fit.note}"]
    usable = int(fit.gpu_memory * fit.utilization)
    lines = [
        f"memory fit      per GPU ({fit.layout}), facts from {fit.source}",
        f"  GPU memory      {gib(fit.gpu_memory)} x gpu_memory_utilization {fit.utilization:g} = {gib(usable)}",
    ]
    if fit.memory_source:
        lines.append(f"    from          {fit.memory_source}")
    lines += [
        f"  weights         {gib(fit.weights)} = " + " + ".join(f"{gib(b)} {name}" for name, b in fit.weight_parts),
        f"  kept back       {gib(fit.headroom)} besides weights and KV cache, as vLLM 0.33.0's profiler counts it "
        "(v1/worker/gpu_worker.py: determine_available_memory)",
    ]
    for name, size, kind, source in fit.overhead_parts:
        lines.append(f"    {name + ':':<18}{_gib2(size)} ({kind}): {source}")
    fixed = fit.kv_budget != max(usable - fit.weights - fit.headroom, 0)
    lines.append(f"  KV cache        {gib(fit.kv_budget)} set by --kv-cache-memory-bytes (vLLM skips its profiling)"
                 if fixed else
                 f"  KV cache        {gib(usable)} - {gib(fit.weights)} - {gib(fit.headroom)} = {gib(fit.kv_budget)}")
    if fit.kv_per_token:
        if fit.kv_per_sequence:
            size = (gib(fit.kv_per_sequence) if fit.kv_per_sequence >= 1024**3
                    else f"{fit.kv_per_sequence / 1024**2:.1f} MiB")
            lines.append(f"  per sequence    {size} ({fit.kv_per_sequence} bytes) whatever its length, taken from the "
                         "KV cache once for the max_model_len sequence")
        lines.append(f"  KV per token    {fit.kv_per_token} bytes (kv_cache_dtype {fit.kv_dtype}) -> {fit.kv_tokens} tokens, "
                     f"{fit.kv_tokens / fit.max_model_len:.1f}x max_model_len {fit.max_model_len}"
                     if fit.max_model_len else f"  KV per token    {fit.kv_per_token} bytes -> {fit.kv_tokens} tokens")
        lines += [f"    assumes       {note}" for note in fit.kv_notes]
    else:
        lines.append(f"  KV per token    not estimated: {fit.note}")
    if fit.status == "kv-short":
        lines.append(f"  warning         the KV cache holds {fit.kv_tokens} tokens, fewer than max_model_len "
                     f"{fit.max_model_len}: vLLM will refuse to start. Lower max_model_len, raise "
                     "gpu_memory_utilization, use kv_cache_dtype fp8 or spread the model over more GPUs")
    return lines


def _budget_lines(plan) -> list[str]:
    b = plan.budget
    if b is None:
        return []
    price = "" if b.hourly_cost is None else f", {b.hourly_cost:g} per hour at {b.hourly_price:g} per GPU-hour"
    return [f"GPU budget      {b.gpus} {b.accelerator} GPU(s) on {b.nodes} node(s) in {b.pods} pod(s){price}"]


def explain_text(plan) -> str:
    out = [
        f"instance        {plan.instance} (release {plan.release}, user {plan.user}, namespace {plan.namespace})",
        f"cluster         {plan.cluster} ({plan.platform}), accelerator {plan.accelerator.name} "
        f"via {plan.accelerator.backend}",
        f"model           {plan.model_id}" + (f" @ {plan.revision}" if plan.revision else ""),
        f"topology        {plan.topology}" + (f" as one DisaggregatedSet {plan.pd_set} (both roles roll out together)"
                                                  if plan.pd_set is not None else ""),
    ]
    if plan.routing:
        r = plan.routing
        out.append(f"routing         {r.kind} -> {r.target_role}, frontend {r.frontend}, EPP config from {r.profile_source}")
    else:
        out.append("routing         disabled (direct vLLM)")
    slurm = plan.platform == "slurm"
    if slurm:
        out.append("idle shutdown   none on Slurm: a job ends at slurm.time or with `manifesto slurm stop`")
    else:
        out.append("idle shutdown   " + (f"after {plan.idle.timeout_minutes} min" if plan.idle.enabled else "off"))
    out.append("sidecars        " + (", ".join(plan.sidecars) or "(none)"))
    out += _budget_lines(plan)
    for role in plan.roles:
        kind = (f"srun step(s) manifesto-{role.name} of the batch job manifesto-{plan.instance}" if slurm
                else f"a LeaderWorkerSet of DisaggregatedSet {plan.pd_set} (its controller names it)"
                if plan.pd_set is not None else f"{role.workload_kind} {role.workload_name}")
        out += ["", f"role {role.name}: {kind}"]
        body = _layout_lines(role.layout)
        body.append("features        " + ", ".join(role.features) if role.features else "features        (none)")
        for name in role.features:
            body.append(f"  - {name}: {REGISTRY[name].summary}")
        body.append("backends        " + (", ".join(f"{k}={v}" for k, v in role.backends) or "(none)"))
        body.append(f"fabric profile  {role.fabric_profile or '(none)'}")
        body.append(f"resources       cpu {role.resources.cpu}, memory {role.resources.memory}, "
                    f"gpu {role.resources.gpus}" + "".join(f", {k} {v}" for k, v in role.resources.extra))
        claims = [f"{c.name} -> {c.template}" for c in role.claims]
        if plan.accelerator.backend == "dra":
            claims.insert(0, f"accelerator -> DeviceClass {plan.accelerator.device_class_name} x {role.resources.gpus}")
        body.append("claims          " + (", ".join(claims) or "(none)"))
        body += _fit_lines(role.fit)
        rb = next((x for x in plan.budget.roles if x.role == role.name), None) if plan.budget else None
        if rb is not None:
            body.append(f"GPU budget      {rb.gpus} GPU(s) on {rb.nodes} node(s) in {rb.pods} pod(s)"
                        + ("" if rb.hourly_cost is None else f", {rb.hourly_cost:g} per hour"))
        body.append("image           " + role.image)
        body.append("vllm args")
        body += [f"  {a.flag}{'' if a.value is None else ' ' + a.value}    [{a.source}]" for a in role.args]
        body.append("env")
        width = max((len(v.name) for v in role.env), default=0)
        body += [f"  {v.name.ljust(width)} = {_env_value(v)}    [{v.source}]" for v in role.env]
        out += ["  " + line for line in body]
    return "\n".join(out) + "\n"
