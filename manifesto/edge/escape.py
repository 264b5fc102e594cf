"""Text leaving the process, escaped for the place it goes.

- :func:`terminal`: one line for a terminal or a log: no control character (ESC, CR, line
  breaks), no format character (bidi overrides, zero-width) survives unescaped.
- :func:`md_code` / :func:`md_text`: a pull-request comment (CommonMark/GFM). Text derived
  from specs, artifacts or file names goes inside a code span (``md_code``), where no link,
  image, HTML, emphasis or mention can form and a table's ``|`` is escaped; ``md_text``
  escapes every ASCII punctuation character for prose that must stay outside a code span.
- :func:`shell_word`: one word a shell reads back as exactly ``text`` (completion
  candidates, ``regen --print-command``).
"""

from __future__ import annotations

from manifesto.errors import printable

__all__ = ["terminal", "hide", "lines", "md_code", "md_text", "shell_word", "SAFE_SHELL"]


def terminal(text: str, limit: int = 0, secrets: tuple[str, ...] = ()) -> str:
    """``text`` as one printable line (line breaks escaped too), cut to ``limit`` characters
    (0: no cut) with a visible mark; every one of ``secrets`` (a bearer token) shown as
    ``***``, before and after escaping and before the cut (no part of one survives it)."""
    text = hide(printable(hide(str(text), secrets)), secrets)
    if limit and len(text) > limit:
        return text[: max(limit - 3, 0)] + "..."
    return text


def hide(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every occurrence of each of ``secrets`` (non-empty) replaced by ``***``,
    in any letter case (a host name a server echoes it in comes back in lower case)."""
    for secret in secrets:
        if secret:
            import re

            text = re.sub(re.escape(secret), "***", text, flags=re.IGNORECASE)
    return text


def lines(text: str) -> str:
    """``text`` for a terminal, keeping its line breaks and tabs but no other control."""
    return printable(str(text), keep="\n\t")


def md_code(text: str) -> str:
    """``text`` as an inline code span that is safe in a GFM table cell.

    Line breaks and other controls are escaped first (a code span cannot hold them and a
    table row ends at a line break); the fence is one backtick longer than the longest run
    inside; ``|`` is escaped because GFM splits table cells before it parses code spans.
    """
    body = printable(str(text)).replace("|", "\\|")
    run = longest = 0
    for ch in body:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    if not body:
        return "` `"
    if body[0] in "` " or body[-1] in "` ":
        body = f" {body} "
    return f"{fence}{body}{fence}"


_MD_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def md_text(text: str) -> str:
    """``text`` as inert markdown prose: every ASCII punctuation character backslash-escaped
    (so no emphasis, link, image, HTML tag or autolink forms), ``@`` written as ``&#64;``
    (GitHub does not turn an entity into a mention), controls escaped."""
    out = []
    for ch in printable(str(text)):
        if ch == "@":
            out.append("&#64;")
        elif ch in _MD_PUNCT:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


SAFE_SHELL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def shell_word(text: str) -> str:
    """``text`` quoted for bash and zsh: bare when every character is safe,
    else in single quotes (a single quote inside closes, escapes and reopens them)."""
    text = str(text)
    if text and all(ch in SAFE_SHELL for ch in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"
