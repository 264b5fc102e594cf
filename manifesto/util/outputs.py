"""``-o/--output text|json|yaml|name``: one flag, one printer, for every command that prints data.

``text`` is for people, ``json`` and ``yaml`` carry the same structured value, ``name``
prints one identifier per line for shell loops (``kubectl -o name``). Commands whose data
has no names accept the formats they can honour; the flag is spelled the same everywhere
(``manifesto.cli.flags.add_output`` adds it to a command).
"""

from __future__ import annotations

import sys

__all__ = ["FORMATS", "emit"]

FORMATS = ("text", "json", "yaml", "name")


def emit(fmt: str, data, *, text=None, names=None, sort_keys: bool = False) -> None:
    """Print ``data`` as ``fmt``; ``text()`` and ``names()`` give the text and name forms."""
    if fmt == "json":
        import json

        print(json.dumps(data, indent=2, sort_keys=sort_keys))
    elif fmt == "yaml":
        import json

        from manifesto.util.yamlemit import dump_yaml

        # Through JSON first, so YAML carries exactly the JSON value (tuples become lists).
        sys.stdout.write(dump_yaml(json.loads(json.dumps(data, sort_keys=sort_keys))))
    elif fmt == "name":
        from manifesto.errors import printable

        for name in names():  # one identifier per line, whatever a cluster or a file name holds
            print(printable(str(name)))
    else:
        _escaped(text)


class _Printable:
    """stdout for a text printer: names, labels and tool output it shows come from outside
    the process, so every character but line feed and tab that is not printable (ESC and
    other controls, bidi overrides, zero-width characters) goes out as an escape."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        from manifesto.errors import printable

        return self.stream.write(printable(text, keep="\n\t"))

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _escaped(text) -> None:
    stream = sys.stdout
    sys.stdout = _Printable(stream)
    try:
        text()
    finally:
        sys.stdout = stream
