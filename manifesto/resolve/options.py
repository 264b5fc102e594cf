"""One definition of every render option.

``OPTIONS`` lists each option once, with everything any surface needs to know about it:
its field name and type, its flag spellings (the first is canonical, the rest aliases),
the environment variable that may supply it, its help, its grammar and bounds, whether
BUILD.yaml may set it, and whether a deployment target fixes it. Everything else is
generated from this table:

- the command-line flags (``cli.flags.add_option_flags`` makes them, for ``cli.common.spec_args``);
- the values read from flags, the environment and ``.env`` files (``from_sources``);
- the ``Options`` msgspec Struct (``resolve.plan.Options`` and
  ``manifesto.tasks.RenderOptions`` are this Struct);
- the fields the build keeps (``BUILD_FIELDS``, ``build_graph.renderer.OPTION_FIELDS``) and
  their BUILD.yaml validation (``build_value``);
- the provenance header's flags (``header_flags``);
- the argparse destinations a deployment target fixes (``fixed_dests``).

Every value passes ``check`` whatever its source, and the error names that source: a flag,
a variable (with ``.env:LINE`` when a settings file supplied it) or a BUILD.yaml position.

This module must stay cheap to import: the parser is built on every start-up, including
``--help``. msgspec is imported only when the Struct is first asked for.
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["Option", "OPTIONS", "FIELDS", "BUILD_FIELDS", "MAX_IDLE_MINUTES", "by_name", "check", "minutes",
           "env_origin", "value_of", "from_sources", "header_flags", "fixed_dests", "build_value", "Options"]

#: The longest idle timeout: a year of minutes.
MAX_IDLE_MINUTES = 365 * 24 * 60

#: Value kinds: one string, a repeatable string, a three-state switch (--x / --no-x /
#: neither), a duration read as whole minutes.
KINDS = ("str", "list", "switch", "minutes")


#: The fields of an Option, and the defaults of those after ``help``.
_OPTION_FIELDS = {
    "name": None,  # the field of the Options Struct
    "kind": None,  # one of KINDS
    "flags": None,  # canonical first; a switch's first is --x, its negation --no-x is derived
    "help": None,
    "metavar": None,
    "env": (),  # variables that supply it when no flag does, in order
    "check": None,  # the name of a checker of this module (_check_*), or None
    "build": True,  # BUILD.yaml may set it
    "fixed": True,  # a deployment target fixes it (its flag is refused with an address)
    "group": "render",  # "select": every spec command; "render": only commands that render
    "complete": None,  # a completion hint for the flag's value
    "required": False,  # BUILD.yaml: a render needs it
    "default": None,
    "always": False,  # the header names it even at its default
}


class Option(namedtuple("Option", tuple(_OPTION_FIELDS), defaults=tuple(_OPTION_FIELDS.values())[4:])):
    """One render option: its field and every way a user can set it (a record of
    ``_OPTION_FIELDS``: name, kind, flags and help, then keywords for the rest)."""

    __slots__ = ()

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def label(self) -> str:
        """How an error names the flag: every long spelling (``--accelerator/--gpu``)."""
        return "/".join(f for f in self.flags if f.startswith("--"))

    @property
    def dests(self) -> tuple[str, ...]:
        """The argparse destinations of its flags."""
        dest = self.flag.lstrip("-").replace("-", "_")
        return (dest, "no_" + dest) if self.kind == "switch" else (dest,)

    def __repr__(self) -> str:
        return f"Option({self.name!r})"


OPTIONS: tuple[Option, ...] = (
    Option("user", "str", ("--user",), "user for identity, labels and paths (default: $USER)",
           env=("USER", "LOGNAME"), check="segment", group="select", required=True, always=True),
    Option("namespace", "str", ("--namespace", "-n"), "namespace (default: MANIFESTO_NAMESPACE or the kube context's)",
           env=("MANIFESTO_NAMESPACE",), check="dns_label", group="select", required=True, default="default",
           always=True),
    Option("accelerator", "str", ("--accelerator", "--gpu"),
           "accelerator profile of the cluster (default: spec, then cluster default)", check="segment",
           group="select", complete="accelerators"),
    Option("vllm_env", "str", ("--vllm-env",),
           "absolute path of an existing vllm-envs worktree to run instead of the image's vLLM", check="abs_path"),
    Option("user_root", "str", ("--user-root",), "override the cluster's user root path", check="one_line"),
    Option("log_root", "str", ("--log-root",), "override the cluster's log root path", check="one_line"),
    Option("cache_root", "str", ("--cache-root",), "override the cluster's compiled-cache root path",
           check="one_line"),
    Option("pre_launch", "list", ("--pre-launch",), "shell command run before vLLM starts (repeatable)",
           metavar="CMD", check="text", default=()),
    Option("routing_profile", "str", ("--routing-profile",),
           "EPP routing profile name or path (default: MANIFESTO_ROUTING_PROFILE)", env=("MANIFESTO_ROUTING_PROFILE",),
           check="one_line", complete="routing"),
    Option("idle_shutdown", "switch", ("--idle-shutdown",),
           "add the idle-shutdown controller even when the spec turns it off|leave the idle-shutdown controller out"),
    Option("idle_timeout_minutes", "minutes", ("--idle-timeout",), "idle-shutdown timeout, e.g. 15m or 2h",
           metavar="DURATION"),
    Option("argocd_sync_waves", "switch", ("--argocd-sync-waves",),
           "annotate every object with its Argo CD sync wave: prerequisites, model servers, routing, monitoring "
           "(BUILD.yaml sets it on the deployment targets a gitops target covers)|leave Argo CD sync waves out"),
)

#: Field names, in the Struct's order.
FIELDS: tuple[str, ...] = tuple(o.name for o in OPTIONS)
#: The fields BUILD.yaml may set, in the order the build keeps them.
BUILD_FIELDS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.build)
_BY_NAME = {o.name: o for o in OPTIONS}
assert all(o.kind in KINDS for o in OPTIONS), [o.kind for o in OPTIONS]


def by_name(name: str) -> Option:
    return _BY_NAME[name]


# -- grammar and bounds -------------------------------------------------------------------

_MINUTES_PROBLEM = "expected a positive duration of at most a year, such as 15m, 2h or 90 (minutes)"


def minutes(value) -> int | None:
    """Whole minutes of a duration (``15m``, ``2h``, ``90s``, ``90``, or an int of minutes),
    from 1 to ``MAX_IDLE_MINUTES``; None when it is not one."""
    from manifesto.util.numbers import number

    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value <= MAX_IDLE_MINUTES else None
    if not isinstance(value, str):
        return None
    units = {"m": 1, "h": 60, "s": 1 / 60}
    t = value.strip().lower()
    factor = units.get(t[-1:], None)
    got = number(t[:-1] if factor is not None else t, low=0, high=MAX_IDLE_MINUTES, low_open=True)
    if got is None or got * (factor or 1) > MAX_IDLE_MINUTES:
        return None
    return max(1, round(got * (factor or 1)))


def _check_segment(text: str) -> str | None:
    from manifesto.util import rules

    return rules.path_segment(text)


def _check_dns_label(text: str) -> str | None:
    from manifesto.util import rules

    return rules.dns_label(text)


def _check_one_line(text: str) -> str | None:
    from manifesto.util import rules

    if not text:
        return "must not be empty"
    if "\n" in text or "\r" in text or "\t" in text:
        return "must be one line (no line breaks or tabs)"
    return rules.control_char(text)


def _check_abs_path(text: str) -> str | None:
    from manifesto.util import rules

    return _check_one_line(text) or rules.absolute_path(text)


def _check_text(text: str) -> str | None:
    from manifesto.util import rules

    return rules.control_char(text)


def check(option: Option, value) -> str | None:
    """What is wrong with one value of ``option`` (one item of a list), None when it is valid."""
    if option.kind == "minutes":
        return None if minutes(value) is not None else _MINUTES_PROBLEM
    if option.kind == "switch" or option.check is None:
        return None
    return globals()["_check_" + option.check](value)


def _refuse(origin: str, value, problem: str):
    from manifesto.errors import InputError, show_value

    sep = ": " if problem.startswith("expected") else " "
    raise InputError(f"{origin} {show_value(value)}{sep}{problem}")


def _checked(option: Option, value, origin: str):
    if value == "" and option.kind == "str":  # `--user "$USER"` where USER is unset, say
        from manifesto.errors import InputError

        example = ' (e.g. --user "$(id -un)")' if option.name == "user" else ""
        raise InputError(f"{origin} is empty: a shell variable that expanded to nothing? Give a value{example}")
    problem = check(option, value)
    if problem:
        _refuse(origin, value, problem)
    return value


def fixed_dests() -> tuple[str, ...]:
    """The argparse destinations of every option a deployment target fixes."""
    return tuple(d for o in OPTIONS if o.fixed for d in o.dests)


# -- reading the sources ------------------------------------------------------------------

def env_origin(env, var: str) -> str:
    """How to name variable ``var`` in an error: ``$USER``-style for the login variables,
    with ``.env:LINE`` when a settings file supplied it."""
    where = getattr(env, "where", None)
    place = where(var) if where else None
    name = f"${var}" if var in ("USER", "LOGNAME") else var
    return f"{place}: {name}" if place else name


def value_of(option: Option, given, env, fallback=None):
    """One option's value: the flag's (``given``), else the first of its variables set in
    ``env``, else ``fallback`` ((how to name it, a function returning the value or None)),
    else its default; checked, an error naming the source."""
    if given is not None:
        if option.kind == "list":
            return [_checked(option, v, option.label) for v in given]
        if option.kind == "minutes":
            got = minutes(given)
            if got is None:
                _refuse(option.label, given, _MINUTES_PROBLEM)
            return got
        return _checked(option, given, option.label)
    for var in option.env:
        if env.get(var):
            return _checked(option, env[var], env_origin(env, var))
    if fallback is not None:
        label, read = fallback
        value = read()
        if value:
            return _checked(option, value, label)
    return list(option.default) if option.kind == "list" else option.default


def from_sources(args, env, fallbacks: dict | None = None) -> dict:
    """Every option as plain data from parsed flags (``args``), then the variables in ``env``
    (the process environment over ``.env`` files), then ``fallbacks`` (by name: (how to name
    it, a function)); each value checked, an error naming its source."""
    out = {}
    for o in OPTIONS:
        if o.kind == "switch":
            dest, no = o.dests
            out[o.name] = False if getattr(args, no, False) else (True if getattr(args, dest, False) else None)
        else:
            out[o.name] = value_of(o, getattr(args, o.dests[0], None), env, (fallbacks or {}).get(o.name))
    return out


# -- BUILD.yaml ---------------------------------------------------------------------------

def build_value(option: Option, value):
    """``value`` of ``option`` as BUILD.yaml wrote it, normalised (a list becomes a tuple, a
    duration whole minutes); raises ValueError with the problem (the caller adds the place)."""
    from manifesto.errors import show_value

    if option.kind == "switch":
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {show_value(value)}")
        return value
    if option.kind == "minutes":
        got = minutes(value)
        if got is None:
            raise ValueError(f"{show_value(value)}: {_MINUTES_PROBLEM}")
        return got
    items = [value] if option.kind == "list" and isinstance(value, str) else value
    if option.kind == "list":
        if not isinstance(items, list):
            raise ValueError(f"expected a string or a list of strings, got {show_value(value)}")
    else:
        items = [value]
    for item in items:
        if not isinstance(item, str) or not item.strip() or item != item.strip():
            raise ValueError(f"expected a non-empty string without surrounding spaces, got {show_value(item)}")
        problem = check(option, item)
        if problem:
            raise ValueError(f"{show_value(item)} {problem}")
    return tuple(items) if option.kind == "list" else value


# -- the provenance header ----------------------------------------------------------------

def header_flags(options) -> list[str]:
    """Shell words for every option that differs from the CLI default (the routing profile,
    inlined as a heredoc by the header, is left out)."""
    import shlex

    words: list[str] = []
    for o in OPTIONS:
        if o.name == "routing_profile":
            continue
        value = getattr(options, o.name)
        if o.kind == "switch":
            if value is not None:
                words.append(o.flag if value else "--no-" + o.flag[2:])
        elif o.kind == "list":
            for item in value:
                words += [o.flag, item]
        elif o.kind == "minutes":
            if value is not None:
                words += [o.flag, f"{value}m"]
        elif value is not None or o.always:
            words += [o.flag, value]
    return [shlex.quote(w) for w in words]


# -- the Struct ---------------------------------------------------------------------------

def _struct():
    import msgspec

    fields = []
    for o in OPTIONS:
        kind = {"str": str | None, "list": tuple[str, ...], "switch": bool | None, "minutes": int | None}[o.kind]
        if o.name == "user":
            fields.append((o.name, str))
        elif o.name == "namespace":
            fields.append((o.name, str, o.default))
        else:
            fields.append((o.name, kind, o.default))
    return msgspec.defstruct("Options", fields, frozen=True, forbid_unknown_fields=True,
                             module="manifesto.resolve.options")


_made: dict[str, type] = {}


def __getattr__(name: str):
    """``Options``: the msgspec Struct of every option, built on first use (msgspec is too
    slow an import for ``--help``)."""
    if name != "Options":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if "Options" not in _made:
        cls = _struct()
        cls.__doc__ = "Edge inputs to resolution: read once by the CLI, or declared in BUILD.yaml."
        _made["Options"] = cls
    return _made["Options"]
