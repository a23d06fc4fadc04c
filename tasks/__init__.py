"""Deterministic long-context tasks at exact token lengths."""

GENERATOR_VERSION = "1"
