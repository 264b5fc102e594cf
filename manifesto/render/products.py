"""The render task's typed inputs and failures, besides the Plan (``manifesto.resolve.plan``).

``render_plan(plan, header)`` reads only these values, so the store can key its product
on their digests (``manifesto.tasks.memo``). Kept apart from ``render.header``, which
cheap commands import without msgspec.
"""

from __future__ import annotations

import msgspec

from manifesto.resolve.options import Options

__all__ = ["HeaderInputs", "Refusal"]


class HeaderInputs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What an artifact shows besides its Plan: the provenance header's inputs.

    The header inlines the expanded (flattened, comment-free) model and cluster YAML, so
    an edit that changes their data changes the artifact even when the Plan stays equal;
    an edit the expansion drops (a comment, a quoting style, key spacing) changes neither.
    """

    model_yaml: str
    cluster_yaml: str
    options: Options | None = None
    routing_yaml: str | None = None


class Refusal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Why the render of a Plan refused it, and the input field behind that: ``source`` is
    "spec", "cluster", "annotations" (the pod annotations: the cluster's pod_defaults
    when it sets them, else the spec) or "flag" (a command-line flag the message names, no
    field); ``fields`` is the field's path, ``path`` its
    printed form. ``render.place`` gives it the field's position in the current files."""

    message: str
    source: str
    fields: tuple[str | int, ...] = ()
    path: str = ""
