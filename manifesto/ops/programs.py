"""The runner of the user's own interactive programs: the editor ``config edit`` opens and
the fzf picker ``stop`` offers.

Both are programs the person at the terminal chose (``$EDITOR`` from the real environment,
never a settings file; ``fzf`` found on PATH), run with a fixed argv and no shell, attached
to the terminal. What fzf prints back is only accepted when it is one of the offered lines.
"""

from __future__ import annotations

import subprocess

__all__ = ["edit_file", "pick_line"]


def edit_file(editor: str, path: str) -> str | None:
    """Open ``path`` in ``editor`` (a command line split as a shell would, without running a
    shell) and wait; None when it ran, else why it could not start."""
    import shlex

    try:
        subprocess.run([*shlex.split(editor), path], check=False)
    except (OSError, ValueError) as exc:
        return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return None


def pick_line(fzf: str, lines: list[str], prompt: str) -> str | None:
    """The line the person picked in fzf, or None (cancelled, or an answer not offered)."""
    try:
        proc = subprocess.run([fzf, "--prompt", prompt, "--height", "40%"], input="\n".join(lines) + "\n",
                              stdout=subprocess.PIPE, text=True, errors="replace")
    except OSError:
        return None
    choice = proc.stdout.strip()
    return choice if proc.returncode == 0 and choice in lines else None
