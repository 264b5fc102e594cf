"""Small modules any layer may use: atomic writes (``fsutil``), hashes, bounded numbers,
Kubernetes quantities, the ``computed`` expression evaluator, value grammars
(``rules``), the build's vocabularies (``status``), the YAML writer and the
``-o/--output`` printer. They import only each other and ``manifesto.errors``.
"""
