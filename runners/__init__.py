"""Endpoint clients, engine probes and the embedded local engine launcher."""
