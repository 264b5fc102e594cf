"""Shell completion (shtab) and the manual page (argparse-manpage), both generated from the
argparse tree so they never drift from the real options."""

from __future__ import annotations

__all__ = ["register", "CATALOG", "INSTANCES", "script", "manpage"]

# Completers named here are defined in the preambles below; each also offers local paths.
CATALOG = {
    kind: {"bash": f"_manifesto_{kind}", "zsh": f"_manifesto_{kind}"}
    for kind in ("models", "clusters", "routing")
}

# Live instance IDs: one quick, non-retrying read, so a slow cluster gives no candidates
# instead of stalling the prompt.
INSTANCES = {"bash": "_manifesto_instances", "zsh": "_manifesto_instances"}
_LIVE = "MANIFESTO_KUBECTL_TIMEOUT=3 MANIFESTO_KUBECTL_RETRIES=0 manifesto servers --output name 2>/dev/null"

_BASH = """
_manifesto_catalog() {
  compgen -W "$(manifesto config list "$1" --output name 2>/dev/null)" -- "$2"
  compgen -f -- "$2"
}
_manifesto_models() { _manifesto_catalog models "$1"; }
_manifesto_clusters() { _manifesto_catalog clusters "$1"; }
_manifesto_routing() { _manifesto_catalog routing "$1"; }
_manifesto_instances() { compgen -W "$({live})" -- "$1"; }
"""

_ZSH = """
_manifesto_catalog() {
  local -a names
  names=(${(f)"$(manifesto config list $1 --output name 2>/dev/null)"})
  compadd -a names
  _files
}
_manifesto_models() { _manifesto_catalog models }
_manifesto_clusters() { _manifesto_catalog clusters }
_manifesto_routing() { _manifesto_catalog routing }
_manifesto_instances() {
  local -a ids
  ids=(${(f)"$({live})"})
  compadd -a ids
}
"""


def register(sub, add) -> None:
    p = add(sub, "completion", help="print a shell completion script (bash, zsh or fish)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"))
    p.set_defaults(func=_completion)
    p = add(sub, "man", help="print the manual page (roff); view it with: manifesto man | man -l -")
    p.set_defaults(func=_man)


def script(shell: str) -> str:
    import shtab

    from manifesto.cli import get_parser

    preamble = {"bash": _BASH, "zsh": _ZSH}.get(shell)
    preamble = preamble.replace("{live}", _LIVE) if preamble else None
    kwargs = {"preamble": preamble} if preamble else {}
    return shtab.complete(get_parser(), shell=shell, **kwargs)


def _completion(args) -> int:
    import sys

    sys.stdout.write(script(args.shell))
    return 0


def manpage() -> str:
    import os

    from build_manpages.manpage import Manpage

    from manifesto import __version__
    from manifesto.cli import get_parser

    # A fixed date keeps the page reproducible (argparse-manpage honours SOURCE_DATE_EPOCH).
    saved = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = "0"
    try:
        page = Manpage(get_parser(), format="single-commands-section", _data={
            "project_name": "llm-manifesto", "version": __version__,
            "description": "render vLLM and llm-d deployments as Kubernetes YAML or Slurm batch scripts"})
        return str(page)
    finally:
        if saved is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = saved


def _man(args) -> int:
    import sys

    sys.stdout.write(manpage())
    return 0
