"""The render function the build calls, kept injectable.

A renderer is a module providing::

    RenderOptions(user, namespace, routing_profile, idle_shutdown, idle_timeout_minutes)
    render_pair(model_path, cluster_path, options) -> Artifact(text, suffix, inputs)
    code_fingerprint_paths() -> list[str]
    confine(roots) -> context manager (optional): renders read only files below roots

The product's renderer is ``manifesto.target``. Engine tests substitute a small fake
through ``MANIFESTO_BUILD_RENDERER`` (a module name), read once at the CLI edge;
the module name is part of the code fingerprint, so switching renderers rebuilds.
Renders run with a scrubbed environment: no ``$USER``, kube config, user catalog or
``MANIFESTO_*`` setting can leak into an artifact.
"""

from __future__ import annotations

import os

__all__ = ["DEFAULT", "ENV_VAR", "OPTION_FIELDS", "hermetic_env", "load", "renderer_name"]

DEFAULT = "manifesto.target"
#: The fields of ``RenderOptions``, in the order the build keeps them.
OPTION_FIELDS = ("user", "namespace", "routing_profile", "idle_shutdown", "idle_timeout_minutes")
ENV_VAR = "MANIFESTO_BUILD_RENDERER"

# Variables a renderer could turn into output; they are removed while rendering.
_SCRUBBED = ("USER", "LOGNAME", "USERNAME", "KUBECONFIG", "XDG_CONFIG_HOME", "EDITOR")
_SCRUBBED_PREFIXES = ("MANIFESTO_",)

_loaded: dict[str, object] = {}


def renderer_name(environ=None) -> str:
    """The renderer module to use: the test hook, or the product's renderer."""
    environ = os.environ if environ is None else environ
    return environ.get(ENV_VAR) or DEFAULT


def load(name: str):
    """Import the renderer module ``name`` (once per process)."""
    module = _loaded.get(name)
    if module is None:
        import importlib

        module = importlib.import_module(name)
        _loaded[name] = module
    return module


class hermetic_env:
    """Context manager: remove user- and cluster-specific variables, restore after.

    ``HOME`` points at an empty directory name so no ``~/.config`` catalog is found.
    """

    def __init__(self, home: str) -> None:
        self.home = home
        self.saved: dict[str, str] = {}

    def __enter__(self) -> "hermetic_env":
        for name in list(os.environ):
            if name in _SCRUBBED or name.startswith(_SCRUBBED_PREFIXES) or name == "HOME":
                self.saved[name] = os.environ.pop(name)
        os.environ["HOME"] = self.home
        return self

    def __exit__(self, *exc) -> None:
        os.environ.pop("HOME", None)
        os.environ.update(self.saved)
        self.saved = {}
