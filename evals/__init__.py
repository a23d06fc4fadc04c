"""Scoring, aggregation, comparison, reports and the ctxprobe CLI."""
