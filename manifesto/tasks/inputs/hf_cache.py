"""The Hugging Face cache: the config.json of a model's snapshot (``explain`` only; builds and
renders never look here, so they stay hermetic)."""

from __future__ import annotations

__all__ = ["hf_cache_config"]


def hf_cache_config(hf_home: str, model_id: str, revision: str | None) -> str | None:
    """config.json of the snapshot that refs/<revision or main> names in the Hugging Face cache."""
    import os
    import re

    from manifesto.edge.files import read_text
    from manifesto.errors import InputError

    repo = os.path.join(hf_home, "hub", "models--" + model_id.replace("/", "--"))
    ref = os.path.join(repo, "refs", revision or "main")
    try:
        commit = read_text(ref, ref, limit=4096, what="ref file").strip() if "/.." not in ref else ""
    except InputError:
        commit = revision or ""  # a revision may name the snapshot (commit) directly
    # A snapshot is named by its commit: one word, never '..' or a path.
    ok = re.fullmatch(r"[\w.-]+", commit) is not None and commit.strip(".") != ""
    path = os.path.join(repo, "snapshots", commit, "config.json") if ok else ""
    return path if path and os.path.isfile(path) else None
