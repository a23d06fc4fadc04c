"""The doctor's deployment lint (runners/deployment_lint.py): what the endpoint states, held against the model's
config (`--config`, else the model folder or GGUF the engine states it loaded, where that is on this machine)
and, with `--max-length`, the longest length the user means to run. Lines are findings, not failures: the
doctor's exit code does not change."""

from __future__ import annotations

from ctxprobe.runners.deployment_lint import Deployment, LintLine, lint_deployment
from ctxprobe.runners.engine_facts import read_engine_facts
from ctxprobe.runners.model_facts import served_model_facts
from ctxprobe.runners.retry import RetryPolicy


def endpoint_lint(
    endpoint: str,
    *,
    config: str | None,
    max_length: int | None,
    model: str | None,
    api_key_env: str,
    policy: RetryPolicy,
) -> list[LintLine]:
    """The lint's lines for `endpoint`. A `config` that cannot be read is a `UserError`."""
    engine = read_engine_facts(endpoint, model=model, api_key_env=api_key_env, policy=policy)
    facts = served_model_facts(config, engine.model_path, engine.config_overrides)
    return lint_deployment(Deployment(engine, facts, longest_prompt=max_length, longest_length=max_length))
