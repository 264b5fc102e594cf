"""Shell completion candidates, computed from the argparse tree.

The completion scripts (``manifesto completion SHELL``) run ``manifesto __complete SHELL
-- WORD... CURRENT`` for every value that names something (fish: for everything) and show
what it prints, the way kubectl's (Cobra's) completion works. So every shell completes the
same catalog names, build addresses and live IDs, straight from the parser that parses the
command line, and ``--flag=value`` and ``-n NS`` on the line are understood in one place.

Output: one candidate per line (``value<TAB>description`` for zsh and fish), then
``:files`` when the shell should also offer local paths for the current word. Candidates and
descriptions come from outside (file names, BUILD.yaml, ``kubectl`` and ``squeue`` output), so
they leave through :mod:`manifesto.edge.escape`: a value that is not printable is dropped, a
description is one escaped line, and a value is quoted the way its shell inserts it. bash puts
a candidate on the line as printed, so it gets a shell word (``'$(touch x)'``), or the inside
of the quote the user opened; zsh (``compadd``) and fish quote what they insert themselves, so
they get the plain value (quoting it here would quote it twice).
"""

from __future__ import annotations

import argparse

__all__ = ["candidates", "main"]

from manifesto.cli.hints import (  # noqa: F401
    ACCELERATORS, ADDRESSES, CLUSTERS, DEPLOYMENTS, ENTRIES, FILES, INSTANCES, MODELS, ROUTING, SLURM_JOBS)

#: A TAB must not hang on an unreachable API server: every live lookup ends within this
#: (seconds; MANIFESTO_COMPLETE_TIMEOUT sets it, up to MAX_LIVE_TIMEOUT, for a slow cluster).
LIVE_TIMEOUT = 0.8
MAX_LIVE_TIMEOUT = 30.0


def _live_timeout(env) -> float:
    """MANIFESTO_COMPLETE_TIMEOUT from the settings ``env``, else LIVE_TIMEOUT; a value that is
    not a number in (0, MAX_LIVE_TIMEOUT] is ignored (completion prints no errors)."""
    try:
        value = float(env.get("MANIFESTO_COMPLETE_TIMEOUT") or LIVE_TIMEOUT)
    except ValueError:
        return LIVE_TIMEOUT
    return value if 0 < value <= MAX_LIVE_TIMEOUT else LIVE_TIMEOUT


class _State:
    """Where the words before the current one leave the parser."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser
        self.pending: argparse.Action | None = None  # an option still waiting for its value
        self.npos = 0  # positional words given to the current (sub)parser
        self.only_positional = False  # after "--"
        self.values: dict[str, str] = {}  # option or positional dest -> last value given on the line


def _option(parser, text: str) -> tuple[argparse.Action | None, str | None]:
    """The option ``text`` names and a value attached to it (``--opt=v``, ``-nV``)."""
    name, eq, value = text.partition("=")
    action = parser._option_string_actions.get(name)
    if action is not None:
        return action, value if eq else None
    if not text.startswith("--") and len(text) > 2:
        action = parser._option_string_actions.get(text[:2])
        if action is not None and action.nargs != 0:
            return action, text[2:]
    return None, None


def _walk(parser, words: list[str]) -> _State:
    state = _State(parser)
    for word in words:
        if state.pending is not None:
            state.values[state.pending.dest] = word
            state.pending = None
        elif not state.only_positional and word == "--":
            state.only_positional = True
        elif not state.only_positional and word.startswith("-") and word != "-":
            action, value = _option(state.parser, word)
            if action is not None and action.nargs != 0:
                if value is None:
                    state.pending = action
                else:
                    state.values[action.dest] = value
        else:
            action = _positional(state.parser, state.npos)
            if isinstance(action, argparse._SubParsersAction) and word in action.choices:
                state.parser, state.npos = action.choices[word], 0
            else:
                if action is not None and not isinstance(action, argparse._SubParsersAction):
                    state.values[action.dest] = word  # config edit KIND NAME: NAME's kind is KIND
                state.npos += 1
    return state


def _positional(parser, index: int) -> argparse.Action | None:
    """The positional the ``index``-th positional word fills (a hidden one too: it takes words)."""
    for action in parser._actions:
        if action.option_strings:
            continue
        if action.nargs in ("*", "+", argparse.REMAINDER) or index == 0:
            return action
        index -= 1
    return None


def _options(parser, prefix: str) -> list[tuple[str, str]]:
    out = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue
        for opt in action.option_strings:
            if opt.startswith(prefix):
                out.append((opt, action.help or ""))
    return out


def _commands(action: argparse._SubParsersAction, prefix: str) -> list[tuple[str, str]]:
    helps = {a.dest: a.help or "" for a in action._choices_actions}
    return [(name, helps.get(name, "")) for name in action.choices if name.startswith(prefix)]


def _catalog(kind: str) -> list[tuple[str, str]]:
    from manifesto.load.catalog import entry_names

    found = entry_names(kind)
    if kind == CLUSTERS:  # the workspace's own profiles, which --cluster NAME finds first
        found = [(t.name, "workspace") for t in _workspace_targets() if t.kind == "cluster"] + found
    return found


def _entries(state: _State) -> list[tuple[str, str]]:
    """Catalog entries of the kind the command's KIND argument names (``config edit models NAME``)."""
    from manifesto.load.catalog import KINDS

    kind = state.values.get("kind")
    return _catalog(kind) if kind in KINDS else []


def _workspace_targets() -> list:
    """Every target of the workspace around the working directory (none outside one)."""
    from manifesto.build_graph import api
    from manifesto.errors import ManifestoError

    try:
        return api.list_targets(["//::"])
    except ManifestoError:
        return []


def _deployments(current: str) -> list[tuple[str, str]]:
    found = [(t.address, "deployment target") for t in _workspace_targets() if t.kind == "deployment"]
    if current and not current.startswith("/"):  # written without the leading //
        return [(a[2:], d) for a, d in found]
    return found


def _instances(state: _State) -> list[tuple[str, str]]:
    """Live instance IDs in the namespace and context the line names: one quick, unretried read."""
    import manifesto.cli.settings as cli_settings
    from manifesto.errors import ManifestoError
    from manifesto.ops.discovery import discover, group_by_instance
    from manifesto.ops.kubectl import Kube

    context = state.values.get("context")
    try:
        env = cli_settings.settings()
        namespace = cli_settings.pick_namespace(state.values.get("namespace"), env, context)
        kube = Kube(namespace=namespace, context=context, timeout=_live_timeout(env), retries=0)
        groups = group_by_instance(discover(kube))
    except ManifestoError:
        return []
    # a label that is not printable (a line break, an escape) is no word to put on a command line
    return [(name, f"live in {namespace}") for name in groups if name.isprintable()]


def _slurm_jobs(state: _State) -> list[tuple[str, str]]:
    """Your Manifesto jobs on the Slurm cluster the line (or MANIFESTO_CLUSTER) names: one quick squeue."""
    import manifesto.cli.settings as cli_settings
    from manifesto.cluster import load_cluster
    from manifesto.errors import ManifestoError
    from manifesto.ops import slurm

    try:
        env = cli_settings.settings()
        name = state.values.get("cluster") or env.get("MANIFESTO_CLUSTER")
        profile = load_cluster(name).profile.slurm if name else None
        call = slurm.servers_call(profile.ssh_host if profile else None)
        rows = slurm.parse_servers(slurm.run(call, timeout=_live_timeout(env)).stdout)
    except ManifestoError:
        return []
    return [(row["job"], f"{row['instance']} {row['state'].lower()}") for row in rows]


def _accelerators(state: _State) -> list[tuple[str, str]]:
    """Accelerator profiles of the cluster named on the line (or by MANIFESTO_CLUSTER)."""
    from manifesto.load.catalog import find
    import manifesto.cli.settings as cli_settings
    from manifesto.errors import ManifestoError
    from manifesto.load.yamlio import load_yaml

    name = state.values.get("cluster") or cli_settings.settings().get("MANIFESTO_CLUSTER")
    if not name:
        return []
    try:
        data, _ = load_yaml(find("clusters", name))
    except ManifestoError:
        return []
    accelerators = data.get("accelerators") if isinstance(data, dict) else None
    profiles = accelerators.get("profiles") if isinstance(accelerators, dict) else None
    default = accelerators.get("default") if isinstance(accelerators, dict) else None
    return [(str(n), "default" if n == default else "") for n in profiles or ()] if isinstance(profiles, dict) else []


def _addresses(current: str) -> list[tuple[str, str]]:
    """Build addresses: every target, and ``DIR:`` / ``DIR::`` for every directory above one."""
    from manifesto.build_graph import api
    from manifesto.errors import ManifestoError

    try:
        targets = api.list_targets(["//::"])
    except ManifestoError:
        return []
    found = {"//::": "every target"}
    for target in targets:
        found[target.address] = target.kind
        parts = target.dir.split("/") if target.dir else []
        for n in range(1, len(parts) + 1):
            directory = "/".join(parts[:n])
            found.setdefault(f"//{directory}:", "every target in the directory")
            found.setdefault(f"//{directory}::", "every target below the directory")
    if current and not current.startswith("/"):  # Pants-style addresses without the leading //
        return [(a[2:], d) for a, d in found.items() if a != "//::"]
    return list(found.items())


def _takes_targets(parser) -> bool:
    """Whether the command's SPEC may also be a deployment target (it has --build, or is stop)."""
    return "--build" in parser._option_string_actions or parser.prog.endswith(" stop")


def _values(action: argparse.Action, state: _State, current: str) -> tuple[list[tuple[str, str]], bool]:
    kind = getattr(action, "complete", None)
    found: list[tuple[str, str]] = [(str(c), "") for c in action.choices or ()
                                     if not isinstance(action, argparse._SubParsersAction)]
    found += list(getattr(action, "complete_words", ()))
    files = kind in (MODELS, CLUSTERS, ROUTING, FILES, ENTRIES)
    if kind == MODELS and not action.option_strings and _takes_targets(state.parser):
        found += _deployments(current)
    if kind in (MODELS, CLUSTERS, ROUTING):
        found += _catalog(kind)
    elif kind == ENTRIES:
        found += _entries(state)
    elif kind == INSTANCES:
        found += _instances(state)
    elif kind == ACCELERATORS:
        found += _accelerators(state)
    elif kind == SLURM_JOBS:
        found += _slurm_jobs(state) + _deployments(current)
    elif kind in (ADDRESSES, DEPLOYMENTS):
        found += _addresses(current) if kind == ADDRESSES else _deployments(current)
        files = current.startswith(".") or (current.startswith("/") and not current.startswith("//"))
    return found, files


def candidates(words: list[str]) -> tuple[list[tuple[str, str]], bool]:
    """(candidates with descriptions, whether to offer paths) for the last of ``words``."""
    from manifesto.cli.hints import fill
    from manifesto.cli.parser import command_word, get_parser

    *before, current = words or [""]
    word = command_word(before)
    parser = get_parser(word, alone=before[:1] == [word])
    fill(parser)
    state = _walk(parser, before)
    prefix = ""
    if state.pending is not None:
        action = state.pending
    elif not state.only_positional and current.startswith("-"):
        action, value = _option(state.parser, current)
        if action is None or value is None:
            return _options(state.parser, current), False
        prefix, current = current[: len(current) - len(value)], value
    else:
        action = _positional(state.parser, state.npos)
        if isinstance(action, argparse._SubParsersAction):
            return _commands(action, current), False
        if action is None:
            return (_options(state.parser, current) if not current else []), False
    if action.nargs == 0:
        return [], False
    found, files = _values(action, state, current)
    return [(prefix + value, desc) for value, desc in found if value.startswith(current)], files


def _bash_words(line: str) -> tuple[list[str], str]:
    """Split bash's COMP_LINE (up to the cursor) into words; the last is the one being completed.
    Also the quote the last word leaves open (``'``, ``"`` or "")."""
    import shlex

    lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    words: list[str] = []
    opened = ""
    try:
        words = list(lexer)
    except ValueError:  # an open quote: complete what is inside it
        for quote in ("'", '"'):
            try:
                words = shlex.split(line + quote)
                opened = quote
                break
            except ValueError:
                continue
    if (not line or line[-1].isspace()) and not opened:  # a blank inside an open quote is no word break
        words.append("")
    return words[1:], opened  # drop "manifesto"


def bash_word(text: str, opened: str = "") -> str | None:
    """``text`` as bash must find it on the line to read it back unchanged, typed after the
    quote the user opened (``opened``), or None when it cannot be written there safely."""
    from manifesto.edge.escape import shell_word

    if opened == "'":
        return text.replace("'", "'\\''")
    if opened == '"':
        if "!" in text:  # history expansion happens inside double quotes, and a backslash stays
            return None
        return "".join("\\" + ch if ch in '\\$`"' else ch for ch in text)
    return shell_word(text)


def main(argv: list[str]) -> int:
    """``__complete SHELL -- WORDS``; for bash the one word after ``--`` is COMP_LINE."""
    import os
    import sys

    from manifesto.edge.escape import terminal

    shell, words = (argv[0] if argv else "bash"), argv[1:]
    if words[:1] == ["--"]:
        words = words[1:]
    opened = ""
    if shell == "bash":
        words, opened = _bash_words(words[0] if words else "")
    try:
        found, files = candidates(words)
    except Exception:  # a completion must never print a traceback into the prompt
        return 0
    # bash replaces only the part of the word after its last COMP_WORDBREAKS character.
    cut = 0
    if shell == "bash" and words:
        breaks = os.environ.get("COMP_WORDBREAKS", "=:")
        cut = max((words[-1].rfind(c) + 1 for c in breaks if c in "=:"), default=0)
    seen, out = set(), []
    for value, desc in found:
        if value in seen or not value.isprintable():  # an escape or a line break is no word to offer
            continue
        seen.add(value)
        text = value[cut:]
        if shell == "bash":
            text = bash_word(text, opened) if text else text
            if text is not None:
                out.append(text)
        elif desc:
            out.append(f"{text}\t{terminal(' '.join(str(desc).split()), 160)}")
        else:
            out.append(text)
    if files:
        out.append(":files")
    try:
        sys.stdout.write("".join(line + "\n" for line in out))
        sys.stdout.flush()
    except BrokenPipeError:  # the shell stopped reading (a new key press)
        pass
    return 0
