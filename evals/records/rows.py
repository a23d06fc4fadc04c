"""One record as one flat row: the task's coordinates (with the display label of its parameters), its
outcome and the endpoint's figures. `Run.frame()`, the accuracy tables and exports all read records through
`record_row`, so a column means the same thing everywhere."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.absent import ABSENT
from ctxprobe.tasks.variant import variant_params


def variant_label(params: dict[str, Any], family: str | None = None, without: tuple[str, ...] = ()) -> str:
    """A display label for a family's parameters: `variant=multikey, value_kind=uuid, distractors=3`
    (`tasks.variant.variant_params`: defaults left out when the family is named), less the parameters
    named in `without` (a grid axis shown apart); `-` when there are none. Built for display, never parsed."""
    return _label(json.dumps(params, sort_keys=True, default=str), family, without)


@lru_cache(maxsize=4096)
def _label(params_json: str, family: str | None, without: tuple[str, ...]) -> str:
    """The label of parameters given as JSON: a run's thousands of records share a few dozen, and validating
    them against their family's model took most of a table's time."""
    params = json.loads(params_json)
    return ", ".join(f"{k}={v}" for k, v in variant_params(params, family).items() if k not in without) or "-"


def record_row(record: SampleRecord) -> dict[str, Any]:
    """The record's columns: coordinates and `param_<name>`, `variant` (the label), `question` (`present`, or
    `absent`: a key the prompt holds nowhere, `tasks/absent.py`) and `present_variant` (the label of the present
    question it is asked beside), prompt facts, the endpoint's figures, `correct`/`partial`/`extracted` and what
    a wrong answer named (`attribution`, `rival_depth`) where scored, `error` where not."""
    sample, recipe, response, score = record.sample, record.sample.recipe, record.response, record.score
    absent = sample.expected.kind == ABSENT
    row: dict[str, Any] = {
        "sample_id": sample.sample_id,
        "family": recipe.family,
        "variant": variant_label(recipe.params, recipe.family),
        "question": "absent" if absent else "present",
        "present_variant": variant_label({k: v for k, v in recipe.params.items() if k != ABSENT}, recipe.family)
        if absent
        else variant_label(recipe.params, recipe.family),
        "haystack": recipe.haystack,
        "context_tokens": recipe.context_tokens,
        "depth": recipe.depth,
        "seed": recipe.seed,
        "mode": recipe.mode,
        "tokenizer": recipe.tokenizer,
        "generator_version": recipe.generator_version,
    }
    row.update({f"param_{k}": v for k, v in sorted(recipe.params.items())})
    row.update(
        {
            "prompt_sha256": sample.prompt_sha256,
            "planned_tokens": sample.planned_tokens,
            "prompt_tokens": response.prompt_tokens if response else None,
            "cached_tokens": response.cached_tokens if response else None,
            "latency_s": response.latency_s if response else None,
            "ttft_s": response.ttft_s if response else None,
            "endpoint": response.endpoint if response else None,
            "correct": score.correct if score else None,
            "partial": score.partial if score else None,
            "expected": " | ".join(sample.expected.answers),
            "extracted": " | ".join(score.extracted) if score else None,
            "attribution": score.attribution if score else None,
            "rival_depth": score.rival_depth if score else None,
            "error": record.error.value if record.error else None,
            "attempts": record.attempts,
        }
    )
    return row
