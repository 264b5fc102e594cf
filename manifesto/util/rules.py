"""Grammars a value must follow before it may reach a Kubernetes object or a shell script.

Each checker takes a string and returns ``None`` when it is valid, else a short phrase
saying what is wrong (``"must be at most 63 characters (it has 70)"``). Callers add the
origin. The same rules back the schema fields, resolution checks and the post-render
check of every object, so a value cannot pass one layer and fail the next.

Kubernetes rules follow apimachinery's ``validation`` package (DNS-1123 label and
subdomain, DNS-1035 label, qualified names for label and annotation keys, label values,
IANA service names for ports). Environment variable names are stricter than Kubernetes
requires: the same names are exported by the Slurm batch script, so they must be shell
identifiers.
"""

from __future__ import annotations

import re

__all__ = [
    "INT32_MAX", "control_char", "dns_label", "dns1035_label", "dns_subdomain", "qualified_name",
    "label_value", "env_name", "port_name", "path_segment", "absolute_path", "resource_name",
    "slurm_word", "slurm_constraint", "slurm_time", "slurm_gres", "host_name", "vllm_flag_key",
    "shell_fragment", "one_word", "bind_path", "ascii_digits",
]

INT32_MAX = 2**31 - 1


class _Pattern:
    """A regular expression compiled on first use: every command imports these rules, and most
    use two or three of them (compiling all of them cost a warm render 2 ms)."""

    __slots__ = ("source", "compiled")

    def __init__(self, source: str) -> None:
        self.source, self.compiled = source, None

    def _regex(self) -> re.Pattern:
        if self.compiled is None:
            self.compiled = re.compile(self.source)
        return self.compiled

    def match(self, text: str):
        return self._regex().match(text)

    def search(self, text: str):
        return self._regex().search(text)


#: The longest hash the StatefulSet controller appends to a StatefulSet's name in its pods'
#: label ``controller-revision-hash`` (an FNV-32a sum in decimal, safe-encoded: up to 10
#: characters). Seen on kube-controller-manager v1.37.2 (tests/cluster): a 53-character
#: StatefulSet's pods got a 9-character hash, a 54-character one's were refused with 10.
REVISION_HASH = 10

_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS_LABEL = _Pattern(rf"^{_LABEL}\Z")
_DNS1035 = _Pattern(r"^[a-z](?:[-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN = _Pattern(rf"^{_LABEL}(?:\.{_LABEL})*\Z")
_NAME_PART = _Pattern(r"^[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")
_ENV = _Pattern(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_PORT_NAME = _Pattern(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\Z")
_SEGMENT = _Pattern(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z")
# C0 controls except tab and line feed, DEL, C1 controls, and the Unicode line/paragraph
# separators and BOM, which YAML readers treat as breaks or strip.
_CONTROL = _Pattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
_CONTROL_ASCII = _Pattern("[\x00-\x08\x0b-\x1f\x7f]")  # the same for ASCII text, quicker to compile

_DNS_WORDS = "lowercase letters, digits and '-', starting and ending with a letter or digit"


def control_char(text: str) -> str | None:
    """Characters no input string may hold: controls (above), and invisible format
    characters (Unicode category Cf: zero-width spaces and joiners, bidi overrides and
    isolates, soft hyphens...) and lone surrogates. Format characters make a name look like
    another (``qwen3-0.6b`` + U+200B) or reorder what a reviewer reads (Trojan Source)."""
    m = (_CONTROL_ASCII if text.isascii() else _CONTROL).search(text)
    if m:
        return f"contains the control character U+{ord(m.group()):04X}"
    if text.isascii():
        return None
    import unicodedata

    for c in text:
        kind = unicodedata.category(c)
        if kind == "Cf":
            return f"contains the invisible format character U+{ord(c):04X} ({unicodedata.name(c, 'unnamed')})"
        if kind == "Cs":
            return f"contains the lone surrogate U+{ord(c):04X}"
    return None


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is one or more ASCII digits (``"١٢".isdigit()`` and ``"²".isdigit()`` are true)."""
    return text.isascii() and text.isdigit()


def _too_long(text: str, limit: int) -> str | None:
    return f"must be at most {limit} characters (it has {len(text)})" if len(text) > limit else None


def dns_label(text: str) -> str | None:
    """A DNS-1123 label: most object names, namespaces, container and volume names."""
    if not _DNS_LABEL.match(text):
        return f"must be a DNS label: {_DNS_WORDS}"
    return _too_long(text, 63)


def dns1035_label(text: str) -> str | None:
    """A DNS-1035 label: Service names (a label that starts with a letter)."""
    if not _DNS1035.match(text):
        return f"must be a DNS-1035 label: {_DNS_WORDS}, starting with a letter"
    return _too_long(text, 63)


def dns_subdomain(text: str) -> str | None:
    """A DNS-1123 subdomain: ConfigMap, Secret, claim and class names."""
    if not _SUBDOMAIN.match(text):
        return f"must be a DNS subdomain: dot-separated parts of {_DNS_WORDS}"
    return _too_long(text, 253)


def qualified_name(text: str) -> str | None:
    """A label or annotation key: ``[prefix/]name``, prefix a DNS subdomain, name <= 63."""
    prefix, slash, name = text.rpartition("/")
    if slash and (not prefix or dns_subdomain(prefix)):
        return f"has an invalid prefix '{prefix}': it must be a DNS subdomain such as example.com"
    if not _NAME_PART.match(name):
        return ("must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, "
                "'-', '_' or '.', starting and ending with a letter or digit")
    long = _too_long(name, 63)
    return f"name part '{name}' {long}" if long else None


def label_value(text: str) -> str | None:
    if text and not _NAME_PART.match(text):
        return ("must be a label value: empty, or letters, digits, '-', '_' or '.', starting and ending with a "
                "letter or digit")
    return _too_long(text, 63)


def env_name(text: str) -> str | None:
    if not _ENV.match(text):
        return ("is not a valid environment variable name: use letters, digits and '_', not starting with a "
                "digit (the name is also exported by shell scripts)")
    return None


def port_name(text: str) -> str | None:
    """An IANA service name: at most 15 characters, a letter required, no '--'."""
    if not _PORT_NAME.match(text) or "--" in text or not re.search("[a-z]", text):
        return "must be an IANA service name: lowercase letters, digits and single '-', with a letter"
    return _too_long(text, 15)


def path_segment(text: str) -> str | None:
    """One directory name: no '/', no '..', nothing a shell or path join would reinterpret."""
    if not _SEGMENT.match(text):
        return ("must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or "
                "digit (no '/' or '..')")
    return _too_long(text, 128)


def absolute_path(text: str) -> str | None:
    if not text.startswith("/"):
        return "must be an absolute path (starting with '/')"
    if "\n" in text or "\t" in text:
        return "must be one line"
    return None


def resource_name(text: str) -> str | None:
    """An extended resource: ``domain/name`` (e.g. nvidia.com/gpu), as a qualified name with a prefix."""
    if "/" not in text:
        return "must be an extended resource name with a domain prefix, such as nvidia.com/gpu"
    return qualified_name(text)


_SLURM_WORD = _Pattern(r"^[A-Za-z0-9_.,-]+\Z")
_SLURM_CONSTRAINT = _Pattern(r"^[A-Za-z0-9_.,&|*\[\]():!-]+\Z")
_SLURM_TIME = _Pattern(
    r"^(?:[0-9]+(?::[0-9]{1,2}){0,2}|[0-9]+-[0-9]+(?::[0-9]{1,2}){0,2}|UNLIMITED|unlimited|INFINITE|infinite)\Z")
_SLURM_GRES = _Pattern(r"^[A-Za-z0-9_.-]+(?::[A-Za-z0-9_.-]+)?\Z")
_HOST = _Pattern(r"^[A-Za-z0-9_][A-Za-z0-9_.@:\[\]-]*\Z")


def _grammar(pattern: _Pattern, problem: str, doc: str):
    """A checker: None when ``pattern`` matches the whole text, else ``problem``."""

    def check(text: str) -> str | None:
        return None if pattern.match(text) else problem

    check.__doc__ = doc
    return check


slurm_word = _grammar(_SLURM_WORD, "may only hold letters, digits, '_', '.', '-' and ',' (it reaches an #SBATCH "
                      "line)", "A partition, account or QoS (comma-separated lists allowed).")
slurm_constraint = _grammar(_SLURM_CONSTRAINT, "may only hold feature names and the operators & | , * [ ] ( ) ! : "
                            "(no spaces; it reaches an #SBATCH line)", "An #SBATCH --constraint expression.")
slurm_time = _grammar(_SLURM_TIME, "is not a Slurm time limit: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, "
                      "D-HH:MM:SS or UNLIMITED", "An #SBATCH --time limit.")
slurm_gres = _grammar(_SLURM_GRES, "must be a GRES name, optionally typed (gpu or gpu:h100); the count is derived",
                      "A GRES name, optionally typed; the count is derived.")
host_name = _grammar(_HOST, "must be a host name or user@host (no spaces, not starting with '-')",
                     "An ssh destination that ssh cannot take for an option.")


_RELEASE = _Pattern(r"^v?[0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?\Z")
release_version = _grammar(_RELEASE, "is not a release version: write MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 0.10.0",
                           "A controller release such as 0.10.0 (an optional leading v).")


_FLAG_KEY = _Pattern(r"^-{0,2}[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*\Z")


vllm_flag_key = _grammar(_FLAG_KEY, "is not a vLLM flag name: letters, digits, '_' and '-', with '.' only "
                         "between parts of a JSON config key", "A key of a vllm: mapping.")


def shell_fragment(text: str) -> str | None:
    """A ``vllm_raw_args`` entry: words of trusted shell syntax inside a bash array.

    Quotes must balance, and outside quotes nothing may end the array element list or
    start another command: no line break, no ``; & | < > ( )``, no ``#`` comment, no
    trailing backslash. Command substitution (`` ` `` or ``$(``) is refused outside single
    quotes. ``$VAR`` expansions and quoted metacharacters are fine.
    """
    if "\n" in text or "\r" in text:
        return "must be one line"
    quote = ""
    i = 0
    word_start = True
    while i < len(text):
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = ""
        elif c == "\\":
            if i + 1 == len(text):
                return "ends with a backslash"
            i += 1
        elif c == "`" or text.startswith("$(", i):
            return f"runs a command substitution ('{'`' if c == '`' else '$('}'); compute the value in vllm: instead"
        elif quote == '"':
            if c == '"':
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in ";&|<>()":
            return f"contains the shell operator '{c}' outside quotes; quote it or pass it through vllm:"
        elif c == "#" and word_start:
            return "starts a shell comment ('#') outside quotes; quote it"
        word_start = quote == "" and c in " \t"
        i += 1
    if quote:
        return f"has an unbalanced {'single' if quote == chr(39) else 'double'} quote"
    return None


def one_word(text: str) -> str | None:
    """Model ids, revisions and similar single tokens: no whitespace."""
    if not text or any(c.isspace() for c in text):
        return "must be one word, without spaces or line breaks"
    return None


def bind_path(text: str) -> str | None:
    """A container bind path: Apptainer and Pyxis separate binds with ',' and fields with ':'."""
    if not text or any(c in text for c in ",:") or any(c.isspace() for c in text):
        return "must be a path without ',', ':' or spaces (they separate container bind entries)"
    return None
