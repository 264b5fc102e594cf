"""The render function the build calls, kept injectable.

A renderer is a module providing::

    RenderOptions(**{field: value for field in OPTION_FIELDS})
    run(task, request, store) -> manifesto.tasks.Outcome
        (task: Task.RENDER with a PairRequest, or Task.MONITORING with a MonitoringRequest;
        request.roots: the build's workspace, renders read only files below it; store: the
        build's memo, manifesto.tasks.memo.Tasks, with its store and code fingerprint)
    code_fingerprint_paths() -> list[str]
    prepare() (optional): import what renders need before a pool of workers is forked

The product's renderer is ``manifesto.tasks``. Engine tests substitute a small fake
through ``MANIFESTO_BUILD_RENDERER`` (a module name), read once at the CLI edge;
the module name is part of the code fingerprint, so switching renderers rebuilds.
A renderer must be a function of its arguments alone: the product's renderer reads
every input by path and never consults the user catalog or the environment, so no
``$USER``, kube config or ``MANIFESTO_*`` setting can reach an artifact.
"""

from __future__ import annotations

import os

from manifesto.resolve.options import BUILD_FIELDS

__all__ = ["DEFAULT", "ENV_VAR", "OPTION_FIELDS", "load", "renderer_name"]

DEFAULT = "manifesto.tasks"
#: The fields of ``RenderOptions`` BUILD.yaml may set, in the order the build keeps them:
#: generated from the definition of every render option.
OPTION_FIELDS = BUILD_FIELDS
ENV_VAR = "MANIFESTO_BUILD_RENDERER"


_loaded: dict[str, object] = {}


def renderer_name(environ) -> str:
    """The renderer module to use: the test hook (``environ``: the entry point's settings), or
    the product's renderer."""
    return environ.get(ENV_VAR) or DEFAULT


def load(name: str):
    """Import the renderer module ``name`` (once per process): the product's renderer, or a
    test renderer whose file lies in this checkout's ``tests/`` folder. The name comes from the
    environment, and an environment value never picks code to run: any other module (one a
    working directory on ``sys.path`` could supply, say) is refused before it is imported."""
    module = _loaded.get(name)
    if module is None:
        import importlib

        if name != DEFAULT:
            _check_test_renderer(name)
        module = importlib.import_module(name)
        _loaded[name] = module
    return module


def _check_test_renderer(name: str) -> None:
    import importlib.util

    from manifesto.errors import BuildError

    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))), "tests", "")
    try:
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
    except (ImportError, ValueError):
        spec = None
    origin = os.path.realpath(spec.origin) if spec is not None and spec.origin else ""
    if not origin.startswith(tests):
        raise BuildError(f"{ENV_VAR}={name[:60]!r}: only the product renderer, or a test renderer in this checkout's "
                         f"tests/ folder, may render a build (unset {ENV_VAR})")
