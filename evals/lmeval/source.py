"""The samples an export writes: a suite's (built with a token counter) or a run's (rebuilt from the
recipes it recorded: `samples.jsonl` keeps no prompts, and the recipe gives back the same bytes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.evals.run.send.options import SUITE_OVERRIDES
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.errors import UserError, validated
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.token_counter import PACKAGED_MODEL

DEFAULT_COUNTER = f"local:{PACKAGED_MODEL}"


@dataclass(frozen=True)
class ExportSource:
    name: str  # the suite's name (the lm-eval group is named after it)
    token_counter: str  # where the tokenizer was reached
    samples: list[Sample]


def export_samples(source: str, *, token_counter: str | None = None, **overrides: Any) -> ExportSource:
    """A run folder's samples (rebuilt with its own token counter unless one is given), or a suite's
    (name or YAML path) with the suite overrides `ctxprobe run` takes (`SuiteOptions` fields: lengths,
    depths, samples, haystack, seed, templates, question_positions, facts, qa, needles, include), counted
    with `token_counter` (default: the packaged Gemma)."""
    from ctxprobe.runners.served import open_counter

    path = Path(source)
    given = {k: v for k, v in overrides.items() if v not in (None, [])}
    if (path / "manifest.json").is_file():
        if given:
            raise UserError(
                f"{', '.join('--' + k.replace('_', '-') for k in sorted(given))}: suite overrides "
                "apply to suites, not to a run folder"
            )
        from ctxprobe.evals.records.load import load_run

        run = load_run(path)
        spec = token_counter or run.manifest.token_counter
        endpoint = run.manifest.endpoints[0] if run.manifest.endpoints else None
        counter = open_counter(spec, endpoint=endpoint, api_key_env=run.manifest.api_key_env or DEFAULT_API_KEY_ENV)
        recipes = [r.sample.recipe for r in run.records]
        name = run.manifest.suite.name
    else:
        from ctxprobe.evals.run.send.inline_suite import suite_for
        from ctxprobe.evals.run.send.options import SuiteOptions

        unknown = sorted(set(given) - set(SUITE_OVERRIDES))
        if unknown:
            raise UserError(f"not a suite override: {', '.join(unknown)}; known: {', '.join(SUITE_OVERRIDES)}")
        suite = suite_for(validated(SuiteOptions, {"suite": source, **given}))
        spec = token_counter or DEFAULT_COUNTER
        counter = open_counter(spec, endpoint=None, api_key_env=DEFAULT_API_KEY_ENV)
        recipes = suite.recipes(builder_for(counter).recipe_tokenizer)
        name = suite.name
    builder = builder_for(counter)
    built = [builder.build(r) for r in recipes]
    if not built:
        raise UserError(f"{source} has no samples to export")
    return ExportSource(name=name, token_counter=spec, samples=built)
