"""The render task's typed inputs and failures, besides the Plan (``manifesto.resolve.plan``).

``render_plan(plan, header)`` reads only these values, so the store can key its product
on their digests (``manifesto.tasks.memo``). Kept apart from ``render.header``, which
cheap commands import without msgspec.
"""

from __future__ import annotations

import msgspec

from manifesto.resolve.options import Options

__all__ = ["HeaderInputs", "Refusal", "Artifact"]


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


class Artifact:
    """The one product of an instance, which every consumer asks for (``manifesto.render.artifact``
    makes it; the pair's ARTIFACT task, ``manifesto.tasks.pair``, hands it out): a Kubernetes
    layer's objects or a Slurm batch script, with its text and file suffix.

    ``objects`` are the instance's objects (or its routing layer's) in apply order, each
    carrying the artifact-digest annotation (``render.k8s.DIGEST_ANNOTATION``) that ``text``
    shows; None for a batch script. ``layer`` is "manifest" (the whole instance) or
    "routing"; ``inputs`` the files the pair read and ``warnings`` the checks its resolution
    could not make (``tasks.inputs.plan_warnings``), both set by the task (empty when made
    from a Plan alone). Made only by ``render.artifact``, after the name and size checks."""

    __slots__ = ("text", "suffix", "layer", "inputs", "warnings", "_objects", "_digest")

    def __init__(self, text: str, suffix: str, layer: str = "manifest", objects: list[dict] | None = None,
                 digest: str = "", inputs: tuple[str, ...] = (), warnings: tuple[str, ...] = ()) -> None:
        self.text, self.suffix, self.layer, self.inputs, self.warnings = text, suffix, layer, inputs, warnings
        self._objects, self._digest = objects, digest

    @property
    def objects(self) -> list[dict] | None:
        """The objects with the digest annotation (fresh copies each call), or None for a batch script."""
        if self._objects is None:
            return None
        from manifesto.render.k8s import annotated

        return annotated(self._objects, self._digest)

    @property
    def digest(self) -> str:
        """The artifact digest every object carries ("" for a batch script)."""
        return self._digest

    def read_from(self, inputs, warnings=()) -> Artifact:
        """This artifact, with the files the pair read to make it and its resolution's warnings."""
        return Artifact(self.text, self.suffix, self.layer, self._objects, self._digest, tuple(inputs),
                        tuple(warnings))
