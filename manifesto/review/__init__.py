"""Reviewing a change to ``out/``: the semantic diff of rendered artifacts (``semdiff``)
and ``diff --base REV`` (``base``).
"""
