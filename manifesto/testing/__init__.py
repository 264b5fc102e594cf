"""Stand-ins for trying manifesto without a cluster (``manifesto-fake-kubectl``).
"""
