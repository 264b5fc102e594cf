"""``python -m manifesto.build_graph COMMAND``: the build commands on their own.

The parsers and handlers are ``manifesto.cli.build_cmds`` (all argparse lives in the CLI);
the main ``manifesto`` CLI mounts the same parsers.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from manifesto.cli.build_cmds import main

    code = main()
    import gc

    gc.freeze()  # as ``manifesto.cli.run`` does: the exit frees memory without a collector pass
    sys.exit(code)
