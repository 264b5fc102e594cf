"""Placeholder entry point replaced by manifesto/cli/ (being written)."""
import sys


def run() -> None:
    sys.exit(0)
