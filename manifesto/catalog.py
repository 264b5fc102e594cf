"""Find models, clusters and routing profiles by path or by catalog name.

Two catalogs: the user's (``$MANIFESTO_CONFIG_HOME``, else ``$XDG_CONFIG_HOME/llm-manifesto``,
else ``~/.config/llm-manifesto``) and the bundled one shipped with the package. A user
entry shadows a bundled entry of the same name. Names may omit ``.yaml``.
"""

from __future__ import annotations

import os
from pathlib import Path

from manifesto.errors import CatalogError, did_you_mean

__all__ = ["KINDS", "bundled_root", "config_home", "find", "entries", "images_path"]

KINDS = ("models", "clusters", "routing")


def bundled_root() -> Path:
    """The folder holding the bundled catalog/, clusters/, models/ and routing/."""
    here = Path(__file__).resolve().parent
    packaged = here / "_bundled"
    return packaged if packaged.is_dir() else here.parent


def config_home(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("MANIFESTO_CONFIG_HOME"):
        return Path(env["MANIFESTO_CONFIG_HOME"])
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "llm-manifesto"


def images_path() -> Path:
    return bundled_root() / "catalog" / "images.yaml"


def _names(root: Path, kind: str) -> dict[str, Path]:
    base = root / kind
    if not base.is_dir():
        return {}
    out: dict[str, Path] = {}
    for path in sorted(base.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            rel = path.relative_to(base).as_posix()
            out[rel[:-5] if rel.endswith(".yaml") else rel] = path
    return out


def entries(kind: str, environ: dict[str, str] | None = None) -> list[tuple[str, str, Path, bool]]:
    """(name, origin 'user'|'bundled', path, shadows_bundled) for every winning entry."""
    user = _names(config_home(environ), kind)
    bundled = _names(bundled_root(), kind)
    out = [(n, "user", p, n in bundled) for n, p in user.items()]
    out += [(n, "bundled", p, False) for n, p in bundled.items() if n not in user]
    return sorted(out)


def find(kind: str, ref: str, environ: dict[str, str] | None = None) -> Path:
    """A path for ``ref``: a build address (``//models/qwen:aggregated``), an existing file
    path (or pipe: ``<(...)``; ``-`` is standard input), else a user or bundled catalog name."""
    if ref.startswith("//"):
        from manifesto.build_graph.api import target_path

        return target_path(ref)
    if ref == "-":
        return Path("/dev/stdin")
    path = Path(ref)
    if path.is_file() or (path.exists() and not path.is_dir()):  # a pipe, e.g. bash's <(...)
        return path
    name = ref[:-5] if ref.endswith(".yaml") else ref
    for root in (config_home(environ), bundled_root()):
        table = _names(root, kind)
        if name in table:
            return table[name]
    known = [e[0] for e in entries(kind, environ)]
    singular = {"models": "model", "clusters": "cluster", "routing": "routing profile"}[kind]
    raise CatalogError(
        f"no {singular} '{ref}': not a file, and not in the user or bundled catalog"
        f"{did_you_mean(name, known)}" + (f"; known: {', '.join(known)}" if len(known) <= 12 else "")
    )
