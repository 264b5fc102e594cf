"""What a resolution reads besides the spec and the cluster profile, and what its roles share.

:class:`Context` is the caller's half: everything ``resolve(spec, cluster, ctx)`` is given
(options, the image catalog, where each field was written, the routing profile, the model's
architecture, the pinned runtime tables). :class:`Pair` is resolution's own: the facts about
the pair that every role's plan needs, decided once before the roles are resolved.
"""

from __future__ import annotations

from typing import Any

import msgspec

from manifesto.errors import Origin
from manifesto.resolve.architecture import Architecture
from manifesto.resolve.failures import Where
from manifesto.resolve.plan import Accelerator, Options, RoutingPlan

__all__ = ["Context", "Pair", "nowhere"]


def nowhere(path: tuple) -> Origin | None:
    """A ``Where`` for input that was not read from a file: no field has a position."""
    return None


class Context(msgspec.Struct, frozen=True, kw_only=True):
    """The inputs of one resolution other than the spec and the cluster profile. The loading
    layer builds it (``service``); resolution only reads it."""

    options: Options  # the render options (CLI flags, environment, BUILD.yaml)
    images: Any  # the image catalog (a schema.compiled.ImageCatalog)
    where: Where = nowhere  # spec field path -> where it was written
    cluster_where: Where = nowhere  # cluster-profile field path -> where it was written
    # The routing profile --routing-profile names: (source, YAML text, data); None: the spec's own routing.
    epp_config: tuple[str, str, dict] | None = None
    epp_where: Where = nowhere  # routing-profile field path -> where it was written
    architecture: Architecture | None = None  # the model's, loaded by the caller; None: unknown
    architecture_note: str = ""  # why the architecture is unknown
    # The pinned releases' tables (a schema.runtime.RuntimeTables): with them, vLLM arguments,
    # VLLM_* variables and endpoint-picker configurations are checked; None: not checked.
    tables: Any = None


class Pair(msgspec.Struct, frozen=True, kw_only=True):
    """What every role of one (spec, cluster) pair shares, decided once by ``resolve`` before
    the roles are: the threads a role's plan is woven from."""

    spec: Any  # the validated model spec (a schema.compiled.ModelSpec)
    cluster: Any  # the validated cluster profile (a schema.compiled.ClusterProfile)
    ctx: Context
    accel: Accelerator  # the GPU the pair runs on
    instance: str  # the instance name
    image: str  # the vLLM image every role runs
    routing: RoutingPlan | None
    routed_roles: frozenset[str]  # roles the endpoint picker routes to
    moe: bool | None  # the model routes to experts; None: no architecture to tell

    @property
    def options(self) -> Options:
        return self.ctx.options

    @property
    def where(self) -> Where:
        return self.ctx.where

    @property
    def cluster_where(self) -> Where:
        return self.ctx.cluster_where
