#!/usr/bin/env python3
"""The fake kubectl of the tests: ``manifesto.testing.fake_kubectl`` (shipped as ``manifesto-fake-kubectl``)."""

from manifesto.testing.fake_kubectl import main

if __name__ == "__main__":
    main()
