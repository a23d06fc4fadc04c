"""The optional LLM judge of free-form answers (`--judge-endpoint URL`): a second opinion recorded beside the
deterministic score, never in its place."""
