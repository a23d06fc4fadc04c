"""Deterministic long-context tasks at exact token lengths."""


# Each family declares its own generator version (`@task_family("niah", version="2")` in
# tasks/registry.py), part of its recipes' ids: see tasks/identity.py for every key a recipe has.
