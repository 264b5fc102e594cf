"""Slurm renderer: Plan -> one self-contained sbatch script with a provenance header.

Layout of the script (top to bottom):

* ``#!/bin/bash``, the provenance header (comments), then the ``#SBATCH`` directives.
  sbatch reads directives up to the first command; comments before them are allowed.
* Direct serving (routing disabled): one allocation of ``lws.size`` nodes per replica; with
  several replicas (``lws.replicas``) the script is a job array, one element per replica.
  The array form is used for a single replica too (``--array=0-0``), so the log is always
  ``manifesto-<instance>-<job>_<index>.out`` and ``<job>_<index>`` always names a replica.
* llm-d routing (load-aware or P/D): one allocation, one heterogeneous component per role
  (``#SBATCH hetjob``), Envoy and the endpoint picker on the first node of component 0,
  P/D proxies beside the proxied role's API nodes, and a shared lifetime: the first step
  to end stops the others and ends the job with its status.

Every serving node runs the launch script shared with Kubernetes
(``manifesto.render.launch.launch_script``) through the Slurm ``Platform`` in
``manifesto.render.slurm.task``; Slurm's ``CUDA_VISIBLE_DEVICES`` is passed through and vLLM
gets no ``--device-ids``.
"""

from __future__ import annotations

from manifesto.render.slurm.checks import SlurmUnsupported
from manifesto.render.slurm.script import render_slurm

__all__ = ["render_slurm", "SlurmUnsupported"]
