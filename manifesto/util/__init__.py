"""Small modules several layers share: hashes and the content digest (``hashing``), bounded
numbers (``numbers``), Kubernetes quantities (``quantity``), value grammars (``rules``), the
YAML writer (``yamlemit``) and the ``-o/--output`` printer (``outputs``). They import only
each other and ``manifesto.errors``. A module one package owns lives in that package (file
access in ``edge``, the ``computed`` evaluator in ``resolve``, the gitops grammar in
``build_graph``, the build's status words in ``tasks``).
"""
