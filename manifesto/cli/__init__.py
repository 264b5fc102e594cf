"""Command-line interface.

``get_parser()`` builds the whole argparse tree with no side effects (shtab and
argparse-manpage import it); ``main(argv)`` parses and dispatches to one short handler
per command. Handlers import the heavy layers lazily so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["get_parser", "main", "run"]


def get_parser() -> argparse.ArgumentParser:
    from manifesto import __version__
    from manifesto.cli import commands

    parser = argparse.ArgumentParser(
        prog="manifesto",
        description="Render vLLM / llm-d deployments as plain Kubernetes YAML or Slurm batch scripts.",
    )
    parser.add_argument("--version", action="version", version=f"manifesto {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    commands.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from manifesto.errors import ManifestoError

    parser = get_parser()
    args = parser.parse_args(argv)
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
