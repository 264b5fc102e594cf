"""The argparse tree: ``get_parser()`` builds it with no side effects (shell completion and
argparse-manpage walk it), with a "did you mean" for mistyped commands and options.

The command modules are imported by name, so none of them imports this builder (or
``manifesto.cli``) back: the CLI's modules form no import cycle (tests/test_layers.py).
"""

from __future__ import annotations

import argparse

__all__ = ["Parser", "get_parser", "command_word", "COMMANDS", "English"]


def _plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


class English:
    """``with English():`` argparse's own messages are used as written while the block runs.

    The CLI speaks English; argparse would look each of its few hundred strings up in the
    gettext catalogs (a search of the locale folders per string: about a sixth of `--help`
    and of a completion TAB). ``main`` runs each command inside this block, and argparse is
    as it was after it: importing the CLI changes nothing for other users of argparse."""

    __slots__ = ("saved",)

    def __enter__(self) -> None:
        self.saved = argparse._, argparse.ngettext
        argparse._, argparse.ngettext = str, _plural

    def __exit__(self, *exc) -> None:
        argparse._, argparse.ngettext = self.saved

#: The module whose ``register(sub)`` adds every command (it imports the others by name).
COMMANDS = "manifesto.cli.commands"


class Parser(argparse.ArgumentParser):
    """argparse with a "did you mean" for mistyped commands, choices and options."""

    #: The words being parsed (set by ``main``), so an error can tell options from words
    #: that follow ``--`` and are positional whatever they look like.
    argv: list[str] | None = None

    def error(self, message: str):
        super().error(_suggest(self, message))

    def _get_values(self, action, arg_strings):
        # argparse drops a '--' value (`--output=--`) and hands the option an empty list.
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            self.error(f"argument {'/'.join(action.option_strings)}: expected one value, got '--' "
                       "(write ./-- for a file of that name)")
        return super()._get_values(action, arg_strings)


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
    argv = getattr(parser, "argv", None) or []
    if m and "--" in argv:
        extra = m.group(1).split()
        tail = argv[argv.index("--") + 1:]
        if extra and tail[-len(extra):] == extra:  # they all came after '--'
            import shlex

            return (f"unexpected argument{'s' if len(extra) > 1 else ''} after '--': {shlex.join(extra)} "
                    "(after '--' every word is a positional argument, never an option)")
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

    def wants(self, *names: str) -> bool:
        """No command under an unused one is needed (nor the module defining it)."""
        return False


class _OnlyOne:
    """Subparsers wrapper: full parsers for ``selected`` only; the others keep name and help,
    or, with ``alone``, are left out.

    Building every subcommand's arguments costs more than the rest of ``--help``; a run
    needs only its own command, while the listing needs just names and one-line help. A
    command line that starts with its command (``alone``) lists nothing: no sibling is
    needed, nor the module that defines it (``wants``).
    """

    def __init__(self, sub, selected: str, then: str | None = None, alone: bool = False) -> None:
        self.sub = sub
        self.selected = selected
        self.then = then  # the word after it (``render manifest``): only that one of its own commands
        self.alone = alone
        self.found = False  # whether ``selected`` is a command here
        self.inner: _OnlyOne | None = None  # the same for ``then`` among its commands

    def complete(self) -> bool:
        """Whether the words asked for are commands (else argparse must list every name)."""
        return self.found and (self.inner is None or self.inner.complete())

    def wants(self, *names: str) -> bool:
        """Whether this run needs the parsers of the commands ``names`` (a listing of the
        commands needs only their names and one-line help: ``cli.summaries``)."""
        return self.selected in names

    def add_parser(self, name: str, **kwargs):
        if name == self.selected:
            self.found = True
            parser = self.sub.add_parser(name, **kwargs)
            if self.then is not None:  # its own commands: only ``then`` in full, like this one level up
                commands = parser.add_subparsers

                def only_then(**kw):
                    self.inner = _OnlyOne(commands(**kw), self.then, alone=self.alone)
                    return self.inner
                parser.add_subparsers = only_then
            return parser
        if not self.alone:
            self.sub.add_parser(name, help=kwargs.get("help"), add_help=False,
                                formatter_class=kwargs.get("formatter_class", argparse.HelpFormatter))
        return _Unused()


def get_parser(selected: str | None = None, alone: bool = False, then: str | None = None) -> argparse.ArgumentParser:
    """The argparse tree; with ``selected``, only that top-level command is built in full.

    ``alone``: the command line starts with ``selected`` (so no word is parsed against the
    others, and no top-level help lists them); a build-graph command then comes without the
    other commands, whose modules a no-op build would import for nothing. ``then``: the word
    after ``selected`` when it is one (``render manifest``): a command with commands of its
    own builds only that one in full (``render`` has seven; a render builds one).
    """
    import importlib

    from manifesto import __version__
    from manifesto.cli.build_cmds import COMMANDS as BUILD_COMMANDS
    from manifesto.cli.build_cmds import formatter
    from manifesto.cli.build_cmds import register as register_build

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
    if alone and selected in BUILD_COMMANDS:
        register_build(sub, only=selected)
        return parser
    # By name: the command modules sit below this builder and never import it back.
    if selected is None:
        importlib.import_module(COMMANDS).register(sub)
        return parser
    only = _OnlyOne(sub, selected, then, alone)
    importlib.import_module(COMMANDS).register(only)
    if alone and not only.complete():  # a mistyped command: argparse lists every name
        return get_parser(selected, then=then)
    return parser


def command_word(argv: list[str]) -> str:
    """The top-level command in ``argv`` (an empty string when there is none)."""
    return next((a for a in argv if not a.startswith("-")), "")
