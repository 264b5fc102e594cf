"""``manifesto plan MODEL``: every layout that fits, on every cluster target (``manifesto.capacity``)."""

from __future__ import annotations

import sys
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]

_KV_DTYPES = ("auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2")
_SHOWN = 15  # text and markdown rows; -o json lists every layout
_MAX_TOKENS = 1 << 24  # --isl, --osl: past any context length a model publishes
_MAX_MS = 3_600_000  # --ttft, --itl: an hour


def register(sub, add) -> None:
    from manifesto.cli.hints import ADDRESSES, CATALOG, FILES
    from manifesto.cli.flags import add_output, file_arg

    p = add(sub, "plan", help=SUMMARIES["plan"])
    p.add_argument("model", metavar="MODEL", help="a catalog model id with an architecture record "
                   "(Qwen/Qwen3-32B), or a spec: a path, catalog name or build address").complete = CATALOG["models"]
    p.add_argument("targets", metavar="ADDR", nargs="*", help="cluster targets to plan for, e.g. //clusters:: "
                   "(default: every cluster target of the workspace)").complete = ADDRESSES
    p.add_argument("--cluster", "-c", action="append", metavar="CLUSTER", help="a cluster profile to plan for: a "
                   "path or catalog name (repeatable)").complete = CATALOG["clusters"]
    p.add_argument("--max-model-len", type=_positive("--max-model-len"), metavar="TOKENS",
                   help="context length every sequence may reach (default: the starting point's max_model_len, else "
                   "the model's)")
    p.add_argument("--concurrency", type=_positive("--concurrency", 1 << 24), default=1, metavar="N",
                   help="sequences of max_model_len the KV cache must hold at once (default: 1, what vLLM needs "
                   "to start)")
    p.add_argument("--kv-cache-dtype", choices=_KV_DTYPES, help="KV cache dtype (default: the spec's, else auto)")
    p.add_argument("--topology", choices=("aggregated", "pd"), help="aggregated, or pd: one prefill and one "
                   "decode role of the same layout (default: the spec's, else aggregated)")
    g = p.add_argument_group("performance (needs the perf extra: pip install 'llm-manifesto[perf]')",
                             "estimate every layout with NVIDIA AIConfigurator's measured vLLM kernel tables (a "
                             "documented roofline where they lack the GPU, model or layout) and rank by cost per "
                             "output token at the targets; --concurrency is then the requests in flight")
    g.add_argument("--isl", type=_positive("--isl", _MAX_TOKENS), metavar="TOKENS",
                   help="input tokens per request (with --osl: max_model_len defaults to isl + osl)")
    g.add_argument("--osl", type=_positive("--osl", _MAX_TOKENS), metavar="TOKENS", help="output tokens per request")
    g.add_argument("--ttft", type=_positive("--ttft", _MAX_MS), metavar="MS",
                   help="target time to first token in milliseconds (the estimator's mean)")
    g.add_argument("--itl", type=_positive("--itl", _MAX_MS), metavar="MS",
                   help="target inter-token latency in milliseconds (the estimator's mean time per output token)")
    g.add_argument("--plot", metavar="PATH", help="write the Pareto frontier (output tokens/s per GPU against "
                   "tokens/s per user) as an SVG file").complete = FILES
    p.add_argument("--pick", type=_positive("--pick", 1 << 20), default=1, metavar="N",
                   help="the ranked layout --write and --explain use (default: 1)")
    p.add_argument("--pick-pd", type=_positive("--pick-pd", 1 << 20), metavar="N",
                   help="with performance: the ranked prefill/decode (xPyD) set --write and --explain use instead "
                   "(P1 is 1)")
    p.add_argument("--explain", action="store_true", help="print the picked layout's resolution and memory-fit "
                   "arithmetic, as `manifesto explain` prints it")
    p.add_argument("--write", metavar="PATH", type=file_arg, help="write the picked layout as a commented spec inside the "
                   "workspace (under models/, `manifesto build` renders it)").complete = FILES
    p.add_argument("--force", action="store_true", help="with --write: replace an existing file")
    add_output(p, formats=("text", "json", "markdown"))
    p.set_defaults(func=_plan)


def _positive(flag: str, high: int | None = None):
    """A flag's positive count in ASCII digits, at most ``high`` (default: a 32-bit count)."""
    from manifesto.util.numbers import MAX_COUNT

    high = MAX_COUNT if high is None else high

    def parse(text: str) -> int:
        import argparse

        from manifesto.errors import printable
        from manifesto.util.numbers import whole

        value = whole(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"'{printable(text)[:40]}' is not a whole number (ASCII digits)")
        if value < 1:
            raise argparse.ArgumentTypeError(f"{value} is not a positive number")
        if value > high:
            raise argparse.ArgumentTypeError(f"{value} is over {high}, the most it can be")
        return value

    parse.__name__ = flag
    return parse


def _clusters(args) -> list:
    """The clusters to plan for: --cluster, the cluster targets ADDR names, else every cluster
    target of the workspace."""
    import os

    from manifesto.cluster import load_cluster
    from manifesto.errors import InputError

    found: dict[str, object] = {}
    for ref in args.cluster or ():
        c = load_cluster(ref, search=args.search)
        found.setdefault(c.name, c)
    if args.targets or not args.cluster:
        from manifesto.build_graph import api
        from manifesto.build_graph.workspace import find_workspace
        from manifesto.errors import BuildError

        try:
            root = find_workspace().root
        except BuildError:
            raise InputError("no workspace (BUILD.yaml) here or above to take cluster targets from; name the "
                             "clusters with --cluster") from None
        for address in args.targets or ["//::"]:
            targets = [t for t in api.list_targets([address], root=root) if t.kind == "cluster"]
            if not targets and args.targets:
                raise InputError(f"{address} names no cluster target; plan takes cluster targets such as "
                                 "//clusters::")
            for t in targets:  # a target's path is relative to the root: no second graph to find it
                c = load_cluster(os.path.join(root, t.path), search=args.search)
                found.setdefault(c.name, c)
    if not found:
        raise InputError("the workspace has no cluster target; name the clusters with --cluster")
    return list(found.values())


def _command(args) -> str:
    import shlex

    words = ["manifesto", "plan", args.model, *args.targets]
    for c in args.cluster or ():
        words += ["--cluster", c]
    for flag, value in (("--max-model-len", args.max_model_len), ("--kv-cache-dtype", args.kv_cache_dtype),
                        ("--topology", args.topology)):
        if value is not None:
            words += [flag, str(value)]
    if args.concurrency != 1:
        words += ["--concurrency", str(args.concurrency)]
    for flag, value in (("--isl", args.isl), ("--osl", args.osl), ("--ttft", args.ttft), ("--itl", args.itl)):
        if value is not None:
            words += [flag, str(value)]
    if args.pick != 1:
        words += ["--pick", str(args.pick)]
    if args.pick_pd is not None:
        words += ["--pick-pd", str(args.pick_pd)]
    return shlex.join(words)


def _plan(args) -> int:
    from manifesto import capacity
    from manifesto.errors import InputError
    from manifesto.resolve.options import Options

    if args.force and not args.write:
        raise InputError("--force replaces the file --write names; give --write PATH")
    if args.explain and args.output != "text":
        raise InputError(f"--explain prints text, as `manifesto explain` does; drop -o {args.output}")
    planner_work = _perf_workload(args)
    max_len = args.max_model_len
    if planner_work is not None and max_len is None:
        max_len = planner_work.isl + planner_work.osl
    work = capacity.Demand(max_len, args.concurrency, args.kv_cache_dtype, args.topology)
    start = capacity.start_from(args.model, search=args.search)
    clusters = _clusters(args)
    options = Options(user="plan")
    if args.pick_pd is not None and planner_work is None:
        raise InputError("--pick-pd picks a prefill/decode set, which plan proposes with performance: give --isl and "
                         "--osl")
    perf = _planner(args, planner_work, start.model_id) if planner_work is not None else None
    report = capacity.plan_model(start, clusters, work, options, search=args.search, performance=perf)
    pd = None
    if perf is not None:
        from manifesto.perf import disagg

        pd = disagg.search(perf, report, start, clusters,
                           lambda data, cluster: capacity.resolve_layout(data, start.path, cluster, options))
        _progress_done(args)
    picked = None
    if args.pick_pd is not None and (args.write or args.explain):
        if args.pick_pd > len(pd.proposed):
            raise InputError(f"--pick-pd {args.pick_pd}: the plan proposes {len(pd.proposed)} prefill/decode set(s) "
                             "that beat the aggregated layouts" + ("" if pd.proposed else
                                                                    " (the text output says why none)"))
        picked = pd.proposed[args.pick_pd - 1]
    elif args.write or args.explain:
        if not report.proposed:
            raise InputError(f"no layout of {report.model} fits on {', '.join(report.clusters)}, so there is none "
                             "to " + ("write" if args.write else "explain"))
        if args.pick > len(report.proposed):
            raise InputError(f"--pick {args.pick}: the plan proposes {len(report.proposed)} layout(s)")
        picked = report.proposed[args.pick - 1]
    if args.write:  # before any output: a refused write leaves nothing half-done behind
        _write(args, report, picked, options, perf)
    if args.plot:
        _plot(args, report, pd)
    from manifesto.util.outputs import emit

    if args.explain:
        emit("text", None, text=lambda: sys.stdout.write(_explain(picked, perf)))
    elif args.output == "json":
        emit("json", _json(report, perf, pd))
    elif args.output == "markdown":
        sys.stdout.write(_markdown(report, perf, pd))
    else:
        emit("text", None, text=lambda: sys.stdout.write(_text(report, perf, pd)))
    if not report.proposed:
        print(f"error: no layout of {report.model} fits on {', '.join(report.clusters)} (the nearest misses above "
              "say why)", file=sys.stderr)
        return 1
    return 0


def _perf_workload(args):
    """The performance workload the flags ask for (a ``manifesto.perf.engine.PerfWorkload``), or None."""
    from manifesto.errors import InputError

    asked = [f for f, v in (("--isl", args.isl), ("--osl", args.osl), ("--ttft", args.ttft), ("--itl", args.itl),
                            ("--plot", args.plot)) if v is not None]
    if not asked:
        return None
    if args.isl is None or args.osl is None:
        raise InputError(f"{asked[0]} asks plan for performance, which needs the requests' shape: give --isl and "
                         "--osl (input and output tokens per request)")
    if args.max_model_len is not None and args.max_model_len < args.isl + args.osl:
        raise InputError(f"--max-model-len {args.max_model_len} is shorter than --isl + --osl "
                         f"({args.isl + args.osl}): vLLM would cut every request short")
    from manifesto.perf.engine import PerfWorkload

    return PerfWorkload(args.isl, args.osl, args.concurrency, args.ttft, args.itl)


def _planner(args, work, model_id: str):
    from manifesto.errors import InputError
    from manifesto.perf.engine import Engine, NotInstalled, Planner

    try:
        engine = Engine(progress=lambda text: _progress(args, text))
    except NotInstalled:
        raise InputError("plan's performance figures (--isl, --osl, --ttft, --itl, --plot) need NVIDIA "
                         "AIConfigurator's tables: pip install 'llm-manifesto[perf]' (aiconfigurator-core "
                         "0.12.0)") from None
    return Planner(engine, work, model_id)


def _progress(args, text: str) -> None:
    """A progress line on a terminal (stderr), overwritten by the next; nothing when piped or -q."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return
    sys.stderr.write(f"\r\x1b[Kmanifesto: {text}...")
    sys.stderr.flush()


def _progress_done(args) -> None:
    if not getattr(args, "quiet", False) and sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def _explain(picked, perf) -> str:
    """``--explain``: the picked layout's resolution and memory fit, as ``manifesto explain``
    prints them, then (with performance) its estimate."""
    from manifesto.resolve.explain import explain_text

    text = explain_text(picked.plan)
    if perf is None:
        return text
    from manifesto.edge.escape import terminal
    from manifesto.perf import disagg

    lines = disagg.pd_lines(picked) if isinstance(picked, disagg.PDOutcome) else []
    lines += disagg.estimate_lines(picked.performance, perf.work)
    return text.rstrip("\n") + "\n\nperformance\n" + "\n".join("  " + terminal(line) for line in lines) + "\n"


def _plot(args, report, pd=None) -> None:
    """--plot PATH: the proposed layouts' Pareto frontier as an SVG file."""
    from manifesto.cli.common import info
    from manifesto.edge.escape import terminal
    from manifesto.errors import InputError
    from manifesto.perf.plot import pareto_svg
    from manifesto.edge.fs import target_problem, write_atomic

    shown = terminal(args.plot)
    problem = target_problem(args.plot)
    if problem:
        raise InputError(f"--plot {shown} {problem}")
    points = [(o.performance.user_tokens_s, o.performance.gpu_tokens_s,
               f"#{i} {o.cluster}/{o.accelerator} tp{o.candidate.tp} pp{o.candidate.pp} dp{o.candidate.dp}"
               + (" ep" if o.candidate.ep else "") + (f" dcp{o.candidate.dcp}" if o.candidate.dcp > 1 else ""))
              for i, o in enumerate(report.proposed, 1)]
    points += [(o.performance.user_tokens_s, o.performance.gpu_tokens_s, f"P{i} {o.cluster}/{o.accelerator} {o.ratio}")
               for i, o in enumerate(pd.proposed if pd is not None else (), 1)]
    w = report.workload
    title = f"{report.model}: {len(points)} layout(s), concurrency {w.concurrency}"
    try:
        write_atomic(args.plot, pareto_svg(points, title))
    except OSError as exc:
        raise InputError(f"--plot {shown}: cannot write it: {exc.strerror or exc}") from None
    info(args, f"manifesto: wrote {shown} (Pareto frontier of {len(points)} layout(s))")


def _json(report, perf=None, pd=None) -> dict:
    from manifesto.capacity import NO_PERFORMANCE

    w = report.workload
    return {
        "model": report.model, "start": report.start, "clusters": report.clusters,
        "workload": {"max_model_len": w.max_model_len, "concurrency": w.concurrency,
                     "kv_cache_dtype": w.kv_cache_dtype, "topology": w.topology},
        "proposed": [{"rank": i, **o.to_dict()} for i, o in enumerate(report.proposed, 1)],
        "nearest_misses": [o.to_dict() for o in report.nearest_misses()],
        "refused": [o.to_dict() for o in report.refused],
        "roles": {"names": report.roles, "replicated": report.serving, "note": report.roles_note()},
        "performance": perf.describe() if perf is not None else NO_PERFORMANCE,
        "disaggregated": pd.to_dict() if pd is not None else None,
    }


_COLUMNS = ("#", "cluster", "accelerator", "tp", "pp", "dp", "ep", "dcp", "GPUs", "nodes", "pods", "KV tokens/GPU",
            "KV tokens total", "max concurrency", "headroom", "cost/hour")


def _rows(report, perf=None) -> list[tuple]:
    rows = []
    for i, o in enumerate(report.proposed[:_SHOWN], 1):
        d, lay = o.to_dict(), o.candidate
        cost = "-" if d["hourly_cost"] is None else f"{d['hourly_cost']:g}"
        row = (str(i), o.cluster, o.accelerator, str(lay.tp), str(lay.pp), str(lay.dp),
               "on" if lay.ep else "off", str(lay.dcp) if lay.dcp > 1 else "-", str(d["gpus"]), str(d["nodes"]), str(d["pods"]),
               str(d["kv_tokens_per_gpu"]), str(d["kv_tokens_total"]), str(d["max_concurrency"]),
               f"{o.headroom:.1f}x", cost)
        if perf is not None:
            row += _perf_cells(o.performance)
        rows.append(row)
    return rows


_PERF_COLUMNS = ("TTFT ms", "ITL ms", "tok/s/GPU", "tok/s/replica", "req/s", "cost/Mtok", "targets", "source")


def _perf_cells(p) -> tuple:
    cost = "-" if p.cost_per_mtok is None else f"{p.cost_per_mtok:.3g}"
    if not p.margin:
        verdict = "-"
    elif p.meets:
        verdict = "meets"
    else:
        verdict = "miss " + ", ".join(f"{k.upper()} +{v * 100:.0f}%" for k, v in p.margin.items() if v > 0)
    return (f"{p.ttft_ms:.0f}", f"{p.itl_ms:.1f}", f"{p.gpu_tokens_s:.0f}", f"{p.replica_tokens_s:.0f}",
            f"{p.requests_s:.2f}", cost, verdict, p.kind)


def _perf_lines(report, perf) -> list[str]:
    """What the performance columns are, and each fallback to the roofline with its reason."""
    w = perf.work
    targets = ", ".join(f"{n} {v:g} ms" for n, v in (("TTFT", w.ttft), ("ITL", w.itl)) if v is not None)
    lines = [f"performance: {w.isl} input and {w.osl} output tokens per request, {w.concurrency} in flight over "
             f"every replica; targets: {targets or 'none'}.",
             f"source aiconfigurator: NVIDIA AIConfigurator ({perf.engine.version}) measured {_backend()} kernel "
             "tables, aggregated estimate; roofline: manifesto.perf.engine's data-sheet model (README, \"Performance\").",
             "ranked: layouts meeting the targets by cost per million output tokens (GPUs per output token/s "
             "where unpriced), then misses by their margin; every layout fits in memory first."]
    if len(report.roles) > 1:
        lines.append(f"roles {', '.join(report.roles)}: the figures are aggregated serving of the layout (one layout "
                     "for every role); prefill/decode sets of their own layouts are proposed from a model id without "
                     "--topology pd.")
    grouped: dict[tuple[str, str], int] = {}
    for layout, why in perf.fallbacks.items():  # "cluster/accelerator tp=.. pp=..": why
        key = (layout.split(" ", 1)[0], why)
        grouped[key] = grouped.get(key, 0) + 1
    for (where, why), n in sorted(grouped.items())[:_SHOWN]:
        lines.append(f"  roofline for {n} layout(s) on {where}: {why}")
    if len(grouped) > _SHOWN:
        lines.append(f"  ({len(grouped) - _SHOWN} more: -o json lists every fallback)")
    return lines


_PD_COLUMNS = ("#", "cluster", "accelerator", "xPyD", "prefill", "decode", "GPUs", "nodes", "cost/hour")


def _pd_rows(pd) -> list[tuple]:
    rows = []
    for i, o in enumerate(pd.proposed[:_SHOWN], 1):
        b = o.budget
        rows.append((f"P{i}", o.cluster, o.accelerator, o.ratio, o.prefill.text(), o.decode.text(), str(b.gpus),
                     str(b.nodes), "-" if b.hourly_cost is None else f"{b.hourly_cost:g}")
                    + _perf_cells(o.performance))
    return rows


def _pd_lines(pd) -> list[str]:
    """Under the P/D table: what it is, and where no set was estimated or why one was refused."""
    lines = []
    if pd.proposed:
        lines.append("prefill/decode: each set is one replica of x prefill and y decode workers (tpN dpN ep, xN "
                     "workers), estimated by AIConfigurator's disaggregated model; shown where it beats the best "
                     "aggregated layout of its cluster and accelerator by the ranking above.")
    elif pd.estimated:
        lines.append(f"prefill/decode: no xPyD set beats the aggregated layouts at these targets "
                     f"({len(pd.estimated)} estimated; -o json lists them).")
    else:
        lines.append("prefill/decode: no xPyD set was estimated.")
    for where, why in sorted(pd.skipped.items())[:_SHOWN]:
        lines.append(f"  no prefill/decode estimate on {where}: {why}")
    if pd.refused:
        lines.append(f"  {len(pd.refused)} set(s) refused by the resolver or the memory fit (-o json says why)")
    return lines


def _backend() -> str:
    from manifesto.perf.engine import BACKEND

    return BACKEND


def _workload_line(report) -> str:
    w = report.workload
    first = report.proposed[0].fit if report.proposed else None
    max_len = w.max_model_len or (first.max_model_len if first else "the start's")
    dtype = w.kv_cache_dtype or (first.kv_dtype if first else "the start's")
    topology = w.topology or (report.proposed[0].plan.topology if report.proposed else "the start's")
    return f"max_model_len {max_len}, concurrency {w.concurrency}, kv_cache_dtype {dtype}, topology {topology}"


def _text(report, perf=None, pd=None) -> str:
    from manifesto.capacity import NO_PERFORMANCE

    out = [f"plan for {report.model} from {report.start}",
           f"workload: {_workload_line(report)}",
           f"clusters: {', '.join(report.clusters)}", ""]
    if report.roles_note():
        from manifesto.edge.escape import terminal

        out[-1:-1] = [report.roles_note(terminal)]
    rows = _rows(report, perf)
    columns = _COLUMNS + (_PERF_COLUMNS if perf is not None else ())
    if rows:
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
        out.append("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
        out += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        more = len(report.proposed) - len(rows)
        if more:
            out.append(f"({more} more layout(s) fit: -o json lists every one)")
        out.append("KV tokens/GPU: the tokens each engine's cache holds (every GPU of it keeps its share of each); "
                   "total: over every engine (dp x replicas).")
    else:
        out.append("no layout fits")
    misses = report.nearest_misses()
    if misses:
        out += ["", "nearest misses (why no smaller layout fits):"]
        for o in misses:
            out.append(f"  {o.cluster}/{o.accelerator} {o.candidate.text()} ({o.candidate.engine_gpus} GPU(s)): "
                       f"{o.error}")
    if perf is not None:
        from manifesto.edge.escape import terminal

        out += [""] + [terminal(line) for line in _perf_lines(report, perf)]
    else:
        out += ["", NO_PERFORMANCE]
    if pd is not None:
        from manifesto.edge.escape import terminal

        rows = _pd_rows(pd)
        out.append("")
        if rows:
            columns = _PD_COLUMNS + _PERF_COLUMNS
            widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
            out.append("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
            out += ["  ".join(terminal(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        out += [terminal(line) for line in _pd_lines(pd)]
    if report.proposed:
        out.append("next: --explain shows the arithmetic of a layout, --pick N --write models/NAME.yaml writes it"
                   + (" (--pick-pd N a prefill/decode set)" if pd is not None and pd.proposed else ""))
    return "\n".join(out) + "\n"


def _markdown(report, perf=None, pd=None) -> str:
    from manifesto.capacity import NO_PERFORMANCE
    from manifesto.edge.escape import md_code

    out = [f"### Plan for {md_code(report.model)}", "",
           f"Workload: {md_code(_workload_line(report))}; clusters: "
           + ", ".join(md_code(c) for c in report.clusters), ""]
    if report.roles_note():
        out += [report.roles_note(md_code), ""]
    rows = _rows(report, perf)
    columns = _COLUMNS + (_PERF_COLUMNS if perf is not None else ())
    if rows:
        out.append("| " + " | ".join(columns) + " |")
        out.append("|" + "|".join("---" for _ in columns) + "|")
        for r in rows:
            cells = [r[0], md_code(r[1]), md_code(r[2]), *r[3:]]
            out.append("| " + " | ".join(cells) + " |")
        more = len(report.proposed) - len(rows)
        if more:
            out += ["", f"{more} more layout(s) fit (`-o json` lists every one)."]
    else:
        out.append("No layout fits.")
    misses = report.nearest_misses()
    if misses:
        out += ["", "Nearest misses (why no smaller layout fits):", ""]
        out += [f"- {md_code(o.cluster + '/' + o.accelerator + ' ' + o.candidate.text())}: {md_code(o.error)}"
                for o in misses]
    if perf is not None:
        out += [""] + ["- " + md_code(line.strip()) if line.startswith("  ") else line + "  "
                       for line in _perf_lines(report, perf)]
    else:
        out += ["", NO_PERFORMANCE]
    if pd is not None:
        rows = _pd_rows(pd)
        out.append("")
        if rows:
            columns = _PD_COLUMNS + _PERF_COLUMNS
            out.append("| " + " | ".join(columns) + " |")
            out.append("|" + "|".join("---" for _ in columns) + "|")
            for r in rows:
                out.append("| " + " | ".join([r[0], md_code(r[1]), md_code(r[2]), *r[3:]]) + " |")
            out.append("")
        out += ["- " + md_code(line.strip()) if line.startswith("  ") else line + "  " for line in _pd_lines(pd)]
    return "\n".join(out) + "\n"


def _write(args, report, picked, options, perf=None) -> None:
    """The picked layout as a spec at --write, inside the workspace, through a confined write."""
    import os

    from manifesto import capacity
    from manifesto.build_graph.workspace import find_workspace
    from manifesto.edge.escape import terminal
    from manifesto.edge.files import confinement, outside_problem
    from manifesto.errors import BuildError, InputError
    from manifesto.edge.fs import UnsafePath, write_atomic

    try:
        root = find_workspace().root
    except BuildError:
        raise InputError("--write writes into a workspace (a folder with BUILD.yaml), and there is none here or "
                         "above") from None
    path = os.path.abspath(args.write)
    shown = terminal(args.write)
    problem = outside_problem(path, confinement([root]))
    if problem:
        raise InputError(f"--write {shown} {problem}")
    if os.path.lexists(path) and not args.force:
        raise InputError(f"--write {shown} exists; pass --force to replace it")
    notes = _neutral_roles(args, report, picked, root, options) if args.pick_pd is not None else []
    _check_other_clusters(args, report, picked, root, options)
    import shlex

    command = _command(args) + " --write " + shlex.quote(args.write)
    if args.pick_pd is not None:
        from manifesto.perf import disagg

        text = disagg.spec_text(report, picked, perf.work, command, notes)
        what = f"prefill/decode set {args.pick_pd}: {picked.cluster}/{picked.accelerator} {picked.text()}"
    else:
        text = capacity.spec_text(report, picked, command)
        what = f"layout {args.pick}: {picked.cluster}/{picked.accelerator} {picked.candidate.text()}"
    try:
        write_atomic(path, text, root=root)
    except UnsafePath as exc:
        raise InputError(f"--write {shown}: {terminal(exc.filename)} {exc.strerror}") from None
    except OSError as exc:
        raise InputError(f"--write {shown}: {exc.strerror or exc}") from None
    from manifesto.cli.common import info

    info(args, f"manifesto: wrote {shown} ({what})")
    _say_address(args, path, root, shown)


def _neutral_roles(args, report, picked, root: str, options) -> list[str]:
    """A prefill/decode set's roles are LeaderWorkerSets on Kubernetes (``workload:
    leaderworkerset``), which a Slurm cluster refuses. Where a Slurm cluster target of the
    workspace offers the set's accelerator (its build renders the spec there too), the roles name
    no workload instead; returns the comment lines that say so (none otherwise)."""
    import os

    from manifesto import capacity
    from manifesto.build_graph import api
    from manifesto.cluster import load_cluster

    slurm = []
    for target in api.list_targets(["//::"], root=root):
        if target.kind != "cluster":
            continue
        cluster = load_cluster(os.path.join(root, target.path), search=args.search)
        if cluster.platform == "slurm" and picked.accelerator in cluster.profile.accelerators.profiles:
            slurm.append(cluster.name)
    if not slurm or not any("workload" in r for r in picked.data["roles"]):
        return []
    for role in picked.data["roles"]:
        role.pop("workload", None)
    here = next(c for c in _clusters(args) if c.name == picked.cluster)
    picked.plan = capacity.resolve_layout(picked.data, report.path, here, options)
    return [f"The roles name no workload: Slurm cluster target {', '.join(sorted(slurm))} offers "
            f"{picked.accelerator} too, and Slurm has no LeaderWorkerSets.",
            "  On Kubernetes each role is then a Deployment or a LeaderWorkerSet by its node count (one",
            "  DisaggregatedSet on LeaderWorkerSet 0.10 only when both roles are LeaderWorkerSets)."]


def _check_other_clusters(args, report, picked, root: str, options) -> None:
    """A build renders the spec on every cluster target: each must render it, or skip it as an
    incompatible pair (another accelerator, too little memory). One that would fail the build
    (the same accelerator with fewer GPUs per node) is named before anything is written."""
    import os

    from manifesto import capacity
    from manifesto.build_graph import api
    from manifesto.cluster import load_cluster
    from manifesto.errors import IncompatiblePairError, InputError, ManifestoError

    names = []
    for target in api.list_targets(["//::"], root=root):
        if target.kind != "cluster":
            continue
        cluster = load_cluster(os.path.join(root, target.path), search=args.search)
        names.append(cluster.name)
        if cluster.name == picked.cluster:
            continue
        try:
            capacity.resolve_layout(picked.data, report.path, cluster, options)
        except IncompatiblePairError:
            continue
        except ManifestoError as exc:
            raise InputError(f"this layout renders on {picked.cluster} but a build would fail on cluster target "
                             f"{cluster.name} ({exc.message}); a build renders every spec on every cluster target "
                             "that offers its accelerator, so --pick a layout that renders on both") from None
    if picked.cluster not in names:
        from manifesto.cli.common import info

        info(args, f"manifesto: note: {picked.cluster} is not a cluster target of this workspace, so `manifesto build` "
             "renders the spec only on the targets that offer its accelerator")


def _say_address(args, path: str, root: str, shown: str) -> None:
    import os

    from manifesto.build_graph import api
    from manifesto.cli.common import info
    from manifesto.errors import ManifestoError

    rel = os.path.relpath(path, root)
    try:
        hits = [t for t in api.list_targets(["//::"], root=root) if t.kind == "model" and t.path == rel]
    except ManifestoError:
        hits = []
    if hits:
        info(args, f"next: manifesto build {hits[0].address} && manifesto diff --base HEAD")
    else:
        info(args, f"manifesto: note: {shown} is not a model target of BUILD.yaml, so `manifesto build` does not "
             "render it; write it where a model target's sources match (models/)")
