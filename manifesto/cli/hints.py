"""What an argument's ``complete`` attribute may name, besides its ``choices``: the kinds of
values ``manifesto.cli.complete`` knows how to offer. A leaf module: every command module may
import it without importing the completion machinery.
"""

from __future__ import annotations

__all__ = ["MODELS", "CLUSTERS", "ROUTING", "INSTANCES", "ADDRESSES", "FILES", "ACCELERATORS", "DEPLOYMENTS",
           "SLURM_JOBS", "CATALOG"]

MODELS, CLUSTERS, ROUTING = "models", "clusters", "routing"
INSTANCES, ADDRESSES, FILES, ACCELERATORS = "instances", "addresses", "files", "accelerators"
DEPLOYMENTS = "deployments"  # deployment target addresses (//:NAME)
SLURM_JOBS = "slurm-jobs"  # your queued and running Manifesto jobs, and deployment addresses

# The ``complete`` attribute of an argument that takes a catalog name (or a path).
CATALOG = {"models": MODELS, "clusters": CLUSTERS, "routing": ROUTING}
