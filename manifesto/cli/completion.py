"""Shell completion generated from the argparse tree (shtab), with catalog-aware completers."""

from __future__ import annotations

__all__ = ["register", "CATALOG", "script"]

# Completers named here are defined in the preambles below; each also offers local paths.
CATALOG = {
    kind: {"bash": f"_manifesto_{kind}", "zsh": f"_manifesto_{kind}"}
    for kind in ("models", "clusters", "routing")
}

_BASH = """
_manifesto_catalog() {
  compgen -W "$(manifesto config list "$1" --output name 2>/dev/null)" -- "$2"
  compgen -f -- "$2"
}
_manifesto_models() { _manifesto_catalog models "$1"; }
_manifesto_clusters() { _manifesto_catalog clusters "$1"; }
_manifesto_routing() { _manifesto_catalog routing "$1"; }
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
"""


def register(sub, add) -> None:
    p = add(sub, "completion", help="print a shell completion script (bash, zsh or fish)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"))
    p.set_defaults(func=_completion)


def script(shell: str) -> str:
    import shtab

    from manifesto.cli import get_parser

    preamble = {"bash": _BASH, "zsh": _ZSH}.get(shell)
    kwargs = {"preamble": preamble} if preamble else {}
    return shtab.complete(get_parser(), shell=shell, **kwargs)


def _completion(args) -> int:
    import sys

    sys.stdout.write(script(args.shell))
    return 0
