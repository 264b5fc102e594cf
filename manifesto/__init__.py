"""llm-manifesto: render vLLM / llm-d deployments as plain Kubernetes YAML or Slurm scripts.

Importing the package is deliberately cheap: the heavy modules (pydantic schemas,
ruamel loader, renderers) load only when a command needs them.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
