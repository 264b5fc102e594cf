"""Resolution: validated spec + cluster profile + options -> a frozen, pure ``Plan``."""
