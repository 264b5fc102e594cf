"""Reading inputs: YAML with positions (``yamlio``), loading and validating model specs and
cluster profiles (``inputs``), the catalogs (``catalog``), the reference implementation's
spellings (``spellings``) and content digests with the code fingerprint (``digest``).

Importing the package is cheap: each module loads what it needs.
"""
