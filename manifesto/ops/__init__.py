"""Cluster workflows: Kubernetes (deploy, file diff/apply, servers, stop, ready) and Slurm.

Kubernetes calls are :class:`manifesto.ops.kubectl.Call` values handed to the one runner,
:func:`manifesto.ops.kubectl.run`; Slurm calls go through :mod:`manifesto.ops.slurm`.
Everything else here is pure.
"""
