"""A run's deployment lint (runners/deployment_lint.py), said at its start and kept in its manifest: what the
endpoint states, held against the model's config (`--config`, else the model folder or GGUF the engine states it
loaded, where that is on this machine: the embedded engine's GGUF, the folder ctxprobe starts vLLM with) and the
run's own lengths. One line each; none stops the run (the module's docstring says why)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxprobe.evals.run.send.serving import Served
from ctxprobe.runners.deployment_lint import Deployment, LintLine, lint_deployment
from ctxprobe.runners.engine_facts import probed_facts, read_engine_facts
from ctxprobe.runners.model_facts import served_model_facts
from ctxprobe.runners.retry import RetryPolicy


def run_lint(served: Served, config: str | None, lengths: Sequence[int], answer_room: int) -> list[LintLine]:
    """The lines for the run's first endpoint: its facts, the model's, the longest of `lengths` (the prompts'
    context tokens) and that prompt with `answer_room` tokens for its answer."""
    facts = probed_facts(served.engine) or read_engine_facts(
        served.config.base_urls[0],
        model=served.model,
        api_key_env=served.config.api_key_env,
        policy=RetryPolicy.of(served.config),
    )
    longest = max(lengths, default=None)
    return lint_deployment(
        Deployment(
            facts,
            served_model_facts(config, facts.model_path, facts.config_overrides),
            longest_prompt=longest + answer_room if longest is not None else None,
            longest_length=longest,
        )
    )
