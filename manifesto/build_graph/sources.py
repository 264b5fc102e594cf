"""The graph of one look at a workspace, as cheaply as the manifest allows: BUILD.yaml's
config (parsed again only when its digest changed) and the source listing (walked again only
when a folder's signature moved), checked before use, then the targets and pairs
(``graph.build_graph``). ``engine.Session`` asks :func:`load_graph` once.
"""

from __future__ import annotations

import os

from manifesto.build_graph.generators import from_rows, to_rows
from manifesto.build_graph.graph import DECLARED, build_graph
from manifesto.build_graph.state import BuildfileEntry, ListingEntry
from manifesto.build_graph.workspace import BUILD_FILE
from manifesto.edge.signatures import dir_unchanged

__all__ = ["LoadedGraph", "load_graph"]


class LoadedGraph:
    """What :func:`load_graph` found: the ``graph``, whether it may differ from the one the
    manifest's records were made with (``changed``: BUILD.yaml or the listing changed) and
    whether the manifest's cached listing was re-read (``refreshed``: worth saving)."""

    __slots__ = ("graph", "changed", "refreshed")

    def __init__(self, graph, changed: bool, refreshed: bool) -> None:
        self.graph, self.changed, self.refreshed = graph, changed, refreshed


def load_graph(ws, state, stat) -> LoadedGraph:
    """The graph of workspace ``ws``, from the manifest ``state`` (a ``state.BuildState``,
    whose ``buildfile`` and ``listing`` entries it renews when stale) and the stat cache
    ``stat``."""
    value = stat.digest(BUILD_FILE)
    if value is None:
        from manifesto.errors import BuildError

        raise BuildError(f"{ws.display_buildfile}: file not found")
    changed = False
    cached = state.buildfile
    config = _cached_config(cached.config) if cached and cached.digest == value else None
    if config is not None:
        locations = cached.locations
    else:
        from manifesto.build_graph.buildfile import parse_buildfile

        config, locations = parse_buildfile(ws.buildfile, ws.display_buildfile)
        state.buildfile = BuildfileEntry(value, {**config, "generators": to_rows(config["generators"])}, locations)
        changed = True
    files, listing_changed, refreshed = _listing(ws, state, config, value)
    graph = build_graph(config, files, locations, ws.display_buildfile, ws.root)
    return LoadedGraph(graph, changed or listing_changed, refreshed)


def workspace_graph(ws, warn):
    """The graph of workspace ``ws`` from its manifest (read, never saved: ``warn`` says why one
    is ignored), for a command that only looks at the targets (``list``, a completion of
    build addresses): no Session, no engine import."""
    from manifesto.build_graph.state import load_state
    from manifesto.build_graph.statcache import StatCache

    state = load_state(ws.state_path, warn)
    return load_graph(ws, state, StatCache(ws.root, state.stat)).graph


def _listing(ws, state, config: dict, config_digest: str) -> tuple[dict, bool, bool]:
    """(the source files of each generator, whether they changed, whether they were re-read)."""
    cached = state.listing
    if (cached and _listing_ok(cached) and cached.config_digest == config_digest
            and _dirs_unchanged(ws.root, cached.dirs)):
        return cached.files, False, False
    from manifesto.build_graph.globs import select, walk

    dirs, files, walked = {}, {}, {}
    for i, gen in enumerate(config["generators"]):
        if gen.kind in DECLARED:  # declared in BUILD.yaml, not found in a directory
            continue
        base = gen.path
        if base not in walked:
            found = os.path.isdir(os.path.join(ws.root, base))
            walked[base] = walk(ws.root, base, dirs) if found else None
            dirs.setdefault(base, None)
        files[i] = None if walked[base] is None else tuple(select(walked[base], gen.includes, gen.excludes))
        for name in files[i] or ():
            if not name.isprintable():  # it would reach terminals, reports and out/ as it is
                from manifesto.errors import BuildError, printable

                bad = next(c for c in name if not c.isprintable())
                raise BuildError(f"{printable(os.path.join(base, name))}: a source file's name holds the control "
                                 f"or invisible character U+{ord(bad):04X}; rename the file (a target's name "
                                 "must print as itself)")
    changed = not cached or cached.config_digest != config_digest or cached.files != files
    state.listing = ListingEntry(config_digest, dirs, files)
    return files, changed, True


def _cached_config(config) -> dict | None:
    """The manifest's BUILD.yaml config with its target generators as records again; None when
    it is not a config a build saved (BUILD.yaml is then parsed again)."""
    if type(config) is not dict:
        return None
    generators = from_rows(config.get("generators"))
    return None if generators is None else {**config, "generators": generators}


def _listing_ok(cached) -> bool:
    """Whether the manifest's source listing is ``(digest, {folder: signature}, {generator:
    names})`` with folders and file names in the grammar a fresh walk gives (relative, normal,
    printable): names become targets and paths in out/, so a verified manifest is still checked."""
    from manifesto.build_graph.generators import folder_ok

    if not isinstance(cached, ListingEntry):
        return False
    dirs, files = cached.dirs, cached.files
    if type(dirs) is not dict or type(files) is not dict:
        return False
    if not all(folder_ok(d) and (s is None or (type(s) is tuple and len(s) == 3)) for d, s in dirs.items()):
        return False
    return all(type(i) is int and (names is None or (type(names) is tuple and all(map(folder_ok, names))))
               for i, names in files.items())


def _dirs_unchanged(root: str, dirs: dict) -> bool:
    return all(dir_unchanged(os.path.join(root, rel), sig) for rel, sig in dirs.items())
