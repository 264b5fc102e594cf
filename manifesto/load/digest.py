"""Content digests and THE code fingerprint: one definition for the build graph and the
single commands, which share one store (``manifesto.store``) and must agree on what
"unchanged" means."""

from __future__ import annotations

import os

from manifesto.util.hashing import digest

__all__ = ["digest", "file_digest", "combine", "code_files", "code_names", "fingerprint", "code_fingerprint"]

#: The product's renderer module (``manifesto.build_graph.renderer.DEFAULT``).
RENDERER = "manifesto.tasks"


def file_digest(path: str) -> str | None:
    """The digest of a regular file's bytes (a link followed), or None when it cannot be read:
    missing, a FIFO or device (never opened, so never a hang), or over 256 MiB."""
    from manifesto.edge.raw import TooLarge, read_regular

    try:
        return digest(read_regular(path, follow=True, limit=256 * 1024 * 1024))
    except (OSError, TooLarge):
        return None


def combine(label: str, names, digests) -> str:
    """One digest for a set of named digests (order-independent)."""
    lines = [label] + sorted(f"{n}\0{d}" for n, d in zip(names, digests))
    return digest("\n".join(lines).encode())


def code_files() -> list[str]:
    """The files whose bytes define the renderer: the package's Python code, its runtime
    tables and the bundled image catalog, as absolute paths in a stable order."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # manifesto/, above load/
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        # The runtime tables (data/*.json) decide which specs render, so they key the cache too,
        # and so do the Argo CD health checks (data/argocd/**/health.lua) a gitops target ships.
        out += [os.path.join(dirpath, name) for name in sorted(filenames)
                if name.endswith((".py", ".lua")) or (name.endswith(".json") and os.path.basename(dirpath) == "data")]
    from manifesto.load.catalog import architectures_dir, images_file

    out.append(images_file())
    for dirpath, dirnames, filenames in os.walk(architectures_dir()):
        dirnames.sort()
        out += [os.path.join(dirpath, name) for name in sorted(filenames) if name.endswith(".json")]
    return sorted(out)


def code_names(paths) -> tuple:
    """Code file paths relative to their common directory: the same in every checkout."""
    if not paths:
        return ()
    base = os.path.commonpath([os.path.dirname(p) for p in paths])
    return tuple(os.path.relpath(p, base).replace(os.sep, "/") for p in paths)


def fingerprint(names, digests, renderer: str = RENDERER) -> str:
    """The code fingerprint of the code files ``names`` (see ``code_names``) with ``digests``,
    for the renderer module ``renderer`` under this Python version."""
    import sys

    label = f"manifesto-code/2 {renderer} py{sys.version_info[0]}.{sys.version_info[1]}"
    return combine(label, names, digests)


def code_fingerprint() -> str:
    """The product renderer's code fingerprint, from every code file's bytes read now (the
    build computes the same value through its stat cache: ``build_graph.fingerprint``)."""
    files = code_files()
    return fingerprint(code_names(files), [file_digest(p) or "-" for p in files])
