"""The loading around resolution, one module per input kind: the image catalog
(``images``), a model's architecture (``architecture``: the bundled records;
``config_json``: a spec's config.json; ``hf_cache``: the Hugging Face cache),
routing profiles (``routing``), the resolve step of a pair's tasks on loaded
inputs and the Plan's warnings (``plan``), and the monitoring artifact's text
with its Slurm refusal (``monitoring``).

Importing the package is cheap: it imports none of its modules.
"""
