"""The tasks: one pipeline from input files to rendered text.

    runner     run(task, request, store)
    core       Task, the typed requests (FileRequest, ParseRequest, PairRequest,
               MonitoringRequest, GitopsRequest; each input by path or as loaded),
               the products (FileDigest, ParsedFile, Outcome) and ``run``
    memo       Tasks: the memo of one build or command (each input read and hashed once,
               the parse, resolve and render products kept in the store)
    entries    the store entries those products are kept as (msgspec Structs)
    pair       a pair's load, resolve, render and explain; monitoring; gitops; Products
    inputs     the loading around resolution, one module per input kind (a package)
    status     a task's outcome words (Status), kept in the build manifest too
    commands   the single commands' index entries: a hit prints without loading anything

``run(task, request, store)`` is the one way to a pair's outcome, for the single commands,
the build's executor and its API alike. This package is the product's build renderer too
(``manifesto.build_graph.renderer.DEFAULT``): ``run``, ``RenderOptions``, ``prepare`` and
``code_fingerprint_paths``. Importing it is cheap (a command's cache hit goes through
``commands``); the names load on first use.
"""

from __future__ import annotations

__all__ = ["Task", "FileRequest", "FileDigest", "ParseRequest", "ParsedFile", "PairRequest",
           "MonitoringRequest",
           "GitopsDeployment", "GitopsMonitoring", "GitopsRequest", "Outcome", "Tasks", "health_checks", "run", "RenderOptions", "prepare", "code_fingerprint_paths"]

_FROM = {"run": "runner", "Tasks": "memo", "health_checks": "pair", "RenderOptions": "pair", "prepare": "pair", "code_fingerprint_paths": "pair"}


def __getattr__(name: str):
    if name in __all__:
        import importlib

        return getattr(importlib.import_module(f"manifesto.tasks.{_FROM.get(name, 'core')}"), name)
    raise AttributeError(f"module 'manifesto.tasks' has no attribute {name!r}")
