"""Paired comparison of two sets of sample records: pairing by prompt or task, the paired statistics
(exact McNemar, an exact paired interval, a seeded bootstrap, Holm), the rows and verdicts, and template
sensitivity within one run. Shared by compare, history and the report, so it sits below all three."""
