"""What an argument's ``complete`` attribute may name, besides its ``choices``: the kinds of
values ``manifesto.cli.complete`` knows how to offer. A leaf module: every command module may
import it without importing the completion machinery.

Command modules may set ``complete`` where they declare an argument; :func:`fill` gives every
other argument that names something its kind by the argument's ``dest`` (``--cluster`` takes a
cluster profile wherever it appears, ``--vllm-env`` a path, ...), so an argument added later
gets a completer too. ``tests/cli/test_completion.py`` walks the whole parser and fails on any
argument that takes a catalog name, an address or a path and still has none.
"""

from __future__ import annotations

__all__ = ["MODELS", "CLUSTERS", "ROUTING", "INSTANCES", "ADDRESSES", "FILES", "ACCELERATORS", "DEPLOYMENTS",
           "SLURM_JOBS", "ENTRIES", "CATALOG", "BY_DEST", "WORDS", "fill"]

MODELS, CLUSTERS, ROUTING = "models", "clusters", "routing"
INSTANCES, ADDRESSES, FILES, ACCELERATORS = "instances", "addresses", "files", "accelerators"
DEPLOYMENTS = "deployments"  # deployment target addresses (//:NAME)
SLURM_JOBS = "slurm-jobs"  # your queued and running Manifesto jobs, and deployment addresses
ENTRIES = "entries"  # catalog entries of the kind named by the command's KIND argument (config ...)

# The ``complete`` attribute of an argument that takes a catalog name (or a path).
CATALOG = {"models": MODELS, "clusters": CLUSTERS, "routing": ROUTING}

#: The kind of an argument by its ``dest``, for every argument whose module sets none.
BY_DEST = {
    "spec": MODELS,
    "specs": MODELS,
    "spec_rest": MODELS,  # deploy routing SPEC
    "model": MODELS,
    "cluster": CLUSTERS,
    "routing_profile": ROUTING,
    "accelerator": ACCELERATORS,
    "instance": INSTANCES,
    "name": ENTRIES,  # config resolve|export|edit KIND NAME, config import --name
    "file": FILES,
    "filename": FILES,
    "output": FILES,
    "old_output": FILES,
    "directory": FILES,
    "vllm_env": FILES,  # a worktree on the machine that runs vLLM: often the same shared file system
    "user_root": FILES,
    "log_root": FILES,
    "cache_root": FILES,
    "address": ADDRESSES,
    "addresses": ADDRESSES,
}

#: Words a positional takes besides its kind's values: (command path, dest) -> (word, description).
WORDS = {
    ("deploy", "spec"): (("routing", "deploy the routing layer of SPEC"),
                         ("bootstrap", "apply the cluster's namespace prerequisites")),
}


def fill(parser, path: tuple[str, ...] = ()) -> None:
    """Give every argument below ``parser`` that names something and has no ``complete`` (and no
    ``choices``) its kind from :data:`BY_DEST`, and the positionals of :data:`WORDS` their words.
    ``path``: the command words that lead to ``parser``."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                fill(sub, (*path, name))
            continue
        if action.nargs == 0 or action.choices:
            continue
        if getattr(action, "complete", None) is None and action.dest in BY_DEST:
            action.complete = BY_DEST[action.dest]
        words = WORDS.get((" ".join(path), action.dest))
        if words and not action.option_strings:
            action.complete_words = words
