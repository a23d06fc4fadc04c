"""Deterministic long-context tasks at exact token lengths."""

GENERATOR_VERSION = "2"  # bump whenever any generator's output changes (the golden-prompt test pins it)
