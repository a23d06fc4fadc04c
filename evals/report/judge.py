"""The judge beside the exact score: how often the optional LLM judge agreed with the deterministic rules,
and every sample where they differ (or where the judge gave no verdict), so that a disagreement is read,
never silently resolved either way. The exact score stays the table's score."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.evals.records.judge import JudgeVerdict, read_verdicts
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.variant import variant_params

SHOWN = 40  # disagreements listed at most (all are in judge.jsonl)


def render_judge(records: list[SampleRecord], run_dir: Path) -> str:
    """The judge's section of the report; "" when the run was not judged."""
    verdicts = read_verdicts(run_dir)
    by_id = {r.sample.sample_id: r for r in records}
    held = [v for v in verdicts.values() if v.sample_id in by_id]
    if not held:
        return ""
    given = [v for v in held if v.verdict is not None]
    differ = [v for v in given if v.disagrees()]
    failed = [v for v in held if v.error is not None]
    judge_right = sum(1 for v in given if v.verdict == "correct")
    exact_right = sum(1 for v in given if v.exact)
    lines = [
        f"\njudge ({held[0].judge}) beside the exact score: {len(given)} judged, "
        f"{len(given) - len(differ)} agree, {len(differ)} disagree, {len(failed)} judge errors",
        f"  on the judged samples: exact {exact_right}/{len(given)} correct, judge {judge_right}/{len(given)}",
    ]
    for v in differ[:SHOWN]:
        lines.append("  " + _row(by_id[v.sample_id], v))
    if len(differ) > SHOWN:
        lines.append(f"  ... {len(differ) - SHOWN} more in judge.jsonl")
    for v in failed[:5]:
        lines.append(f"  judge error on {v.sample_id}: {v.error}")
    return "\n".join(lines) + "\n"


def _row(record: SampleRecord, verdict: JudgeVerdict) -> str:
    recipe, score = record.sample.recipe, record.score
    name = variant_params(recipe.params, recipe.family).get("name", recipe.family)
    said = " | ".join(score.extracted) if score else ""
    return (
        f"{record.sample.sample_id} {name} {recipe.context_tokens}@{recipe.depth:g}%: exact "
        f"{'correct' if verdict.exact else 'wrong'}, judge {verdict.verdict} (extracted {said!r}; "
        f"judge: {verdict.reason[:120]!r})"
    )
