"""Find models, clusters and routing profiles by path or by catalog name.

Two catalogs: the user's (``$MANIFESTO_CONFIG_HOME``, else ``$XDG_CONFIG_HOME/llm-manifesto``,
else ``~/.config/llm-manifesto``) and the bundled one shipped with the package. A user
entry shadows a bundled entry of the same name. Names may omit ``.yaml``.

Where names resolve is a ``SearchPath`` value: its catalog roots in order, and the function
that turns a build address (``//models/qwen:aggregated``) into a file. It is always passed
explicitly: the build graph passes ``PATHS_ONLY``, the CLI the search path it builds at its
edge (user catalog, bundled catalog and build addresses); a caller that passes none gets
the user and bundled catalogs of the environment, without addresses. There is no process
default to set.
"""

from __future__ import annotations

import os
from functools import lru_cache
from collections.abc import Callable
TYPE_CHECKING = False  # not typing's: importing typing would cost completion what pathlib did
if TYPE_CHECKING:  # pathlib only where a caller asks for a Path: completion and renders work with text
    from pathlib import Path

from manifesto.errors import CatalogError, did_you_mean

__all__ = ["KINDS", "SearchPath", "PATHS_ONLY", "bundled_root", "bundled_dir", "config_home", "config_dir",
           "default_search", "within", "find", "entries", "images_path", "images_file", "architectures_path",
           "architectures_dir", "vllm_table", "router_table", "table_versions", "runtime_tables", "path_text"]

KINDS = ("models", "clusters", "routing")


def bundled_root() -> Path:
    """The folder holding the bundled catalog/, clusters/, models/ and routing/."""
    from pathlib import Path

    return Path(bundled_dir())


@lru_cache(maxsize=1)
def _package_dir() -> str:
    """The ``manifesto`` package's folder (this module's is ``manifesto/load``), symlinks
    resolved (a memo: it cannot move while running; a build asked for it some 5,000 times,
    each a realpath of this file)."""
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


@lru_cache(maxsize=1)
def bundled_dir() -> str:
    """Where this installed package keeps its examples (``bundled_root`` as text: a render
    never makes a ``Path``, whose import costs it 4 ms); a memo, like ``_package_dir``: an
    installed package does not grow or lose its ``_bundled`` folder while it runs."""
    here = _package_dir()
    packaged = os.path.join(here, "_bundled")
    return packaged if os.path.isdir(packaged) else os.path.dirname(here)


def config_home(environ: dict[str, str] | None = None) -> Path:
    from pathlib import Path

    return Path(config_dir(environ))


def config_dir(environ: dict[str, str] | None = None) -> str:
    """The user catalog's folder (``config_home`` as text)."""
    env = os.environ if environ is None else environ
    if env.get("MANIFESTO_CONFIG_HOME"):
        return env["MANIFESTO_CONFIG_HOME"]
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "llm-manifesto")


class SearchPath:
    """Catalog roots (first wins), the resolver for build addresses (None: not accepted), and
    ``within``: the only directories files may be read from (``yamlio.confinement``; empty:
    anywhere), which a build sets to its workspace and the bundled catalog."""

    __slots__ = ("roots", "addresses", "workspace", "within")

    def __init__(self, roots: tuple[str, ...] = (), addresses: Callable[[str], Path] | None = None,
                 workspace: Callable[[str, str], Path | None] | None = None, within: tuple[str, ...] = ()) -> None:
        self.roots = tuple(roots)
        self.addresses = addresses
        self.workspace = workspace  # (kind, name) -> the file of the workspace's target of that name, or None
        self.within = tuple(within)


#: Inputs named by path only: what a hermetic build renders with.
PATHS_ONLY = SearchPath()

def default_search(environ: dict[str, str] | None = None,
                   addresses: Callable[[str], Path] | None = None,
                   workspace: Callable[[str, str], Path | None] | None = None) -> SearchPath:
    """The user catalog of ``environ`` (default: the process environment), then the bundled one;
    ``workspace`` first, for cluster names, when the CLI runs inside a workspace."""
    return SearchPath((config_dir(environ), bundled_dir()), addresses, workspace)


def within(search: SearchPath | None) -> tuple[str, ...]:
    """The directories ``search`` confines reads to (empty: anywhere)."""
    return search.within if search is not None else ()


def _search(search: SearchPath | None) -> SearchPath:
    return search if search is not None else default_search()


def images_file() -> str:
    """The bundled image catalog."""
    return os.path.join(bundled_dir(), "catalog", "images.yaml")


def images_path() -> Path:
    from pathlib import Path

    return Path(images_file())


def architectures_dir() -> str:
    """The folder of architecture records: ``<org>/<name>.json`` per model id."""
    return os.path.join(bundled_dir(), "catalog", "architectures")


def architectures_path() -> Path:
    from pathlib import Path

    return Path(architectures_dir())


def _data() -> str:
    """The package's data folder (a plain folder in a checkout and in an installed wheel;
    ``importlib.resources`` would cost a render its import for the same path)."""
    return os.path.join(_package_dir(), "data")


def table_versions(kind: str) -> list[str]:
    """Versions that have a bundled ``kind`` table (``vllm`` or ``llm-d-router``)."""
    prefix = kind + "-"
    return sorted(name[len(prefix):-5] for name in os.listdir(_data())
                  if name.startswith(prefix) and name.endswith(".json"))


@lru_cache(maxsize=8)
def _table(kind: str, version: str):
    import msgspec

    from manifesto.schema.runtime import FORMAT, RouterTable, VllmTable

    res = os.path.join(_data(), f"{kind}-{version}.json")
    if not os.path.isfile(res):
        return None
    from manifesto.edge.files import read_regular

    raw = read_regular(res, follow=True, limit=16 * 1024 * 1024)  # the package's own data, a few hundred KiB
    table = msgspec.json.decode(raw, type=VllmTable if kind == "vllm" else RouterTable)
    if table.format != FORMAT:
        raise CatalogError(f"{res}: table format {table.format}, this Manifesto reads format {FORMAT}; "
                           f"regenerate it with {table.generator}")
    return table


def vllm_table(version: str):
    """The bundled table of vLLM ``version``'s ``serve`` arguments and variables, or None."""
    return _table("vllm", version)


def router_table(release: str):
    """The bundled table of llm-d-router ``release``'s plugins and flags, or None."""
    return _table("llm-d-router", release)


def runtime_tables():
    from manifesto.schema.runtime import RuntimeTables

    return RuntimeTables(vllm=vllm_table, router=router_table)


def _names(root: Path, kind: str) -> dict[str, Path]:
    from pathlib import Path

    return {name: Path(path) for name, path in _plain_names(str(root), kind).items()}


def _plain_names(root: str, kind: str) -> dict[str, str]:
    """Entry name -> file path below ``root/kind`` (os only: completion calls it)."""
    base = os.path.join(root, kind)
    if not os.path.isdir(base):
        return {}
    rels = []
    for top, dirs, files in os.walk(base):  # symlinked folders are not entered (as Path.rglob)
        for file in files:
            path = os.path.join(top, file)
            if not file.startswith(".") and os.path.isfile(path):
                rels.append(os.path.relpath(path, base).replace(os.sep, "/"))
    out: dict[str, str] = {}
    for rel in sorted(rels, key=lambda r: r.split("/")):
        if name_problem(rel) is None:  # a look-alike or line-breaking name is no entry
            out[rel[:-5] if rel.endswith(".yaml") else rel] = os.path.join(base, *rel.split("/"))
    return out


def name_problem(rel: str) -> str | None:
    """Why a catalog file's name cannot name an entry: it holds a character that is not
    printable (a control, a line break, a zero-width or bidi character), so it could pass
    for another entry or break one-name-per-line output."""
    if rel.isprintable():
        return None
    bad = next(c for c in rel if not c.isprintable())
    return f"its name holds the invisible or control character U+{ord(bad):04X}"


def unusable(kind: str, environ: dict[str, str] | None = None) -> list[tuple[Path, str]]:
    """User catalog files of ``kind`` that ``name_problem`` keeps out of the catalog."""
    base = config_home(environ) / kind
    if not base.is_dir():
        return []
    found = []
    for path in sorted(base.rglob("*")):
        problem = name_problem(path.relative_to(base).as_posix())
        if problem and path.is_file() and not path.name.startswith("."):
            found.append((path, problem))
    return found


def _listed(path) -> bool:
    """Whether a file is a spec to show: ``*-base.yaml`` files are only extended and ``*.md``
    files are notes (the bundled BUILD.yaml leaves both out of the build too)."""
    name = os.path.basename(path)
    return not (name.endswith("-base.yaml") or name.endswith(".md"))


def entry_names(kind: str, environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(name, origin 'user'|'bundled') of ``entries``, without making a Path (shell completion)."""
    user = [n for n, p in _plain_names(config_dir(environ), kind).items() if _listed(p)]
    bundled = [n for n, p in _plain_names(bundled_dir(), kind).items() if _listed(p)]
    return sorted([(n, "user") for n in user] + [(n, "bundled") for n in bundled if n not in set(user)])


def entries(kind: str, environ: dict[str, str] | None = None) -> list[tuple[str, str, Path, bool]]:
    """(name, origin 'user'|'bundled', path, shadows_bundled) for every winning entry that is
    more than a base to extend or a note; ``find`` still resolves those by name."""
    user = {n: p for n, p in _names(config_home(environ), kind).items() if _listed(p)}
    bundled = {n: p for n, p in _names(bundled_root(), kind).items() if _listed(p)}
    out = [(n, "user", p, n in bundled) for n, p in user.items()]
    out += [(n, "bundled", p, False) for n, p in bundled.items() if n not in user]
    return sorted(out)


def find(kind: str, ref: str, environ: dict[str, str] | None = None, *, search: SearchPath | None = None) -> str:
    """The path of ``ref``: a build address (``//models/qwen:aggregated``) when the search path
    resolves them, an existing file path (or pipe: ``<(...)``; ``-`` is standard input, a
    ``yamlio.StreamPath``), else a name in the search path's catalogs. ``environ`` (tests,
    ``config`` commands) selects that environment's user catalog. The path is text, spelled
    as ``pathlib`` spells it (``path_text``)."""
    where = default_search(environ) if environ is not None and search is None else _search(search)
    if ref.startswith("//"):
        if where.addresses is None:
            raise CatalogError(f"'{ref}' is a build address; only the manifesto CLI resolves build addresses "
                               "(pass a file path here)")
        return os.fspath(where.addresses(ref))
    if ref in ("-", "/dev/stdin") or (ref.startswith("/dev/fd/") and os.path.exists(ref)):
        from manifesto.load.yamlio import StreamPath  # named on the command line: read it once

        return StreamPath("/dev/stdin" if ref == "-" else ref)
    spelled = path_text(ref)
    if _is_file(spelled):  # pathlib's spelling: "x.yaml/" names the file x.yaml too
        return spelled
    name = ref[:-5] if ref.endswith(".yaml") else ref
    problem = name_problem(name)
    if problem and not os.path.lexists(ref):  # no entry can have such a name (``_plain_names``)
        from manifesto.errors import did_you_mean as close_to, printable

        seen = "".join(c for c in name if c.isprintable())  # the name as it looks on a terminal
        names = [n for root in where.roots for n in _plain_names(os.fspath(root), kind)]
        raise CatalogError(f"catalog name '{printable(ref)[:200]}' is refused: {problem}"
                           + close_to(seen, names))
    if kind == "clusters" and where.workspace is not None and "/" not in name:
        # Inside a workspace its own cluster targets (clusters/acme-h100.yaml) win over the catalogs.
        found = where.workspace(kind, name)
        if found is not None:
            return os.fspath(found)
    known: list[str] = []
    for root in where.roots:
        table = _plain_names(os.fspath(root), kind)
        if name in table:
            return path_text(table[name])
        known += [n for n in table if n not in known]
    singular = {"models": "model", "clusters": "cluster", "routing": "routing profile"}[kind]
    if os.path.lexists(ref):  # a path that is there but is no file: say what it is instead
        from manifesto.load.yamlio import file_problem

        raise CatalogError(f"{singular} {ref}: {file_problem(ref) or 'not a regular file'}")
    if not where.roots:
        raise CatalogError(f"no {singular} file '{ref}'")
    known.sort()
    raise CatalogError(
        f"no {singular} '{ref}': not a file, and not in the user or bundled catalog"
        f"{did_you_mean(name, known)}" + (f"; known: {', '.join(known)}" if len(known) <= 12 else "")
    )


def path_text(path: str) -> str:
    """``path`` as ``str(pathlib.PurePosixPath(path))`` spells it: no empty or ``.`` part, no
    trailing slash, two leading slashes kept (POSIX leaves their meaning open), three or more
    read as one. Paths the catalog hands out are spelled so, as they were when it handed out
    ``Path`` objects (tests/load/test_catalog_paths.py holds the two equal)."""
    stripped = path.lstrip("/")
    root = {0: "", 2: "//"}.get(len(path) - len(stripped), "/")
    return (root + "/".join(p for p in stripped.split("/") if p and p != ".")) or "."


def _is_file(path: str) -> bool:
    """``pathlib.Path(path).is_file()``: a regular file, following links; the errors meaning
    "no such file" are False, any other is raised (a folder that may not be read, say)."""
    import errno
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return False
        raise
    except ValueError:  # a NUL character
        return False
