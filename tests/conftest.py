"""Shared test setup. Tests import the installed package (`pip install -e ".[test]"` or `pip install ".[test]"`):
`ctxprobe.tasks`, `ctxprobe.runners`, `ctxprobe.evals`."""
