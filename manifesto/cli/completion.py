"""``manifesto completion SHELL``: the bash, zsh and fish glue around ``manifesto __complete``.

Each script only passes the words before the cursor to ``manifesto __complete`` (see
``manifesto.cli.complete``), which answers from the argparse tree, and hands the
candidates to the shell. Paths are completed by the shell itself, so quoting, ``~`` and
directories behave as the user expects.
"""

from __future__ import annotations

from manifesto.cli.hints import ADDRESSES, CATALOG, FILES, INSTANCES  # noqa: F401

__all__ = ["register", "script", "CATALOG", "INSTANCES", "ADDRESSES", "FILES"]

_BASH = r"""# bash completion for manifesto.
#   source <(manifesto completion bash)                     # this shell
#   manifesto completion bash > ~/.local/share/bash-completion/completions/manifesto
_manifesto() {
  local line="${COMP_LINE:0:COMP_POINT}" cur="${COMP_WORDS[COMP_CWORD]}" c files=0
  COMPREPLY=()
  while IFS= read -r c; do
    if [[ $c == :files ]]; then files=1; elif [[ -n $c ]]; then COMPREPLY+=("$c"); fi
  done < <(COMP_WORDBREAKS="$COMP_WORDBREAKS" manifesto __complete bash -- "$line" 2>/dev/null)
  if (( files )); then
    [[ $cur == [=:] ]] && cur=""
    compopt -o filenames 2>/dev/null
    while IFS= read -r c; do COMPREPLY+=("$c"); done < <(compgen -f -- "$cur")
  fi
  return 0
}
complete -F _manifesto manifesto
"""

_ZSH = r"""#compdef manifesto
# zsh completion for manifesto.
#   source <(manifesto completion zsh)      # this shell, after compinit
#   manifesto completion zsh > "${fpath[1]}/_manifesto"
_manifesto() {
  local -a values shown
  local line value files=0
  for line in "${(@f)$(manifesto __complete zsh -- "${(@Q)words[2,CURRENT]}" 2>/dev/null)}"; do
    [[ -z $line ]] && continue
    if [[ $line == :files ]]; then files=1; continue; fi
    value=${line%%$'\t'*}
    values+=("$value")
    if [[ $line == *$'\t'* ]]; then shown+=("$value  -- ${line#*$'\t'}"); else shown+=("$value"); fi
  done
  (( ${#values} )) && compadd -l -d shown -a values
  if (( files )); then
    [[ $PREFIX == -* ]] && compset -P '*='
    _files
  fi
  return 0
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _manifesto "$@"
elif (( $+functions[compdef] )); then
  compdef _manifesto manifesto
else
  print -u2 "manifesto: run compinit before sourcing the completion script"
fi
"""

_FISH = r"""# fish completion for manifesto.
#   manifesto completion fish | source      # this shell
#   manifesto completion fish > ~/.config/fish/completions/manifesto.fish
function __manifesto_complete
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cur (commandline -ct)
    set -l files 0
    for line in (manifesto __complete fish -- $tokens "$cur" 2>/dev/null)
        if test "$line" = ":files"
            set files 1
        else
            printf '%s\n' $line
        end
    end
    if test $files = 1
        set -l opt (string match -r -- '^-[^=]*=' "$cur")
        for path in (__fish_complete_path (string replace -r -- '^-[^=]*=' '' "$cur"))
            printf '%s%s\n' "$opt" $path
        end
    end
end
complete -c manifesto -f -a '(__manifesto_complete)'
"""

_SCRIPTS = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}


def register(sub, add) -> None:
    p = add(sub, "completion", help="print a shell completion script (bash, zsh or fish)",
            description="Print a completion script. Load it with `source <(manifesto completion bash)`, "
            "`source <(manifesto completion zsh)` (after compinit) or `manifesto completion fish | source`. "
            "The script runs `manifesto` from PATH: with `uv run`, install the command first "
            "(`uv tool install .`).")
    p.add_argument("shell", choices=tuple(_SCRIPTS))
    p.set_defaults(func=_completion)


def script(shell: str) -> str:
    return _SCRIPTS[shell]


def _completion(args) -> int:
    import sys

    sys.stdout.write(script(args.shell))
    return 0
