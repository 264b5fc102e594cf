"""JSON from outside (a model's ``config.json``), under the bounds YAML inputs have.

:func:`loads` checks the text with :func:`manifesto.edge.limits.check_json` first (depth,
value count, whole numbers past Python's 4300-digit conversion limit: one pass, no
recursion), then decodes it with ``json``. ``NaN`` and ``Infinity`` read as ``json`` reads
them (non-finite floats): a Hugging Face ``config.json`` written by Python may hold them,
and every consumer checks the numbers it uses. A string holding a lone surrogate
(``"\\ud800"``) has no UTF-8 form and is refused. Errors say where (line:col) and why,
never what a value was: a ``config.json`` is not ours to print.
"""

from __future__ import annotations

import re
from typing import Any

from manifesto.edge.limits import MAX_TEXT_BYTES, check_json, size_problem
from manifesto.errors import InputError, Origin

__all__ = ["loads", "read_json"]

# A \u escape of a UTF-16 surrogate: the only way a decoded JSON string can hold one.
_SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F]"


def loads(text: str | bytes, name: str, *, error=InputError) -> Any:
    """The value of the JSON document ``text`` (bytes are strict UTF-8); ``name`` is how errors
    name it, ``error`` the ManifestoError class they are raised as."""
    import json

    if isinstance(text, (bytes, bytearray)):
        from manifesto.edge.files import decode

        problem = size_problem(len(text), "a JSON input")
        if problem:
            raise error(problem, Origin(name))
        text = decode(bytes(text), name, error=error)
    elif len(text) > MAX_TEXT_BYTES:
        raise error(size_problem(len(text.encode("utf-8", "surrogatepass")), "a JSON input") or "too large",
                    Origin(name))
    check_json(text, name, error=error)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:  # its message names the problem, never the value
        raise error(f"not valid JSON: {exc.msg}", Origin(name, exc.lineno, exc.colno)) from None
    except (ValueError, RecursionError) as exc:  # not reached after check_json; one line if it were
        raise error(f"not valid JSON ({type(exc).__name__})", Origin(name)) from None
    if "\\u" in text and re.search(_SURROGATE_ESCAPE, text):
        _refuse_surrogates(data, name, error)
    return data


def read_json(path, name: str, roots: tuple[str, ...] = (), *, error=InputError) -> Any:
    """The value of the JSON file ``path``, read with ``manifesto.edge.files`` (confined to
    ``roots`` when given, regular files only, bounded, strict UTF-8)."""
    from manifesto.edge.files import read_bytes

    return loads(read_bytes(path, name, roots, what="JSON file", error=error), name, error=error)


def _refuse_surrogates(data: Any, name: str, error) -> None:
    """Refuse a key or string holding a lone surrogate (walked with a stack: no recursion)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise error("a string holds a lone UTF-16 surrogate (\\ud800 to \\udfff); it has no UTF-8 form",
                            Origin(name)) from None
