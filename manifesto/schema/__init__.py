"""Input schemas (pydantic): model spec, cluster profile, routing profile, image catalog.

Every model forbids unknown keys at every depth, so a typo fails loudly at load time.
"""
