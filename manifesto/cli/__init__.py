"""Command-line interface.

``get_parser()`` (``manifesto.cli.parser``) builds the whole argparse tree with no side
effects (shell completion and argparse-manpage walk it); ``main(argv)`` parses and
dispatches to one short handler per command. Handlers import the heavy layers lazily so
``--help`` stays fast.
"""

from __future__ import annotations

import sys

from manifesto.cli.parser import English, command_word, get_parser

__all__ = ["get_parser", "main", "run"]


_GLOBAL = {"-q": "quiet", "--quiet": "quiet", "-v": "verbose", "--verbose": "verbose"}


def _globals(argv: list[str]) -> tuple[list[str], dict[str, bool]]:
    """``argv`` without -q/-v (accepted anywhere before ``--``, as kubectl does) and which were given."""
    flags = {"quiet": False, "verbose": False}
    rest: list[str] = []
    for i, word in enumerate(argv):
        if word == "--":
            rest.extend(argv[i:])
            break
        if word in _GLOBAL:
            flags[_GLOBAL[word]] = True
        else:
            rest.append(word)
    return rest, flags


def _build_address(ref: str):
    """The file a build address names, through the workspace's BUILD.yaml."""
    from manifesto.build_graph.api import target_path

    return target_path(ref)


def _workspace_entry(kind: str, name: str):
    """The file of the workspace's ``kind`` target called ``name`` (None: no workspace, or none
    or several of that name)."""
    from manifesto.build_graph import api
    from manifesto.errors import ManifestoError

    singular = {"clusters": "cluster", "models": "model", "routing": "routing"}[kind]
    try:
        hits = [t for t in api.list_targets(["//::"]) if t.kind == singular and t.name == name]
        return api.target_path(hits[0].address) if len(hits) == 1 else None
    except ManifestoError:
        return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    with English():  # argparse's messages as written, for this command only
        return _main(argv)


def _main(argv: list[str]) -> int:
    if argv[:1] == ["__complete"]:  # hidden: what the completion scripts call on TAB
        from manifesto.cli.complete import main as complete

        return complete(argv[1:])
    from manifesto.errors import ManifestoError, Run

    argv, flags = _globals(argv)
    word = command_word(argv)
    alone = argv[:1] == [word]
    then = argv[1] if alone and len(argv) > 1 and not argv[1].startswith("-") else None
    parser = get_parser(word, alone=alone, then=then)
    if not argv:
        parser.print_help()
        return 0
    parser.argv = argv
    args = parser.parse_args(argv)
    # This command's run: its -q/-v and the warnings it has given ("said once" means once per
    # command, also when main is called in-process); handlers find it on args.
    args.run = Run(quiet=flags["quiet"], verbose=flags["verbose"])
    args.quiet, args.verbose = flags["quiet"], flags["verbose"]  # for handlers outside manifesto.cli
    args.search = None  # where names resolve, passed explicitly to every lookup (no process default)
    if args.func.__module__ != "manifesto.cli.build_cmds":
        # Names resolve in the user and bundled catalogs; the CLI also accepts build addresses.
        # The build graph's own commands never look names up, and a no-op build must not pay
        # for importing the catalog (and pathlib with it).
        from manifesto.load import catalog

        args.search = catalog.default_search(addresses=_build_address, workspace=_workspace_entry)
    try:
        with args.run.active():
            return int(args.func(args) or 0)
    except ManifestoError as exc:
        for line in exc.warnings:  # found before the error (loading's): said first, once in the run
            args.run.once(line)
        # One error per line, each prefixed, so `grep -c ^error:` counts them.
        for line in exc.format().splitlines() or [""]:
            print(f"error: {line}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def run() -> None:
    code = main()
    _before_exit()
    sys.exit(code)


def _before_exit() -> None:
    """Before the process ends: move every object out of the collector's reach. The
    interpreter's exit then frees memory by reference counts alone, instead of first
    traversing every object left (modules, a build's manifest) several times looking for
    cycles: a tenth of a no-op build. Files are still closed and flushed and ``atexit``
    handlers run; only objects caught in reference cycles are not finalized (their memory
    goes back with the process)."""
    import gc

    gc.freeze()
