"""Check vLLM arguments and ``VLLM_*`` variables against the table of the release that will run.

Pure: the table (``manifesto.schema.runtime.VllmTable``) is passed in. Each check finds every
problem, each error placed on the field that caused it (``*_errors`` return them, ``check_*``
raise them together), so a spec with three misspelled arguments is fixed in one run.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from manifesto.errors import did_you_mean, show_value
from manifesto.resolve.failures import Where, fail, raise_all

__all__ = ["vllm_version", "check_vllm_mapping", "check_raw_args", "check_env", "check_flag_words", "problem",
           "present_flags", "vllm_mapping_errors", "raw_args_errors", "env_errors", "flag_word_problems"]

_IMAGE = re.compile(r"^(?:[^/]+/)*vllm-openai(?:-[a-z0-9]+)?:v?(?P<v>\d+\.\d+\.\d+)(?:[-+][\w.]+)?$")
_SIZE = re.compile(r"^\d+(?:\.\d+)?[kKmMgGtT]$")
_INDEX: dict[tuple[str, str], dict[str, Any]] = {}
# After-parse lists that a plugin flag extends with names of its own.
_PLUGINS = {"tool-call-parser": "tool-parser-plugin", "reasoning-parser": "reasoning-parser-plugin"}


def vllm_version(image: str) -> str | None:
    """``vllm/vllm-openai:v0.33.0`` -> ``0.33.0``; None for an image whose release is unknown."""
    m = _IMAGE.match(image)
    return m.group("v") if m else None


def _index(table) -> dict[str, Any]:
    """Option string -> arg, for every option the release's parser accepts."""
    key = (table.vllm, table.source)
    found = _INDEX.get(key)
    if found is None:
        found = {opt: arg for arg in table.args for opt in arg.options}
        _INDEX[key] = found
    return found


def _key_of(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def _unknown(table, flag: str, written: str) -> str:
    if flag in table.removed:
        return f"--{flag} is not an argument of vLLM {table.vllm}: {table.removed[flag]}"
    from manifesto.resolve.args import owned_flag

    longs = sorted({_key_of(o) for o in _index(table) if o.startswith("--")})
    hint = did_you_mean(_key_of(written), longs)
    owner = owned_flag(hint[len(" (did you mean '"):-len("'?)")].replace("_", "-")) if hint else None
    if owner:  # the near name is one Manifesto derives: point at the field that sets it
        hint = hint[:-1] + f" Manifesto sets it from {owner})"
    return f"vLLM {table.vllm} has no argument --{flag}{hint}"


def _deprecated(table, arg, flag: str) -> str:
    dep = arg.deprecated
    use = f"; use {dep.replacement} instead" if dep.replacement else ""
    return f"--{flag} is deprecated in vLLM {table.vllm} ({dep.message}){use}"


def _interval(bounds: dict) -> str:
    if ("gt" in bounds or "ge" in bounds) and ("lt" in bounds or "le" in bounds):
        lo = f"({_num(bounds['gt'])}" if "gt" in bounds else f"[{_num(bounds['ge'])}"
        hi = f"{_num(bounds['lt'])})" if "lt" in bounds else f"{_num(bounds['le'])}]"
        return f"in {lo}, {hi}"
    sym = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
    return " and ".join(f"{sym[k]} {_num(v)}" for k, v in bounds.items())


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _in_bounds(x: float, b: dict) -> bool:
    return (("gt" not in b or x > b["gt"]) and ("ge" not in b or x >= b["ge"])
            and ("lt" not in b or x < b["lt"]) and ("le" not in b or x <= b["le"]))


def _number(arg, value):
    """(number or None, problem or None) for a value of an int/float/size argument. A string is
    read as vLLM reads the command line: a quoted "0.9" is the number 0.9."""
    t = arg.type
    whole = "a number" if t == "float" else "a whole number"
    if isinstance(value, str):
        text = value.strip()
        if t in ("size", "size_or_auto") and (_SIZE.match(text) or (t == "size_or_auto" and text.lower() == "auto")):
            return None, None
        try:
            value = float(text) if t == "float" else int(text)
        except ValueError:
            sized = " or a size such as 32k" if t in ("size", "size_or_auto") else ""
            return None, f"takes {whole}{sized}, found {show_value(value)}"
    if isinstance(value, (dict, list, bool)):
        return None, f"takes {whole}, found {show_value(value)}"
    if t != "float" and isinstance(value, float):
        return None, f"takes a whole number, found {show_value(value)}"
    return value, None


def problem(table, arg, value, present: frozenset = frozenset()) -> str | None:
    """What is wrong with ``value`` (from YAML, or command-line text) for a value-taking ``arg``, or None."""
    if arg.optional and value in ("", "None"):
        return None
    if isinstance(value, str) and "$" in value:  # expanded by the launch shell: unknown here
        return None
    num = None
    if arg.type in ("int", "float", "size", "size_or_auto"):
        num, why = _number(arg, value)
        if why:
            return why
    elif arg.type == "json" and not isinstance(value, (dict, list)):
        try:
            json.loads(value if isinstance(value, str) else json.dumps(value))
        except ValueError:
            return f"takes JSON, found {show_value(value)}"
    text = None if isinstance(value, (dict, list)) else str(value)
    if arg.choices and text is not None and text not in arg.choices:
        return f"takes one of {', '.join(arg.choices)}, found {show_value(value)}{did_you_mean(text, arg.choices)}"
    allowed = table.after_parse.get(arg.name)
    if allowed and text is not None and _PLUGINS.get(arg.name) not in present:
        if not (arg.name == "reasoning-parser" and text.lower() in ("", "none")) and text not in allowed:
            return (f"takes one of {', '.join(allowed)} in vLLM {table.vllm}, found {show_value(value)}"
                    f"{did_you_mean(text, allowed)}")
    if num is not None and arg.bounds and not _in_bounds(num, arg.bounds):
        if arg.type == "size_or_auto" and num == -1:
            return None
        return f"takes a value {_interval(arg.bounds)} in vLLM {table.vllm}, found {show_value(value)}"
    return None


def _check_one(table, key: str, value, present: frozenset) -> str | None:
    """The problem with one ``vllm:`` key (snake or kebab case, ``a.b`` for a JSON sub-key)."""
    from manifesto.resolve.args import flag_name, owned_flag

    name = flag_name(key)
    head, dot, _ = name.partition(".")
    owner = owned_flag(name)
    if owner:  # as to_args words it, so that it is reported with the others
        return f"--{name} is set by Manifesto; configure it through {owner}"
    arg = _index(table).get("--" + head)
    if arg is None:
        return _unknown(table, head, key.partition(".")[0])
    if arg.deprecated:
        return _deprecated(table, arg, head)
    if dot:
        return None if arg.type == "json" else f"--{head} is not a JSON config, so it has no sub-key {name[len(head) + 1:]!r}"
    if value is None or value is False:
        return None
    if arg.kind in ("flag", "onoff"):
        if value is True:
            return None
        neg = f", or no_{key.replace('-', '_')}: true for --no-{head}" if arg.kind == "onoff" and \
            f"--no-{head}" in arg.options else ""
        return f"--{head} is a switch: write true to pass it (false leaves it out{neg}), found {show_value(value)}"
    if value is True:
        return None if arg.nargs in ("?", "*") else f"--{head} takes a value, and true would pass it bare"
    why = problem(table, arg, value, present=present)
    return f"--{head} {why}" if why else None


def vllm_mapping_errors(table, mapping: dict, where: Where, base: tuple, present: frozenset) -> list:
    """One error per bad key or value of a ``vllm:`` (or ``computed.vllm``) mapping."""
    out = []
    for key, value in mapping.items():
        why = _check_one(table, str(key), value, present)
        if why:
            out.append(fail(why, where, base + (key,)))
    return out


def check_vllm_mapping(table, mapping: dict, where: Where, base: tuple, present: frozenset) -> None:
    """Every key and value of a ``vllm:`` (or ``computed.vllm``) mapping; all problems at once."""
    raise_all(vllm_mapping_errors(table, mapping, where, base, present))


def raw_args_errors(table, raw: list[str], where: Where, base: tuple, present: frozenset) -> list:
    """One error per bad ``--flag`` (or value) of the ``vllm_raw_args`` entries."""
    out = []
    for i, text in enumerate(raw):
        try:
            words = shlex.split(text)
        except ValueError:
            continue  # the launch script's own quoting check reports it
        out += [fail(why, where, base + (i,)) for why in flag_word_problems(table, words, present, skip_owned=True)]
    return out


def check_raw_args(table, raw: list[str], where: Where, base: tuple, present: frozenset) -> None:
    """Every ``--flag`` (and its value) of the ``vllm_raw_args`` entries; all problems at once."""
    raise_all(raw_args_errors(table, raw, where, base, present))


def check_flag_words(table, words: list[str], present: frozenset = frozenset(), skip_owned: bool = False) -> str | None:
    """The first problem in a ``vllm serve`` argument list (flags and values as the shell passes them).
    ``skip_owned``: leave flags Manifesto derives to ``to_args``, which names the field to use."""
    found = flag_word_problems(table, words, present, skip_owned)
    return found[0] if found else None


def flag_word_problems(table, words: list[str], present: frozenset = frozenset(),
                       skip_owned: bool = False) -> list[str]:
    """Every problem in a ``vllm serve`` argument list, in order (see :func:`check_flag_words`)."""
    from manifesto.resolve.args import _SHORT, owned_flag

    out: list[str] = []
    index = _index(table)
    words = _expand_o(words)
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-") or word in ("-", "--") or re.match(r"^-\d", word):
            continue
        flag, eq, inline = word.partition("=")
        if flag.startswith("--"):
            flag = "--" + flag[2:].split(".", 1)[0].replace("_", "-")
        if skip_owned and owned_flag(_SHORT.get(flag, flag[2:])):
            if not eq and i < len(words) and not words[i].startswith("-"):
                i += 1
            continue
        arg = index.get(flag)
        if arg is None:
            out.append(_unknown(table, flag.lstrip("-"), flag))
            continue  # its value, if any, is a word without dashes and is passed over
        if arg.deprecated:
            out.append(_deprecated(table, arg, flag.lstrip("-")))
            continue
        if arg.kind in ("flag", "onoff"):
            if eq:
                out.append(f"{flag} is a switch and takes no value, found {show_value(inline)}")
            continue
        values = [inline] if eq else []
        if not eq:
            while i < len(words) and not (words[i].startswith("--") or (words[i].startswith("-") and words[i] in index)):
                values.append(words[i])
                i += 1
                if arg.nargs not in ("+", "*"):
                    break
        if not values and arg.nargs not in ("?", "*"):
            out.append(f"{flag} takes a value")
            continue
        if "." in word.partition("=")[0]:
            continue  # --json-config.key=value: one key of a JSON config
        for value in values:
            why = problem(table, arg, value, present=present)
            if why:
                out.append(f"{flag} {why}")
                break
    return out


def _expand_o(words: list[str]) -> list[str]:
    """vLLM's parser reads ``-O3``, ``-O=3`` and ``-O 3`` as ``--optimization-level 3``."""
    out: list[str] = []
    for i, word in enumerate(words):
        if word.startswith("-O") and word != "-O":
            out += ["--optimization-level", word[3:] if word[2:3] == "=" else word[2:]]
        elif word == "-O" and i + 1 < len(words) and words[i + 1] in ("0", "1", "2", "3"):
            out.append("--optimization-level")
        else:
            out.append(word)
    return out


def env_errors(table, mapping: dict, where: Where, base: tuple) -> list:
    """One error per ``VLLM_*`` name that the release does not define (vLLM warns and ignores it)."""
    return [fail(f"vLLM {table.vllm} reads no variable {name}{did_you_mean(name, table.env)}; it would log "
                 f"'Unknown vLLM environment variable' and ignore it", where, base + (name,))
            for name in mapping if str(name).startswith("VLLM_") and name not in _env(table)]


def check_env(table, mapping: dict, where: Where, base: tuple) -> None:
    """``VLLM_*`` names that the release does not define; all of them at once."""
    raise_all(env_errors(table, mapping, where, base))


_ENV: dict[tuple[str, str], frozenset] = {}


def _env(table) -> frozenset:
    key = (table.vllm, table.source)
    if key not in _ENV:
        _ENV[key] = frozenset(table.env)
    return _ENV[key]


def present_flags(*mappings: dict, raw: list[str] = ()) -> frozenset:
    """Kebab names of every flag a role sets (plugin flags widen the after-parse lists)."""
    from manifesto.resolve.args import flag_name

    out = {flag_name(str(k)).split(".", 1)[0] for m in mappings for k, v in m.items() if v not in (None, False)}
    for text in raw:
        out.update(w[2:].split("=", 1)[0].replace("_", "-") for w in text.split() if w.startswith("--"))
    return frozenset(out)
