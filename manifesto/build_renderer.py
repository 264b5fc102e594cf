"""One (model, cluster) pair -> one artifact: the entry point the build graph calls.

Everything a render reads is returned in ``Artifact.inputs``, so the build graph can key
its cache on exactly those bytes. Nothing here reads the environment.
"""

from __future__ import annotations

import os

import msgspec

import manifesto.options as _options

__all__ = ["RenderOptions", "Artifact", "render_pair", "code_fingerprint_paths", "options_from"]


#: The options of one render: the Struct of every render option (``manifesto.options``),
#: the same class as ``resolve.plan.Options``.
RenderOptions = _options.Options


class Artifact(msgspec.Struct, frozen=True):
    text: str
    suffix: str  # .yaml or .sbatch
    inputs: tuple[str, ...]


def options_from(ro: RenderOptions):
    """The resolution options of a render: the same Struct (kept for callers of the old API)."""
    return ro


def render_pair(model: str, cluster: str, options: RenderOptions, roots: tuple[str, ...] = ()) -> Artifact:
    """Render ``model`` against ``cluster``; raises IncompatiblePairError or another ManifestoError.
    With ``roots`` (the build's workspace), every file read must resolve below one of them or
    the bundled catalog: a symlink or an ``extends`` that leads elsewhere is an error naming
    the file, not a silent read of, say, a home directory.

    An error carries ``inputs``: the files read before it, so the build graph can cache the
    failure (or the skip) against exactly those bytes.
    """
    from manifesto.catalog import PATHS_ONLY, SearchPath, bundled_root, images_path
    from manifesto.cluster import load_cluster
    from manifesto.errors import ManifestoError
    from manifesto.service import render_text
    from manifesto.spec import load_spec

    from manifesto.yamlio import confinement

    read = [os.path.realpath(model), os.path.realpath(cluster), str(images_path().resolve())]
    # Every input is a path: no catalog name, user catalog or environment can leak in.
    search = SearchPath(within=confinement([*roots, str(bundled_root())])) if roots else PATHS_ONLY
    try:
        c = load_cluster(cluster, search=search)
        read += c.loaded.files
        s = load_spec(model, c, search=search)
        read += s.files
        text, suffix, inputs = render_text(s, c, options_from(options), search)
    except ManifestoError as exc:
        exc.inputs = tuple(sorted(set(read)))
        raise
    return Artifact(text=text, suffix=suffix, inputs=tuple(sorted(set(inputs))))


def code_fingerprint_paths() -> list[str]:
    """Files whose bytes define the renderer: the package's Python code and the image catalog."""
    from manifesto.digest import code_files

    return code_files()
