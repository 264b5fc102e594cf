"""The trusted edge: the one way bytes from outside the process come in and text goes out.

Everything manifesto reads that it did not compute itself enters here: files (specs,
profiles, BUILD.yaml, ``config_json``, artifacts), git blobs, store and remote-cache
entries, HTTP replies, artifact headers, environment values and other programs' output.
The edge bounds size, depth and time, confines paths to named roots, decodes strictly
(UTF-8, typed Structs whose path-like fields obey a grammar) and refuses with one clear
error. Nothing it returns runs as code or picks a path by itself.

Text that goes back out goes through :mod:`manifesto.edge.escape`: a terminal line, a
markdown cell of a pull-request comment, a shell word of a completion candidate.

Modules (each imported only by the commands that need it, so start-up stays small):

- ``escape``: terminal, markdown and shell-word escaping;
- ``limits``: the bounds, and a non-recursive pre-check of YAML and JSON texts (depth,
  nodes, aliases, integer size) that runs before any recursive parser;
- ``files``: confined, bounded, strictly decoded file reads;
- ``raw``: the bounded read of a regular file the others build on;
- ``fs``: the confined, non-following open, atomic writes (``write_atomic``) and removal;
- ``signatures``: stat signatures and a file's digest read now (the build's stat cache);
- ``jsonio``: JSON with the same limits;
- ``entries``: store and remote-cache entries decoded into typed Structs, and the store's
  envelope (a checked header, a bounded inflate);
- ``http``: the remote cache's HTTP client (origin-locked, body cap, deadlines);
- ``git``: blobs and revisions for ``diff --base``;
- ``header``: an artifact header parsed into the manifesto command it records.

A test (``tests/edge/test_edge_bypass.py``) fails on any ``open(``, ``urllib``,
``http.client`` or ``subprocess`` use outside the edge and the kubectl/Slurm runners.
"""
