"""``migrate FILE``: rewrite a reference-format spec or cluster profile in this project's format."""

from __future__ import annotations

import sys
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register"]


def register(sub, add) -> None:
    from manifesto.cli.flags import file_arg
    from manifesto.cli.hints import FILES

    p = add(sub, "migrate", help=SUMMARIES["migrate"])
    p.add_argument("file", metavar="FILE", help="the spec or cluster profile to rewrite").complete = FILES
    p.add_argument("--kind", choices=("spec", "cluster"), help="what FILE is (default: a cluster profile when it "
                   "has accelerators:, else a spec)")
    p.add_argument("--output", "-o", metavar="OUT", type=file_arg, help="write here instead of stdout (FILE itself "
                   "rewrites it in place)").complete = FILES
    p.set_defaults(func=_migrate)


def _migrate(args) -> int:
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from manifesto.cli.common import info
    from manifesto.errors import InputError
    from manifesto.load.spellings import migrate_cluster, migrate_spec
    from manifesto.load.inputs import display_name
    from manifesto.load.yamlio import parse_yaml, read_text

    name = display_name(args.file)
    text = read_text(args.file, name)
    # The loader's reading first: its bounds (entries, depth, aliases, 4300-digit numbers) run
    # before any recursive code, and what it refuses (a second document, a non-string key, a
    # duplicate) is refused here too, with its position. Only then the round trip.
    parse_yaml(text, name)
    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)  # the bundled files' style: "  - name: ..."
    try:
        data = yaml.load(text)
    except (ValueError, KeyError, OverflowError, TypeError, RecursionError) as exc:  # the loader took it: not expected
        raise InputError(f"{name}: cannot be read for migration ({type(exc).__name__})") from None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        raise InputError(f"{where}: not valid YAML ({getattr(exc, 'problem', None) or 'syntax error'})") from None
    if not isinstance(data, dict):
        raise InputError(f"{name}: expected a YAML mapping (a model spec or a cluster profile)")
    kind = args.kind or ("cluster" if "accelerators" in data else "spec")
    notes = (migrate_cluster if kind == "cluster" else migrate_spec)(data)
    buf = io.StringIO()
    yaml.dump(data, buf)
    _write(args, buf.getvalue())
    failed = [n for n in notes if n.action == "refused"]
    for note in notes:
        if note.action != "refused":
            info(args, f"{note.action}: {note.message}")
    for note in failed:
        sys.stderr.write(f"could not map: {note.key}: {note.message}\n")
    if failed:
        sys.stderr.write(f"{name}: {len(failed)} key(s) could not be mapped; they are left as they were\n")
        return 1
    return 0


def _write(args, text: str) -> None:
    from manifesto.errors import InputError
    from manifesto.edge.fs import target_problem, write_atomic

    if not args.output:
        sys.stdout.write(text)
        return
    problem = target_problem(args.output)
    if problem:
        raise InputError(f"{args.output}: {problem}")
    try:
        write_atomic(args.output, text)
    except OSError as exc:
        raise InputError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
