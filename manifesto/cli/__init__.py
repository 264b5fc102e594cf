"""Command-line interface.

``get_parser()`` builds the whole argparse tree with no side effects (shell completion
and argparse-manpage walk it); ``main(argv)`` parses and dispatches to one short handler
per command. Handlers import the heavy layers lazily so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["get_parser", "main", "run"]


class Parser(argparse.ArgumentParser):
    """argparse with a "did you mean" for mistyped commands, choices and options."""

    def error(self, message: str):
        super().error(_suggest(self, message))


def _suggest(parser: argparse.ArgumentParser, message: str) -> str:
    import re

    from manifesto.errors import did_you_mean

    m = re.match(r"argument (.+?): invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if m:
        what, word, choices = m.group(1), m.group(2), re.findall(r"'([^']*)'", m.group(3))
        hint = did_you_mean(word, choices) or f" (choose from {', '.join(choices)})"
        if what.isupper():  # a COMMAND / WHAT / ACTION metavar: a sub-command
            return f"unknown command '{word}'{hint}"
        return f"argument {what}: invalid choice '{word}'{hint}"
    m = re.match(r"unrecognized arguments: (.*)$", message)
    if m:
        word = next((w for w in m.group(1).split() if w.startswith("-")), "")
        hint = did_you_mean(word.partition("=")[0], _option_strings(parser)) if word else ""
        if hint:
            return f"unknown option '{word}'{hint}"
    return message


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option of ``parser`` and of the sub-commands built below it."""
    found, todo = set(), [parser]
    while todo:
        p = todo.pop()
        for action in p._actions:
            found.update(o for o in action.option_strings if o.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return found


class _Unused:
    """Stands in for the parser of a command this run does not use: every call is a no-op."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self


class _OnlyOne:
    """Subparsers wrapper: full parsers for ``selected`` only; the others keep name and help.

    Building every subcommand's arguments costs more than the rest of ``--help``; a run
    needs only its own command, while the listing needs just names and one-line help.
    """

    def __init__(self, sub, selected: str) -> None:
        self.sub = sub
        self.selected = selected

    def add_parser(self, name: str, **kwargs):
        if name == self.selected:
            return self.sub.add_parser(name, **kwargs)
        self.sub.add_parser(name, help=kwargs.get("help"), add_help=False,
                            formatter_class=kwargs.get("formatter_class", argparse.HelpFormatter))
        return _Unused()


def get_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The argparse tree; with ``selected``, only that top-level command is built in full."""
    from manifesto import __version__
    from manifesto.cli import commands

    from manifesto.build_graph.cli import formatter

    parser = Parser(
        prog="manifesto",
        formatter_class=formatter(),
        description="Render vLLM / llm-d deployments as plain Kubernetes YAML or Slurm batch scripts.",
        epilog="-q/--quiet and -v/--verbose work before or after the command. "
        "`manifesto man | man -l -` shows the manual.",
    )
    parser.add_argument("--version", "-V", action="version", version=f"manifesto {__version__}")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only data and errors")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="log every kubectl and Slurm call and its duration (MANIFESTO_TRACE=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    commands.register(sub if selected is None else _OnlyOne(sub, selected))
    return parser


def _command_word(argv: list[str]) -> str:
    """The top-level command in ``argv`` (an empty string when there is none)."""
    return next((a for a in argv if not a.startswith("-")), "")


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


def main(argv: list[str] | None = None) -> int:
    from manifesto.cli import common
    from manifesto.errors import ManifestoError

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["__complete"]:  # hidden: what the completion scripts call on TAB
        from manifesto.cli.complete import main as complete

        return complete(argv[1:])
    argv, flags = _globals(argv)
    parser = get_parser(_command_word(argv))
    if not argv:
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    common.set_verbosity(quiet=flags["quiet"], verbose=flags["verbose"])
    service = sys.modules.get("manifesto.service")
    if service is not None:  # "said once" means once per command, also when called in-process
        service.forget_warnings()
    args.quiet, args.verbose = flags["quiet"], flags["verbose"]  # for handlers outside manifesto.cli
    if not args.func.__module__.startswith("manifesto.build_graph"):
        # Names resolve in the user and bundled catalogs; the CLI also accepts build addresses.
        # The build graph's own commands never look names up, and a no-op build must not pay
        # for importing the catalog (and pathlib with it).
        from manifesto import catalog

        catalog.use_search(catalog.default_search(addresses=_build_address))
    try:
        return int(args.func(args) or 0)
    except ManifestoError as exc:
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
    sys.exit(main())
