"""Command-line interface.

``get_parser()`` builds the whole argparse tree with no side effects (shtab and
argparse-manpage import it); ``main(argv)`` parses and dispatches to one short handler
per command. Handlers import the heavy layers lazily so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["get_parser", "main", "run"]


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

    parser = argparse.ArgumentParser(
        prog="manifesto",
        formatter_class=formatter(),
        description="Render vLLM / llm-d deployments as plain Kubernetes YAML or Slurm batch scripts.",
    )
    parser.add_argument("--version", action="version", version=f"manifesto {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    commands.register(sub if selected is None else _OnlyOne(sub, selected))
    return parser


def _command_word(argv: list[str]) -> str:
    """The top-level command in ``argv`` (an empty string when there is none)."""
    return next((a for a in argv if not a.startswith("-")), "")


def _build_address(ref: str):
    """The file a build address names, through the workspace's BUILD.yaml."""
    from manifesto.build_graph.api import target_path

    return target_path(ref)


def main(argv: list[str] | None = None) -> int:
    from manifesto.errors import ManifestoError

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = get_parser(_command_word(argv))
    args = parser.parse_args(argv)
    from manifesto import catalog

    # Names resolve in the user and bundled catalogs; the CLI also accepts build addresses.
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
