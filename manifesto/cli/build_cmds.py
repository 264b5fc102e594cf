"""The build commands: ``build``, ``list``, ``deps``, ``dependents``, ``matrix``, ``clean``.

``register(subparsers)`` only declares parsers (no imports, no I/O), so completion
and ``--help`` stay fast; each handler imports ``manifesto.build_graph.api`` and calls
one function. Handlers return the exit code and raise ``ManifestoError``s.
"""

from __future__ import annotations

import sys

from manifesto.cli.flags import add_output

__all__ = ["COMMANDS", "formatter", "main", "register"]

#: The commands ``register`` adds (a run of one of them needs no other command's module).
COMMANDS = ("build", "list", "deps", "dependents", "matrix", "clean")

_ADDR_HELP = ("target address: //DIR:NAME, //DIR: or //DIR:all (directory), //DIR:: or //DIR/... (recursive), "
             "the same without the leading //, or a file path")


def register(subparsers, only: str | None = None) -> None:
    """Add the build subcommands to an argparse ``subparsers`` object (with ``only``, just
    that one of ``COMMANDS``)."""
    declares = (_add_build, _add_list, _add_deps, _add_dependents, _add_matrix, _add_clean)
    for name, declare in zip(COMMANDS, declares):
        if only is None or name == only:
            declare(subparsers)


def main(argv=None) -> int:
    """``python -m manifesto.build_graph``: parse ``argv``, run the handler, print
    ``ManifestoError``s without a traceback."""
    import argparse

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m manifesto.build_graph", description="Build graph commands.",
                                     formatter_class=formatter())
    # A command line that starts with a command needs only that command's parser.
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
             only=argv[0] if argv[:1] and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from manifesto.errors import ManifestoError

        if not isinstance(exc, ManifestoError):
            raise
        print(f"error: {exc}", file=sys.stderr)  # as the main CLI prints it
        return 1


def formatter():
    """argparse's HelpFormatter, sized without importing shutil.

    argparse builds a formatter for every ``add_argument``, and the default one
    imports shutil (and with it bz2 and lzma) for the terminal width: several
    milliseconds of every command's start-up, paid even when no help is shown.
    """
    import argparse

    return _Formatter if _Formatter is not None else _make_formatter(argparse.HelpFormatter)


_Formatter = None


def _make_formatter(base):
    global _Formatter

    class Formatter(base):
        def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
            super().__init__(prog, indent_increment, max_help_position, width or _columns() - 2)

    _Formatter = Formatter
    return Formatter


def _columns() -> int:
    import os

    try:
        return int(os.environ.get("COLUMNS", "")) or 80
    except ValueError:
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _parser(subparsers, name: str, **kwargs):
    return subparsers.add_parser(name, formatter_class=formatter(), **kwargs)


def _shard(text: str) -> tuple[int, int]:
    import argparse

    from manifesto.build_graph.shard import parse_shard
    from manifesto.errors import ManifestoError

    try:
        return parse_shard(text)
    except ManifestoError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--shard: ")) from None


def _shard_count(text: str) -> int:
    import argparse

    from manifesto.build_graph.shard import parse_count
    from manifesto.errors import ManifestoError

    try:
        return parse_count(text)
    except ManifestoError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--shards: ")) from None


#: The most worker processes ``--jobs`` asks for.
MAX_JOBS = 1024


def _jobs(text: str) -> int:
    import argparse

    from manifesto.errors import printable
    from manifesto.util.numbers import whole

    value = whole(text)  # ASCII digits only: int() also reads "١٢"
    if value is None or not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"expected a number of jobs from 1 to {MAX_JOBS}, got "
                                         f"'{printable(text)[:40]}'")
    return value


def _add_build(subparsers) -> None:
    p = _parser(
        subparsers,
        "build",
        help="render targets into out/ (incremental, hermetic)",
        description="Render every (model, cluster) pair the addresses name into out/<cluster>/<model path>, "
        "re-rendering only pairs whose inputs, options or code changed.",
    )
    p.add_argument("addresses", nargs="*", metavar="ADDR", default=["//::"], help=_ADDR_HELP + " (default: //::)"
                   ).complete = "addresses"
    p.add_argument("--check", action="store_true",
                   help="write nothing; fail if out/ is stale, hand-edited or incomplete")
    p.add_argument("--jobs", "-j", type=_jobs, metavar="N",
                   help="render N pairs in parallel (default: the CPU count; under 16 pairs, in this process)")
    p.add_argument("--cluster", action="append", default=[], metavar="C", help="only pairs for cluster C (repeatable)")
    p.add_argument("--changed-since", metavar="REV", help="only pairs whose inputs changed since git revision REV")
    add_output(p, ("text", "json", "yaml"))
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print only the summary and errors, not a line per rendered, pruned or skipped artifact")
    p.add_argument("--explain", action="store_true",
                   help="say on each rendered artifact's line what changed: which input file, the code or the "
                   "options (also with -v; -o json always carries it as 'why')")
    p.add_argument("--shard", type=_shard, metavar="I/N",
                   help="build only shard I of N of the selected pairs (sorted, dealt out in turn); the N shards "
                   "together are the whole build")
    p.add_argument("--remote-cache", metavar="URL",
                   help="a shared cache in Bazel's HTTP layout (/ac/, /cas/): fetch results before rendering, "
                   "share renders after (default: MANIFESTO_REMOTE_CACHE, else BUILD.yaml's remote_cache); a "
                   "bearer token comes from MANIFESTO_REMOTE_CACHE_TOKEN")
    p.add_argument("--remote-cache-read-only", action="store_true",
                   help="read the shared cache, never write it (for untrusted CI; also "
                   "MANIFESTO_REMOTE_CACHE_READ_ONLY=1)")
    p.set_defaults(func=_run_build)


def _add_list(subparsers) -> None:
    p = _parser(subparsers, "list", help="list the targets addresses name", description="List targets, sorted.")
    p.add_argument("addresses", nargs="*", metavar="ADDR", default=["//::"], help=_ADDR_HELP + " (default: //::)"
                   ).complete = "addresses"
    add_output(p)
    p.set_defaults(func=_run_list)


def _add_deps(subparsers) -> None:
    p = _parser(subparsers, "deps", help="files a target's renders read", description="List the files that the "
                              "renders of a target read (its extends chain, clusters, routing profile, catalogs).")
    p.add_argument("address", metavar="ADDR", help=_ADDR_HELP).complete = "addresses"
    p.add_argument("--cluster", action="append", default=[], metavar="C", help="only pairs for cluster C")
    add_output(p)
    p.set_defaults(func=_run_deps)


def _add_dependents(subparsers) -> None:
    p = _parser(subparsers, "dependents", help="artifacts a file feeds",
                              description="List the out/ artifacts whose render reads FILE.")
    p.add_argument("file", metavar="FILE", help="a spec, base, cluster, routing or catalog file").complete = "files"
    add_output(p)
    p.set_defaults(func=_run_dependents)


def _add_matrix(subparsers) -> None:
    p = _parser(subparsers, "matrix", help="pairs as a CI job matrix",
                              description="Print the pairs the addresses name as a job matrix; incompatible "
                              "pairs are skipped (with their reason in --format json).")
    p.add_argument("addresses", nargs="*", metavar="ADDR", default=["//::"], help=_ADDR_HELP + " (default: //::)"
                   ).complete = "addresses"
    p.add_argument("--format", choices=("json", "github"), default="json",
                   help="json: every pair with its status (see -o); github: {\"include\": [...]} of renderable "
                   "pairs, nothing at all when there are none")
    add_output(p, default="json")
    p.add_argument("--cluster", action="append", default=[], metavar="C", help="only pairs for cluster C")
    p.add_argument("--changed-since", metavar="REV", help="only pairs whose inputs changed since git revision REV")
    p.add_argument("--shards", type=_shard_count, metavar="N",
                   help="one row per shard of `build --shard I/N` ({\"shard\": \"I/N\", \"pairs\": K}, K counting "
                   "renderable pairs only) instead of one per pair; shards with no renderable pair are left out "
                   "(N <= 256)")
    p.set_defaults(func=_run_matrix)


def _add_clean(subparsers) -> None:
    p = _parser(subparsers, "clean", help="remove the build cache, or prune it to its size bound",
                description="Remove out/.cache. With --gc, keep it and delete only the least recently used "
                "entries of its store (out/.cache/tasks) until it is within its bound: MANIFESTO_STORE_LIMIT, "
                "else store_limit in BUILD.yaml, else 1Gi. Entries the last build's pairs use are never deleted.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--all", action="store_true", dest="artifacts", help="also remove every artifact in out/")
    what.add_argument("--gc", action="store_true",
                      help="prune the store to 80%% of its bound, least recently used entries first; keep the "
                      "entries the last build used")
    add_output(p)
    p.set_defaults(func=_run_clean)


def _print(args, value, lines=(), names=None, text=None) -> None:
    """``value`` as -o asks; ``lines`` are the text form and, unless ``names`` is given, the names."""
    from manifesto.util.outputs import emit

    lines = list(lines)
    emit(args.output, value, text=text or (lambda: print("\n".join(lines))),
         names=lambda: lines if names is None else list(names), sort_keys=True)


def _run_build(args) -> int:
    from manifesto.build_graph import api

    import os

    from manifesto.build_graph.remote import settings_from_env

    remote = settings_from_env(os.environ, args.remote_cache, args.remote_cache_read_only)
    report = api.build(args.addresses, clusters=args.cluster, changed_since=args.changed_since,
                       check=args.check, jobs=args.jobs, ui=api.ConsoleUI(quiet=getattr(args, "quiet", False)),
                       shard=args.shard, remote=remote)
    if args.output != "text":
        _print(args, report.to_json())
    else:
        explain = args.explain or getattr(args, "verbose", False)
        lines = report.error_lines() if args.quiet else report.work_lines(explain=explain) + report.error_lines()
        for line in lines:
            print(line, file=sys.stderr)
        print(report.summary())
    return 0 if report.ok else 1


def _run_list(args) -> int:
    from manifesto.build_graph import api

    targets = api.list_targets(args.addresses)
    _print(args, [{"address": t.address, "kind": t.kind, "path": t.path} for t in targets],
           (t.address for t in targets))
    return 0


def _run_deps(args) -> int:
    from manifesto.build_graph import api

    found = api.deps(args.address, clusters=args.cluster)
    _print(args, [{"model": m, "cluster": c, "inputs": files} for (m, c), files in sorted(found.items())],
           sorted({f for files in found.values() for f in files}))
    return 0


def _run_dependents(args) -> int:
    from manifesto.build_graph import api

    rows = api.dependents(args.file)
    _print(args, rows, (r["artifact"] for r in rows))
    return 0


def _run_matrix(args) -> int:
    import json

    from manifesto.build_graph import api
    from manifesto.build_graph.report import SKIPS_NAMED, skipped_summary
    from manifesto.errors import note, printable

    rows, shards = api.matrix_and_shards(args.addresses, args.shards, clusters=args.cluster,
                                         changed_since=args.changed_since)
    if args.format == "github":
        # As the build's report: a failed pair always, incompatible ones each when they are few
        # (or with -v), else counted (--format json has every reason).
        skipped = [r for r in rows if r["status"] == "skipped"]
        named = [r for r in rows if r["status"] == "failed"]
        if len(skipped) <= SKIPS_NAMED or getattr(args, "verbose", False):
            named = [r for r in rows if r["status"] != "ok"]
        notes = [printable(f"{r['status']}: {r['model']} @ {r['cluster']}: {r['reason']}") for r in named]
        if len(named) < len([r for r in rows if r["status"] != "ok"]):
            notes.append(f"skipped: {skipped_summary(len(skipped), len({r['model'] for r in skipped}))} "
                         "(`manifesto matrix --format json` gives each reason)")
        for line in notes:
            note(line)
        include = [{"model": r["model"], "cluster": r["cluster"]} for r in rows if r["status"] == "ok"]
        if args.shards:
            include = shards
        if include:  # GitHub Actions rejects an empty matrix: print nothing for the job's `if:` to test
            print(json.dumps({"include": include}, separators=(",", ":")))
        else:
            note("matrix: no renderable pairs; nothing to run")
    elif args.shards:
        _print(args, shards, (f"{s['shard']:<8} {s['pairs']} pair{'' if s['pairs'] == 1 else 's'}" for s in shards),
               names=(s["shard"] for s in shards))
    else:
        _print(args, rows, (f"{r['status']:<8} {r['model']} @ {r['cluster']}" for r in rows),
               names=(f"{r['model']}@{r['cluster']}" for r in rows if r["status"] == "ok"))
    return 1 if any(r["status"] == "failed" for r in rows) else 0


def _run_clean(args) -> int:
    from manifesto.build_graph import api

    if args.gc:
        done = api.collect_garbage()
        mib = "{:.1f} MiB".format
        _print(args, done, names=(), text=lambda: print(
            f"removed {done['removed']} file{'' if done['removed'] == 1 else 's'} "
            f"({mib(done['freed_bytes'] / (1 << 20))}); the store holds {mib(done['bytes'] / (1 << 20))} of its "
            f"{mib(done['limit_bytes'] / (1 << 20))} bound, {mib(done['live_bytes'] / (1 << 20))} of it used by the "
            "last build"))
        return 0
    removed = api.clean(artifacts=args.artifacts)
    _print(args, removed, names=removed, text=lambda: print(
        f"removed {len(removed)} path{'' if len(removed) == 1 else 's'}" + "".join(f"\n  {r}" for r in removed)))
    return 0
