"""``manifesto completion SHELL``: the bash, zsh and fish scripts.

bash and zsh: shtab writes the script from the parser (commands, flags, choices), with a
custom-completer hook on every argument that names something (a catalog entry, an address,
an accelerator, a live ID, a path); the hook passes the whole line to ``manifesto
__complete`` (see ``manifesto.cli.complete``). fish: a small script that asks ``__complete``
for everything. shtab is imported only here, when a script is written. Paths are completed
by the shell itself, so quoting, ``~`` and directories behave as the user expects.
"""

from __future__ import annotations

from manifesto.cli.hints import ADDRESSES, CATALOG, FILES, INSTANCES  # noqa: F401
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register", "script", "CATALOG", "INSTANCES", "ADDRESSES", "FILES"]

# bash: shtab writes the parser walk (commands, options, choices); every argument that names
# something (catalog entries, addresses, accelerators, live IDs, paths) calls this hook, which
# asks `manifesto __complete` with the whole line, so `-n NS` or `--cluster C` typed earlier count.
# COMP_WORDBREAKS splits `--opt=value` and `a:b` into words shtab's walk does not understand:
# those go to the hook directly. bash inserts a candidate as it is printed: `__complete bash`
# prints shell words ('$(touch x)'), and paths are quoted here with printf %q (a directory gets
# its / and no space after it), so nothing offered is ever expanded on the line.
_BASH_PREAMBLE = r"""
_manifesto_values() {
  local line="${COMP_LINE:0:COMP_POINT}" cur="${COMP_WORDS[COMP_CWORD]}" c files=0
  while IFS= read -r c; do
    if [[ $c == :files ]]; then files=1; elif [[ -n $c ]]; then printf '%s\n' "$c"; fi
  done < <(COMP_WORDBREAKS="$COMP_WORDBREAKS" manifesto __complete bash -- "$line" 2>/dev/null)
  if (( files )); then
    [[ $cur == [=:] ]] && cur=""
    while IFS= read -r c; do
      if [[ -d $c ]]; then
        printf '%q/\n' "$c"
        compopt -o nospace 2>/dev/null
      else
        printf '%q\n' "$c"
      fi
    done < <(compgen -f -- "$cur")
  fi
  return 0
}
"""

_BASH_TAIL = r"""
_manifesto() {
  local c
  # Candidates come quoted as they must stand on the line: readline must not quote them again.
  compopt +o filenames 2>/dev/null
  if [[ ${COMP_WORDS[COMP_CWORD]} == [=:] || ${COMP_WORDS[COMP_CWORD-1]} == [=:] ]]; then
    COMPREPLY=()
    while IFS= read -r c; do COMPREPLY+=("$c"); done < <(_manifesto_values)
  else
    _shtab_manifesto "$@"
  fi
  return 0
}
complete -F _manifesto manifesto
"""

_BASH_HEAD = """\
# bash completion for manifesto (written by shtab from the CLI's parser).
#   source <(manifesto completion bash)                     # this shell
#   manifesto completion bash > ~/.local/share/bash-completion/completions/manifesto
# shtab's generated walk trips these style checks; the hand-written parts pass them all.
# shellcheck disable=SC2004,SC2086,SC2199,SC2219
"""

# zsh: shtab writes the _arguments specs; the same hook answers for every argument that names
# something, from the whole line ($LBUFFER). A `--opt=value` word goes to it directly (the
# generated specs declare `--opt value` only). compadd quotes what it inserts (no -Q), so the
# values come plain; their descriptions come escaped from `__complete`.
_ZSH_PREAMBLE = r"""
_manifesto_values() {
  local -a values shown
  local line value files=0
  local -a typed=("${(@Q)${(z)LBUFFER}}")
  [[ -z $LBUFFER || $LBUFFER == *[[:space:]] ]] && typed+=("")
  for line in "${(@f)$(manifesto __complete zsh -- "${(@)typed[2,-1]}" 2>/dev/null)}"; do
    [[ -z $line ]] && continue
    if [[ $line == :files ]]; then files=1; continue; fi
    value=${line%%$'\t'*}
    [[ -n $IPREFIX && $value == "$IPREFIX"* ]] && value=${value#"$IPREFIX"}
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
"""

_ZSH_TAIL = r"""
_manifesto() {
  if [[ $PREFIX == --*=* ]]; then
    _manifesto_values
  else
    _shtab_manifesto "$@"
  fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _manifesto "$@"
elif (( $+functions[compdef] )); then
  compdef _manifesto manifesto
else
  print -u2 "manifesto: run compinit before sourcing the completion script"
fi
"""

_ZSH_HEAD = """\
#compdef manifesto
# zsh completion for manifesto (written by shtab from the CLI's parser).
#   source <(manifesto completion zsh)      # this shell, after compinit
#   manifesto completion zsh > "${fpath[1]}/_manifesto"
"""

_ZSH_SHTAB_TAIL = """\
typeset -A opt_args

if [[ $zsh_eval_context[-1] == eval ]]; then
  # eval/source/. command, register function for later
  compdef _shtab_manifesto -N manifesto
else
  # autoload from fpath, call function directly
  _shtab_manifesto "$@"
fi
"""

_FISH = r"""# fish completion for manifesto.
#   manifesto completion fish | source      # this shell
#   manifesto completion fish > ~/.config/fish/completions/manifesto.fish
function __manifesto_complete
    set -l tokens (commandline -opc)
    set -e tokens[1]
    # The token as typed, quotes and escapes removed by fish's own rules (inside single
    # quotes a backslash escapes only \\ and '); fish escapes what it inserts itself.
    set -l cur (commandline -ct | string unescape)
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

_SHELLS = ("bash", "zsh", "fish")
_HOOK = "_manifesto_values"


def register(sub, add) -> None:
    p = add(sub, "completion", help=SUMMARIES["completion"],
            description="Print a completion script. Load it with `source <(manifesto completion bash)`, "
            "`source <(manifesto completion zsh)` (after compinit) or `manifesto completion fish | source`. "
            "The script runs `manifesto` from PATH: with `uv run`, install the command first "
            "(`uv tool install .`).")
    p.add_argument("shell", choices=_SHELLS, help="the shell to print the script for")
    p.set_defaults(func=_completion)


def script(shell: str) -> str:
    if shell == "fish":
        return _FISH
    return _shtab_script(shell)


def _hooked_parser():
    """The whole parser, with every argument that names something completed by the hook."""
    import argparse

    from manifesto.cli.hints import fill
    from manifesto.cli.parser import get_parser

    parser = get_parser()
    fill(parser)
    todo = [parser]
    while todo:
        for action in todo.pop()._actions:
            if isinstance(getattr(action, "complete", None), str):
                action.complete = {"bash": _HOOK, "zsh": _HOOK}
                if not action.option_strings and action.help == argparse.SUPPRESS:
                    # shtab leaves hidden arguments out, but a hidden positional still takes a
                    # word (deploy routing SPEC): this parser only writes the script
                    action.help = action.metavar or action.dest
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return parser


def _shtab_script(shell: str) -> str:
    import shtab  # only here: never on the completion or --help path

    body = shtab.complete(_hooked_parser(), shell, preamble={"bash": _BASH_PREAMBLE, "zsh": _ZSH_PREAMBLE})
    # shtab registers its own function; ours (the tail) takes over, sending --opt=value to the hook.
    if shell == "bash":
        body = body.rstrip("\n").removesuffix("complete -o bashdefault -F _shtab_manifesto manifesto") + "\n"
        return _BASH_HEAD + body + _BASH_TAIL
    body = body.removeprefix("#compdef manifesto\n")
    tail = body.rfind("typeset -A opt_args")
    if tail < 0 or body[tail:].strip() != _ZSH_SHTAB_TAIL.strip():
        raise RuntimeError("shtab's zsh script changed shape; update manifesto.cli.completion")
    return _ZSH_HEAD + body[:tail] + "typeset -A opt_args\n" + _ZSH_TAIL


def _completion(args) -> int:
    import sys

    sys.stdout.write(script(args.shell))
    return 0
