"""The grammar of a gitops target's values: one validator, used by the build (BUILD.yaml's
``kind: gitops``, ``manifesto.build_graph.buildfile``) and by ``manifesto init --gitops-*``
(``manifesto.build_graph.scaffold``), so a workspace ``init`` writes always builds.

Each ``*_problem`` function returns why a value cannot stand where it goes (one line, the
value escaped), or None when it can:

- :func:`repo_url_problem`: the repository Argo CD fetches: ``https://``, ``http://``,
  ``ssh://``, ``git://`` with a host and a path, or scp-like ``user@host:path``. A URL with
  credentials (``https://user:pass@...``, a token as the user, ``ssh://user:pass@...``) is
  refused without repeating them: BUILD.yaml and ``out/gitops/`` are committed. ``ssh://git@``
  and ``git@host:`` name a user, not a secret, and pass;
- :func:`revision_problem`: a branch, tag or commit as ``git check-ref-format`` takes it
  (``HEAD`` too), and no invisible or bidirectional-override character;
- :func:`server_problem`: an API server URL, ``https://host[:port][/path]``, no credentials;
- :func:`cluster_name_problem`: an Argo CD cluster name (a kube context's name as a rule);
- :func:`project_problem`: an Argo CD project name;
- :func:`path_problem`: the workspace's folder in the repository.

:func:`yaml_string` writes a value as a double-quoted YAML scalar, so ``1.10``, ``1234567``,
``~`` or ``true`` stay the strings they are.
"""

from __future__ import annotations

import re

__all__ = ["repo_url_problem", "revision_problem", "server_problem", "cluster_name_problem", "project_problem",
           "path_problem", "has_credentials", "yaml_string", "MAX_URL"]

#: The longest URL, revision or name taken.
MAX_URL = 2048
_SCHEMES = ("https", "http", "ssh", "git")
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])"
_PATH_CHARS = r"[A-Za-z0-9._~%+=,:!*()@/-]"
_URL = re.compile(rf"(?P<scheme>[a-z]+)://(?:(?P<user>[A-Za-z0-9._-]{{1,64}})@)?(?P<host>{_HOST})"
                  rf"(?::(?P<port>[0-9]{{1,5}}))?(?P<path>/{_PATH_CHARS}*)?", re.ASCII)
_SCP = re.compile(rf"(?P<user>[A-Za-z0-9._-]{{1,64}})@(?P<host>{_HOST}):(?P<path>{_PATH_CHARS}+)", re.ASCII)
_FORBIDDEN_REF = frozenset(" ~^:?*[\\")


def _shown(value: str) -> str:
    """``value`` quoted, escaped for a terminal (``manifesto.errors.printable``) and cut."""
    from manifesto.errors import printable

    text = printable(value)
    return "'" + (text if len(text) <= 120 else text[:117] + "...") + "'"


def has_credentials(url: str) -> bool:
    """Whether ``url`` holds a password or a token: any user part of an http(s) or git URL
    (a token is often given as the user), a password (``user:secret@``) of any scheme."""
    if "://" not in url:
        return False
    scheme, rest = url.split("://", 1)
    if "@" not in rest:
        return False
    userinfo = rest.rsplit("@", 1)[0]
    return scheme.lower() != "ssh" or ":" in userinfo or "@" in userinfo or "/" in userinfo


def _credentials_problem(url: str, what: str, where: str) -> str:
    """The refusal of a URL with credentials: the scheme and host after them, never them."""
    scheme = url.split("://", 1)[0].lower()
    host = url.rsplit("@", 1)[1].split("/", 1)[0]
    shown = _shown(f"{scheme}://***@{host}")[1:-1]
    return (f"{what} with credentials ({shown}/...) is refused: {where} is committed; give Argo CD the "
            "credentials instead (a repository or cluster secret, `argocd repo add` / `argocd cluster add`)")


def _text_problem(value, what: str) -> str | None:
    if not isinstance(value, str):
        from manifesto.errors import show_value

        hint = " (YAML reads it as a number: write it in quotes)" if type(value) in (int, float) else ""
        return f"expected {what} as a string, got {show_value(value)}{hint}"
    if not value or len(value) > MAX_URL:
        return f"expected {what} of 1 to {MAX_URL} characters"
    if has_credentials(value):  # before any message that would show the value
        return _credentials_problem(value, what, "BUILD.yaml (and out/gitops/)")
    if not value.isprintable() or any(ch.isspace() for ch in value):
        return (f"{_shown(value)} holds a space, a control or an invisible character (a bidirectional "
                f"override, a zero-width space); {what} has none")
    return None


def _port_problem(port: str | None, shown: str) -> str | None:
    if port is not None and not 0 < int(port) < 65536:
        return f"{shown}: the port is not 1 to 65535"
    return None


def repo_url_problem(value) -> str | None:
    """Why ``value`` cannot be a gitops target's ``repo_url`` (None when it can)."""
    problem = _text_problem(value, "a repository URL")
    if problem:
        return problem
    if has_credentials(value):
        return _credentials_problem(value, "a repository URL", "BUILD.yaml (and out/gitops/)")
    shown = _shown(value)
    usage = ("(https://HOST/PATH, ssh://[USER@]HOST/PATH, git://HOST/PATH or USER@HOST:PATH, without spaces, "
             "quotes or shell metacharacters)")
    if "://" in value:
        scheme = value.split("://", 1)[0]
        if scheme.lower() == "file":
            return (f"{shown} names a folder on one machine; Argo CD fetches the repository from a server: "
                    f"give its URL {usage}")
        match = _URL.fullmatch(value)
        if match is None or scheme not in _SCHEMES:
            return f"{shown} is not a repository URL {usage}"
        if not match["path"] or match["path"] == "/":
            return f"{shown} names a server but no repository (a path after the host)"
        return _port_problem(match["port"], shown)
    match = _SCP.fullmatch(value)
    if match is None:
        if value.endswith(":"):
            return f"{shown} names a host but no repository (a path after ':')"
        return f"{shown} is not a repository URL {usage}"
    return None


def revision_problem(value) -> str | None:
    """Why ``value`` cannot be the revision Argo CD follows (None when it can): a branch, tag
    or commit as ``git check-ref-format`` takes one, or HEAD."""
    problem = _text_problem(value, "a branch, tag or commit")
    if problem:
        return problem
    shown = _shown(value)
    if len(value) > 255:
        return f"{shown} is longer than 255 characters"
    bad = sorted({ch for ch in value if ch in _FORBIDDEN_REF or ch in "'\"`$;&|<>"})
    if bad:
        return f"{shown} is not a branch, tag or commit: git refuses {' '.join(repr(c) for c in bad)} in one"
    parts = value.split("/")
    if (value.startswith(("-", "/")) or value.endswith(("/", ".")) or ".." in value or "@{" in value
            or value == "@" or any(not p or p.startswith(".") or p.endswith(".lock") for p in parts)):
        return (f"{shown} is not a branch, tag or commit (git check-ref-format: no leading '-' or '/', no '..', "
                "'@{', '//', part starting with '.' or ending in '.lock', no trailing '/' or '.')")
    return None


def server_problem(value) -> str | None:
    """Why ``value`` cannot be a ``destination.server`` (None when it can)."""
    problem = _text_problem(value, "an API server URL")
    if problem:
        return problem
    if has_credentials(value) or ("://" in value and "@" in value.split("://", 1)[1]):
        return _credentials_problem(value, "an API server URL", "BUILD.yaml (and out/gitops/)")
    shown = _shown(value)
    match = _URL.fullmatch(value)
    if match is None or match["scheme"] != "https" or match["user"]:
        return f"{shown} is not an API server URL (https://HOST[:PORT][/PATH])"
    return _port_problem(match["port"], shown)


_CLUSTER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,252}", re.ASCII)


def cluster_name_problem(value) -> str | None:
    """Why ``value`` cannot be a ``destination.name`` (an Argo CD cluster name)."""
    problem = _text_problem(value, "an Argo CD cluster name")
    if problem:
        return problem
    if "://" in value:
        return f"{_shown(value)} is a URL: give it as destination.server"
    if _CLUSTER_NAME.fullmatch(value) is None:
        return (f"{_shown(value)} is not an Argo CD cluster name (letters, digits and '.', '_', ':', '@', '/', "
                "'+' or '-', starting with a letter or digit, at most 253)")
    return None


_FOLDER = re.compile(r"[A-Za-z0-9._/-]{1,1024}", re.ASCII)


def path_problem(value) -> str | None:
    """Why ``value`` cannot be the workspace's folder in its repository (``path``): letters,
    digits, '.', '_', '-' and '/' (where it is, below BUILD.yaml, the build checks apart)."""
    problem = _text_problem(value, "a folder of the repository")
    if problem:
        return problem
    if _FOLDER.fullmatch(value) is None:
        return (f"{_shown(value)} is not a folder of the repository (letters, digits, '.', '_', '-' and '/', "
                "relative to BUILD.yaml)")
    return None


_PROJECT = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", re.ASCII)


def project_problem(value) -> str | None:
    """Why ``value`` cannot be an Argo CD project name."""
    problem = _text_problem(value, "an Argo CD project name")
    if problem:
        return problem
    if _PROJECT.fullmatch(value) is None:
        return f"{_shown(value)} is not an Argo CD project name (lowercase letters, digits, '-' and '.')"
    return None


def yaml_string(value: str) -> str:
    """``value`` as a double-quoted YAML scalar (JSON's string syntax, which YAML reads the same),
    so it stays a string whatever it looks like (``1.10``, ``1234567``, ``~``, ``true``)."""
    import json

    # JSON's escapes, but a character beyond ASCII as YAML's own \uXXXX or \UXXXXXXXX: JSON
    # would write one past U+FFFF as a surrogate pair, which YAML reads as two characters.
    return "".join(ch if ch.isascii() else f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
                   for ch in json.dumps(value, ensure_ascii=False))
