"""The samples an export writes: a suite's (built with a token counter) or a run's (rebuilt from the
recipes it recorded: `samples.jsonl` keeps no prompts, and the recipe gives back the same bytes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.token_counter import PACKAGED_MODEL

DEFAULT_COUNTER = f"local:{PACKAGED_MODEL}"


@dataclass(frozen=True)
class ExportSource:
    name: str  # the suite's name (the lm-eval group is named after it)
    token_counter: str  # where the tokenizer was reached
    samples: list[Sample]


def export_samples(source: str, *, token_counter: str | None = None, lengths: str | None = None,
                   depths: str | None = None, samples: int | None = None, seed: int | None = None) -> ExportSource:
    """A run folder's samples (rebuilt with its own token counter unless one is given), or a suite's
    (name or YAML path, with the overrides) counted with `token_counter` (default: the packaged Gemma)."""
    from ctxprobe.evals.send.serving import open_counter

    path = Path(source)
    if (path / "manifest.json").is_file():
        if any(v is not None for v in (lengths, depths, samples, seed)):
            raise UserError("--lengths, --depths, --samples and --seed apply to suites, not to a run folder")
        from ctxprobe.evals.log.load import load_run

        run = load_run(path)
        spec = token_counter or run.manifest.token_counter
        endpoint = run.manifest.endpoints[0] if run.manifest.endpoints else None
        counter = open_counter(spec, endpoint=endpoint, api_key_env=run.manifest.api_key_env or DEFAULT_API_KEY_ENV)
        recipes = [r.sample.recipe for r in run.records]
        name = run.manifest.suite.name
    else:
        from ctxprobe.evals.send.inline_suite import suite_from_args

        suite = suite_from_args(source, None, None, lengths, depths, samples, None, seed)
        spec = token_counter or DEFAULT_COUNTER
        counter = open_counter(spec, endpoint=None, api_key_env=DEFAULT_API_KEY_ENV)
        recipes = suite.recipes(builder_for(counter).recipe_tokenizer)
        name = suite.name
    builder = builder_for(counter)
    built = [builder.build(r) for r in recipes]
    if not built:
        raise UserError(f"{source} has no samples to export")
    return ExportSource(name=name, token_counter=spec, samples=built)
