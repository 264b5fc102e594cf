"""One (model, cluster) pair -> one artifact: the entry point the build graph calls.

Everything a render reads is returned in ``Artifact.inputs``, so the build graph can key
its cache on exactly those bytes. Nothing here reads the environment.
"""

from __future__ import annotations

import os

import msgspec

__all__ = ["RenderOptions", "Artifact", "render_pair", "code_fingerprint_paths", "options_from", "confine"]


class RenderOptions(msgspec.Struct, frozen=True):
    user: str
    namespace: str
    routing_profile: str | None = None  # path of a routing profile file
    idle_shutdown: bool | None = None
    idle_timeout_minutes: int | None = None


class Artifact(msgspec.Struct, frozen=True):
    text: str
    suffix: str  # .yaml or .sbatch
    inputs: tuple[str, ...]


def options_from(ro: RenderOptions):
    from manifesto.resolve.plan import Options

    return Options(user=ro.user, namespace=ro.namespace, routing_profile=ro.routing_profile,
                   idle_shutdown=ro.idle_shutdown, idle_timeout_minutes=ro.idle_timeout_minutes)


def render_pair(model: str, cluster: str, options: RenderOptions) -> Artifact:
    """Render ``model`` against ``cluster``; raises IncompatiblePairError or another ManifestoError.

    An error carries ``inputs``: the files read before it, so the build graph can cache the
    failure (or the skip) against exactly those bytes.
    """
    from manifesto.catalog import PATHS_ONLY, images_path
    from manifesto.cluster import load_cluster
    from manifesto.errors import ManifestoError
    from manifesto.service import render_text
    from manifesto.spec import load_spec

    if isinstance(model, tuple):
        return _render_monitoring(model, cluster, options)
    read = [os.path.realpath(model), os.path.realpath(cluster), str(images_path().resolve())]
    try:
        # Every input is a path: no catalog name, user catalog or environment can leak in.
        c = load_cluster(cluster, search=PATHS_ONLY)
        read += c.loaded.files
        s = load_spec(model, c, search=PATHS_ONLY)
        read += s.files
        text, suffix, inputs = render_text(s, c, options_from(options), PATHS_ONLY)
    except ManifestoError as exc:
        exc.inputs = tuple(sorted(set(read)))
        raise
    return Artifact(text=text, suffix=suffix, inputs=tuple(sorted(set(inputs))))


def _render_monitoring(models: tuple, cluster: str, options: RenderOptions) -> Artifact:
    """The monitoring of the instances of ``models`` ((shown name, path) each) on ``cluster``;
    models the cluster cannot run (another accelerator) are left out."""
    from manifesto.catalog import PATHS_ONLY, images_path
    from manifesto.cluster import load_cluster
    from manifesto.errors import IncompatiblePairError, ManifestoError
    from manifesto.load import load_model_data
    from manifesto.service import monitoring_text, plan_for
    from manifesto.spec import load_spec

    read = [os.path.realpath(cluster), str(images_path().resolve())]
    try:
        c = load_cluster(cluster, search=PATHS_ONLY)
        read += c.loaded.files
        specs = []
        for _name, path in models:
            read += load_model_data(path).files  # the spec and its extends chain, even when skipped
            try:
                s = load_spec(path, c, search=PATHS_ONLY)
                read += s.files
                plan_for(s, c, options_from(options), PATHS_ONLY)
            except IncompatiblePairError:
                continue
            specs.append(s)
        text, inputs = monitoring_text(specs, c, options_from(options), PATHS_ONLY)
    except ManifestoError as exc:
        exc.inputs = tuple(sorted(set(read)))
        raise
    return Artifact(text=text, suffix=".yaml", inputs=tuple(sorted(set(read + inputs))))


def code_fingerprint_paths() -> list[str]:
    """Files whose bytes define the renderer: the package's Python code and the image catalog."""
    from manifesto.digest import code_files

    return code_files()


def confine(roots):
    """A context manager under which renders read only files below ``roots`` (the build's
    workspace) or the bundled catalog: a symlink or an ``extends`` that leads elsewhere is
    an error naming the file, not a silent read of, say, a home directory."""
    from manifesto.catalog import bundled_root
    from manifesto.yamlio import confined

    return confined([*roots, str(bundled_root())])
