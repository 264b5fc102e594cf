"""A small, fast, deterministic YAML writer for plain data (dict/list/str/int/float/bool/None).

Mappings keep their insertion order (renderers build them in a fixed order), strings
are quoted whenever a YAML 1.1 or 1.2 reader could take them for anything but a
string, and multi-line strings become literal blocks so scripts stay readable.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

__all__ = ["dump_yaml", "dump_all", "dump_parts"]

_PLAIN = re.compile(r"^[A-Za-z0-9_./$(][^:#]*$|^[A-Za-z0-9_./][A-Za-z0-9_./:=+-]*$")
# Words YAML 1.1 or 1.2 reads as null, a boolean or a merge/value key (matched whole: a
# string holding a line break never gets this far).
_RESERVED = frozenset(("~ null Null NULL true True TRUE false False FALSE yes Yes YES no No NO on On ON off Off OFF "
                       "y Y n N = <<").split())
_NUMBERISH = re.compile(
    r"^[-+]?(?:\.?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|0[bB][01_]+"
    r"|\.(?:inf|Inf|INF|nan|NaN|NAN)|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$"
)
_DATEISH = re.compile(r"^[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?")
# Characters a YAML reader would not read back as written: C0 controls but tab and line feed,
# DEL, C1 controls (NEL is a line break to YAML 1.1), line/paragraph separators and the BOM.
# Inputs refuse them; the writer still escapes them, as a second line of defence.
# Format characters (zero-width, bidi), lone surrogates and the non-characters U+FFFE/U+FFFF
# are escaped as well: a reader would keep them, but a reviewer would not see them.
_UNSAFE_CLASS = ("\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e"
                 "\u2028\u2029\u2060-\u206f\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff")
# The same class for ASCII text (nearly every string), which compiles in a tenth of the time.
_UNSAFE_ASCII = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


@lru_cache(maxsize=None)
def _pattern(chars: str) -> re.Pattern:
    return re.compile(f"[{chars}]")


def _unsafe(s: str) -> bool:
    """Whether ``s`` holds a character of ``_UNSAFE_CLASS``."""
    return (_UNSAFE_ASCII if s.isascii() else _pattern(_UNSAFE_CLASS)).search(s) is not None


def _escaped(s: str) -> str:
    """``s`` as a JSON string, with the unsafe characters JSON leaves as they are escaped too."""
    not_json_escaped = _UNSAFE_CLASS.replace("\x00-\x08\x0b-\x1f", "")
    return _pattern(not_json_escaped).sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(s, ensure_ascii=False))


def _scalar(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write a {type(value).__name__} as YAML: {value!r}")
    return _string(value)


def _float(value: float) -> str:
    """A float every reader reads back as that float: YAML 1.1 (PyYAML) needs a dot before
    the exponent (``1.0e-05``, not ``1e-05``) and spells infinities and NaN ``.inf``/``.nan``."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "e" in text and "." not in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}.0e{exp}"
    return text


_STRINGS: dict[str, str] = {}


def _string(s: str) -> str:
    """The YAML form of ``s``; memoised, since keys and label values repeat across documents."""
    out = _STRINGS.get(s)
    if out is None:
        out = _quote(s)
        if len(_STRINGS) < 65536:
            _STRINGS[s] = out
    return out


def _quote(s: str) -> str:
    if "\t" in s or _unsafe(s):
        return _escaped(s)
    if (
        s
        and "\n" not in s  # '$' in _PLAIN also matches before a final line feed
        and _PLAIN.match(s)
        and not s.startswith(("---", "..."))  # document markers at column 0
        and s not in _RESERVED
        and not _NUMBERISH.match(s)
        and not _DATEISH.match(s)
        and s[-1] != " "
        and " #" not in s
        and ": " not in s
        and not s.endswith(":")
    ):
        return s
    return json.dumps(s, ensure_ascii=False)


_BLOCKS: dict[tuple[str, str], str | None] = {}
#: Characters the memo of literal blocks may hold (its keys and values): a few megabytes.
_BLOCKS_ROOM = [4 << 20]


def _block(s: str, indent: str) -> str | None:
    """A literal block for a multi-line string, or None when one cannot hold it exactly;
    memoised: a build writes the same scripts and configuration files into thousands of
    artifacts (the lookup hashes a string once: Python keeps a string's hash)."""
    key = (s, indent)
    out = _BLOCKS.get(key, False)
    if out is False:
        out = _make_block(s, indent)
        size = 2 * len(s)
        if size <= _BLOCKS_ROOM[0]:
            _BLOCKS_ROOM[0] -= size
            _BLOCKS[key] = out
    return out


def _make_block(s: str, indent: str) -> str | None:
    if not indent or "\n" not in s or s[0] in " \n" or "\r" in s or _unsafe(s) or "\t" in s.split("\n", 1)[0][:1]:
        return None
    if s.endswith("\n\n"):
        return None
    chomp = "" if s.endswith("\n") else "-"
    body = s[:-1] if s.endswith("\n") else s
    lines = [(indent + line) if line else "" for line in body.split("\n")]
    return f"|{chomp}\n" + "\n".join(lines)


def _emit(value, indent: str, out: list[str]) -> None:
    """Append the lines for a mapping or sequence value at ``indent``.

    The common values (plain str, int, bool, None; non-empty dict and list) are written
    inline here rather than through ``_inline``: a build writes hundreds of thousands of them.
    """
    strings = _STRINGS
    if isinstance(value, dict):
        deeper = indent + "  "
        for key, item in value.items():
            k = strings.get(key) if type(key) is str else None
            if k is None:
                k = _string(key if isinstance(key, str) else str(key))  # keys are written as their text
            kind = type(item)
            if kind is str and "\n" not in item:
                text = strings.get(item)
                out.append(f"{indent}{k}: {_string(item) if text is None else text}")
            elif kind is dict and item:
                out.append(f"{indent}{k}:")
                _emit(item, deeper, out)
            elif kind is list and item:
                out.append(f"{indent}{k}:")
                _emit(item, indent, out)
            elif item is None or kind is bool or kind is int:
                out.append(f"{indent}{k}: {_scalar(item)}")
            elif isinstance(item, dict) and item:
                out.append(f"{indent}{k}:")
                _emit(item, deeper, out)
            elif isinstance(item, list) and item:
                out.append(f"{indent}{k}:")
                _emit(item, indent, out)
            else:
                out.append(f"{indent}{k}: {_inline(item, deeper)}")
        return
    cut = len(indent) + 2
    for item in value:
        kind = type(item)
        if kind is str and "\n" not in item:
            text = strings.get(item)
            out.append(f"{indent}- {_string(item) if text is None else text}")
        elif isinstance(item, (dict, list)) and item:
            sub: list[str] = []
            _emit(item, indent + "  ", sub)
            out.append(f"{indent}- {sub[0][cut:]}")
            out.extend(sub[1:])
        else:
            out.append(f"{indent}- {_inline(item, indent + '  ')}")


def _inline(value, indent: str) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    if isinstance(value, str) and "\n" in value:
        block = _block(value, indent)
        if block is not None:
            return block
    return _scalar(value)


def dump_yaml(value) -> str:
    """One YAML document (no ``---``), ending in a newline."""
    if not isinstance(value, (dict, list)) or not value:
        return _inline(value, "") + "\n"
    out: list[str] = []
    _emit(value, "", out)
    return "\n".join(out) + "\n"


def dump_all(docs) -> str:
    """Several documents, each introduced by ``---``."""
    return "".join("---\n" + dump_yaml(d) for d in docs)


def dump_parts(value: dict) -> list[tuple]:
    """A non-empty mapping's document as ``(key, text)`` parts, one per top-level key, whose
    texts joined are ``dump_yaml(value)``: a caller can rewrite one part without writing the
    others again."""
    parts = []
    for key, item in value.items():
        out: list[str] = []
        _emit({key: item}, "", out)
        parts.append((key, "\n".join(out) + "\n"))
    return parts
