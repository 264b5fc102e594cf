"""The flags several commands share, as argparse arguments (all argparse lives in ``manifesto.cli``):
``-o/--output``, the render and selection options of ``manifesto.resolve.options``, and the
``type=`` of a wait in seconds. What the flags mean lives with what they drive: the option
table in ``manifesto.resolve.options``, the printers in ``manifesto.util.outputs``, the number
grammar in ``manifesto.util.numbers``."""

from __future__ import annotations

__all__ = ["add_output", "add_option_flags", "file_arg", "seconds_arg", "positive_seconds_arg"]

#: The reference implementation's name of the text table (``servers``, ``config list``).
TABLE = "table"


def _table_is_text(value: str) -> str:
    return "text" if value == TABLE else value


def add_output(parser, formats=None, default: str = "text", *, table: bool = False) -> None:
    """Add ``-o/--output`` with ``formats`` (default: ``util.outputs.FORMATS``) to ``parser``.
    ``table``: also accept ``-o table``, the reference's spelling of the text table (handlers
    see ``text``)."""
    if formats is None:
        from manifesto.util.outputs import FORMATS as formats
    shown = ", ".join(formats)
    if table:
        shown += f" ({TABLE}: the same as text)"
    # With ``table`` it is one of the choices (so every shell's completion offers it), and the
    # type turns it into ``text`` before argparse checks the choice.
    parser.add_argument("--output", "-o", choices=(*formats, TABLE) if table else formats, default=default,
                        metavar="FORMAT", type=_table_is_text if table else None,
                        help=f"output format: {shown} (default: {default})")


#: Render options that only a Kubernetes render has a use for: a command that renders only for
#: Slurm (``render slurm``, ``slurm submit``) does not offer them.
KUBERNETES_ONLY = frozenset({"idle_shutdown", "idle_timeout_minutes", "argocd_sync_waves"})


def add_option_flags(p, group: str, *, help_for: dict | None = None, complete: dict | None = None,
                     leave_out: frozenset = frozenset()) -> None:
    """The flags of every option of ``group`` ("select" or "render") of
    ``manifesto.resolve.options.OPTIONS`` but those named in ``leave_out``; ``help_for``
    overrides an option's help by name, ``complete`` maps completion hints to completer values."""
    from manifesto.resolve.options import OPTIONS

    for o in OPTIONS:
        if o.group != group or o.name in leave_out:
            continue
        text = (help_for or {}).get(o.name, o.help)
        if o.kind == "switch":
            on, off = text.split("|")
            mutex = p.add_mutually_exclusive_group()
            mutex.add_argument(o.flag, action="store_true", help=on)
            mutex.add_argument("--no-" + o.flag[2:], action="store_true", help=off)
            continue
        kwargs = {"help": text}
        if o.metavar:
            kwargs["metavar"] = o.metavar
        if o.kind == "list":
            kwargs["action"] = "append"
        action = p.add_argument(*o.flags, **kwargs)
        if o.complete:
            action.complete = (complete or {}).get(o.complete, o.complete)


def file_arg(text: str) -> str:
    """argparse ``type=`` for a file to write or read: an empty value (``--output=``, a variable
    that expanded to nothing) is refused, never taken as "not given" and so as the default file."""
    if not text:
        import argparse

        raise argparse.ArgumentTypeError("expected a file name, got an empty value")
    return text


def seconds_arg(text: str) -> float:
    """argparse ``type=`` for a wait in seconds: finite, from 0 to ``util.numbers.MAX_SECONDS``."""
    from manifesto.util.numbers import MAX_SECONDS, number

    value = number(text)
    if value is None:
        import argparse

        raise argparse.ArgumentTypeError(f"expected a number of seconds from 0 to {MAX_SECONDS}, got {text[:40]!r}")
    return value


def positive_seconds_arg(text: str) -> float:
    """argparse ``type=`` for a wait in seconds that must be more than 0."""
    from manifesto.util.numbers import MAX_SECONDS, number

    value = number(text, low_open=True)
    if value is None:
        import argparse

        raise argparse.ArgumentTypeError(f"expected a positive number of seconds up to {MAX_SECONDS}, "
                                         f"got {text[:40]!r}")
    return value
