"""``python -m manifesto.build_graph COMMAND``: the build commands on their own.

The main ``manifesto`` CLI mounts the same parsers through ``cli.register``.
"""

from __future__ import annotations

import sys


def main(argv=None) -> int:
    """Parse ``argv``, run the handler, print ``ManifestoError``s without a traceback."""
    import argparse

    from manifesto.build_graph.cli import COMMANDS, formatter, register

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


if __name__ == "__main__":
    code = main()
    import gc

    gc.freeze()  # as ``manifesto.cli.run`` does: the exit frees memory without a collector pass
    sys.exit(code)
