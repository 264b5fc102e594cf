"""``-o/--output text|json|yaml|name``: one flag, one printer, for every command that prints data.

``text`` is for people, ``json`` and ``yaml`` carry the same structured value, ``name``
prints one identifier per line for shell loops (``kubectl -o name``). Commands whose data
has no names accept the formats they can honour; the flag is spelled the same everywhere.
"""

from __future__ import annotations

import sys

__all__ = ["FORMATS", "add_output", "emit"]

FORMATS = ("text", "json", "yaml", "name")


def add_output(parser, formats=FORMATS, default: str = "text") -> None:
    """Add ``-o/--output`` with ``formats`` to an argparse parser."""
    parser.add_argument("--output", "-o", choices=formats, default=default, metavar="FORMAT",
                        help=f"output format: {', '.join(formats)} (default: {default})")


def emit(fmt: str, data, *, text=None, names=None, sort_keys: bool = False) -> None:
    """Print ``data`` as ``fmt``; ``text()`` and ``names()`` give the text and name forms."""
    if fmt == "json":
        import json

        print(json.dumps(data, indent=2, sort_keys=sort_keys))
    elif fmt == "yaml":
        import json

        from manifesto.yamlemit import dump_yaml

        # Through JSON first, so YAML carries exactly the JSON value (tuples become lists).
        sys.stdout.write(dump_yaml(json.loads(json.dumps(data, sort_keys=sort_keys))))
    elif fmt == "name":
        for name in names():
            print(name)
    else:
        text()
