"""Every error a user can act on.

    ManifestoError                 base; the CLI prints it and exits non-zero
    ├── InputError                 a file or value a user wrote is wrong (also a ValueError)
    │   ├── YamlSyntaxError        the YAML does not parse, repeats a key, or has a key that is not a string
    │   ├── SchemaError            one or more fields break the schema (all collected)
    │   ├── ExtendsError           missing parent, or a cycle in an ``extends`` chain
    │   ├── ExpressionError        a ``computed`` expression is malformed or names an unknown var
    │   └── CatalogError           a named model / cluster / routing profile is not found
    ├── ResolveError               inputs are valid alone but do not fit together (also a ValueError)
    │   └── IncompatiblePairError  the spec pins an accelerator the cluster does not offer
    ├── RenderCheckError           a rendered object breaks a Kubernetes rule (placed on its field, else a bug)
    ├── BuildError                 BUILD.yaml, addresses, the cache or out/
    └── OpsError                   kubectl / Slurm / ssh workflows

Anything else that escapes is a bug, and the CLI lets it show its traceback.

What is not an error, a note or a warning, is said through the :class:`Run` of the command
or API call it happens in: -q silences notes, and each warning is said once per run.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = [
    "Origin",
    "ManifestoError",
    "InputError",
    "YamlSyntaxError",
    "SchemaError",
    "ExtendsError",
    "ExpressionError",
    "CatalogError",
    "ResolveError",
    "IncompatiblePairError",
    "RenderCheckError",
    "BuildError",
    "OpsError",
    "did_you_mean",
    "format_path",
    "show_value",
    "printable",
    "excerpt",
]
# Also here, for manifesto's own layers and not part of the pinned public API (tests/test_public_api.py):
# Run, warn_once, note and quiet: a command's notes and warnings, and its -q.


class Origin:
    """Where a value came from: ``file:line:col`` (1-based), or just the file."""

    __slots__ = ("file", "line", "col")

    def __init__(self, file: str, line: int = 0, col: int = 0) -> None:
        self.file = file
        self.line = line
        self.col = col

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Origin) and (self.file, self.line, self.col) == (other.file, other.line, other.col)

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.col))

    def __repr__(self) -> str:
        return f"Origin({self.file!r}, {self.line}, {self.col})"

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.col}"
        return self.file


class ManifestoError(Exception):
    """Base of every user-facing error. ``warnings``: the warning lines found before it (loading's
    reference spellings), which its caller says before the error."""

    warnings: tuple[str, ...] = ()

    def __init__(self, message: str, origin: Origin | None = None, path: str = "") -> None:
        self.message = message
        self.origin = origin
        self.path = path
        super().__init__(self.format())

    def format(self) -> str:
        # A key quoted into the path, or a value into the message, must not print a raw control
        # character (messages may hold deliberate line breaks; paths never do).
        parts = []
        if self.origin is not None:
            parts.append(printable(str(self.origin)))
        if self.path:
            parts.append(printable(self.path))
        parts.append(printable(self.message, keep="\n\t"))
        return ": ".join(parts)


class InputError(ManifestoError, ValueError):
    """Also a ValueError, as the reference's configuration errors were: a caller's
    ``except ValueError`` catches it."""


class YamlSyntaxError(InputError):
    pass


class Several:
    """Mixed into an error class: several errors reported together, one per line, in the
    order they were found; the first gives the message, origin and path."""

    def __init__(self, errors: list[ManifestoError]) -> None:
        self.errors = errors
        first = errors[0]
        super().__init__(first.message, first.origin, first.path)

    def format(self) -> str:
        return "\n".join(e.format() for e in self.errors)


class SchemaError(Several, InputError):
    """Several field errors of one file, reported together (one per line)."""


class ExtendsError(InputError):
    pass


class ExpressionError(InputError):
    pass


class CatalogError(InputError):
    pass


class ResolveError(ManifestoError, ValueError):
    """Also a ValueError (see :class:`InputError`)."""


class IncompatiblePairError(ResolveError):
    pass


class RenderCheckError(ManifestoError):
    """A rendered object breaks a Kubernetes rule. Name problems are usually the input's doing
    and get placed on the spec field behind the name; anything else is a bug in a renderer."""

    def __init__(self, kind: str, name: str, field: str, problem: str, excess: int = 0) -> None:
        self.kind = kind
        self.name = name
        self.field = field
        self.problem = problem
        self.excess = excess  # characters over a length limit; -1 for a duplicate name
        super().__init__(f"internal error: the rendered {kind} '{name}' breaks a Kubernetes rule at {field}: "
                         f"{problem}; this is a bug in manifesto, please report it")


class BuildError(ManifestoError):
    pass


class OpsError(ManifestoError):
    pass


def format_path(path: tuple) -> str:
    """``("roles", 0, "lws", "size")`` -> ``roles[0].lws.size``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def did_you_mean(word: str, choices) -> str:
    """A ``" (did you mean 'x'?)"`` suffix, or an empty string when nothing is close."""
    import difflib

    match = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.75)
    return f" (did you mean '{match[0]}'?)" if match else ""


def printable(text: str, keep: str = "") -> str:
    """``text`` safe to print on a terminal or as one line of ``-o name``: every character
    that is not printable (controls such as ESC and line breaks, format characters such as
    bidi overrides and zero-width spaces, separators other than the space) becomes an
    escape such as ``\\x1b`` or ``\\u202e``. Characters in ``keep`` (say "\\n") pass.
    Everything read from outside the process (a cluster, a tool, a file name) goes through
    this before it is printed."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape_code(ord(c)) for c in text)


def excerpt(text: str, limit: int = 1000) -> str:
    """A tool's output for an error message: on one line, printable, and at most ``limit``
    characters (the end, where tools put the reason), so 50 MB of output stays one line."""
    text = text.strip()
    if len(text) > limit:
        text = f"[{len(text) - limit} characters cut] ..." + text[-limit:]
    return printable(text.replace("\r\n", "\n").replace("\n", " | "))


def _escape_code(code: int) -> str:
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def show_value(value) -> str:
    """A value as a person wrote it in YAML, for messages: ``'text'``, ``true``, ``null``, ``.nan``, ``a list``.

    Strings are quoted on one line (newlines and tabs escaped) and cut at 80 characters, so
    one error always prints as one line.
    """
    import math
    from collections.abc import Set

    if isinstance(value, str):
        text = value.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        text = printable(text)
        return f"'{text[:77]}...'" if len(text) > 80 else f"'{text}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Set):
        return "a set"
    return f"a {type(value).__name__}"


# -- one run's notes and warnings ----------------------------------------------------------

class Run:
    """One command (or one API call): whether -q or -v was given, and the warnings it has
    already said, so that each is said once however often the code that finds it runs.

    The CLI makes one per command (``manifesto.cli.main``) and hands it to the handler as
    ``args.run``. Below it nothing writes a warning: loading and the tasks return them as data
    (``Loaded.warnings``, ``Outcome.warnings``, an error's ``warnings``), and the entry points say
    them with :func:`say_warnings` while the run is :meth:`active`. :func:`note` and :func:`quiet`
    read its -q: the terminal's verbosity, for ``cli/`` and the ``ops/`` workflows only. Nothing outlives the run: the next command starts with none
    said. Lines go to ``sys.stderr`` as it is when they are written (tests capture it)."""

    __slots__ = ("quiet", "verbose", "_said", "silent")

    def __init__(self, *, quiet: bool = False, verbose: bool = False, silent: bool = False) -> None:
        self.quiet = quiet
        self.verbose = verbose
        self._said: set[str] = set()
        self.silent = silent  # warnings kept (``said``), not written: ``regen``'s render of a header

    def info(self, message: str) -> None:
        """A line for the person at the terminal (stderr), silenced by -q; data goes to stdout."""
        import sys

        if not self.quiet:
            print(message, file=sys.stderr)

    def once(self, line: str) -> None:
        """Write ``line`` (a warning: -q does not silence it) to stderr, unless this run already has."""
        import sys

        if line not in self._said:
            self._said.add(line)
            if not self.silent:
                print(line, file=sys.stderr)

    @property
    def said(self) -> frozenset[str]:
        """The warnings this run has found."""
        return frozenset(self._said)

    def active(self) -> _Active:
        """``with run.active():`` makes this the run :func:`warn_once` reports to, until the
        block ends (the run that was active before, if any, is active again after)."""
        return _Active(self)


#: The run code below the CLI reports to: set by ``Run.active`` for the length of one command,
#: per thread and per context (a forked build worker inherits its build's run).
_ACTIVE: ContextVar[Run | None] = ContextVar("manifesto_run", default=None)


class _Active:
    __slots__ = ("run", "token")

    def __init__(self, run: Run) -> None:
        self.run = run
        self.token = None

    def __enter__(self) -> Run:
        self.token = _ACTIVE.set(self.run)
        return self.run

    def __exit__(self, *exc) -> None:
        _ACTIVE.reset(self.token)


def warn_once(line: str) -> None:
    """Say ``line`` on stderr once in the active run; outside any run (a library call that did
    not make one), every time it is found."""
    run = _ACTIVE.get()
    if run is None:
        import sys

        print(line, file=sys.stderr)
    else:
        run.once(line)


def say_warnings(outcome):
    """Say an outcome's warnings (``tasks.core.Outcome.warnings``: data the tasks found, never
    written by them; or loading's, on ``load.inputs.Loaded`` or on the ManifestoError it raised)
    once each in the active run; returns ``outcome``. The entry points that run a task or load
    an input call this: what is found is data, what is said is the caller's."""
    for line in getattr(outcome, "warnings", ()):
        warn_once(line)
    return outcome


def quiet() -> bool:
    """Whether the active run was given -q: only data (stdout) and errors are printed, so the
    notes of :func:`note` and a command's progress lines (kubectl's "created", "deleted") are not."""
    run = _ACTIVE.get()
    return run is not None and run.quiet


def note(line: str) -> None:
    """A line for the person at the terminal (stderr), silenced by -q in the active run."""
    if not quiet():
        import sys

        print(line, file=sys.stderr)
