"""The store key of rendering one pair: ``manifesto.store.task_key`` of exactly what the
render read and was told.

The task names the pair; the inputs are the root-relative path and digest of every file
the render read (so two checkouts of one commit share keys); the options are the
renderer's ``RenderOptions`` as msgpack (workspace-relative paths, as BUILD.yaml gives
them); the code is the build's code fingerprint (``context.code``).
"""

from __future__ import annotations

from manifesto.store import task_key

__all__ = ["pair_key", "options_bytes"]


def options_bytes(renderer: str, options: tuple) -> bytes:
    """The msgpack bytes of the renderer's ``RenderOptions`` for the option values ``options``."""
    import msgspec

    import manifesto.build_graph.renderer as renderers
    from manifesto.build_graph.renderer import OPTION_FIELDS

    module = renderers.load(renderer)
    return msgspec.msgpack.encode(module.RenderOptions(**dict(zip(OPTION_FIELDS, options))))


def pair_key(renderer: str, pair: tuple[str, str], context: tuple, inputs, digests) -> str:
    """The key of rendering ``pair`` in ``context`` (a ``state.PairContext``) from ``inputs`` with
    ``digests``."""
    return task_key(f"render {pair[0]} @ {pair[1]}", inputs, digests, options_bytes(renderer, context.options),
                    context.code)
