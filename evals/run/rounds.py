"""`--stop decided`: a run planned up to the cap, sent in rounds of seeds. Round i sends seed i's whole depth
sweep of every (task, length) whose cells are not decided yet (only the undecided depths), so the
cache-aware order still sends prompts that share a prefix one after another. Before each round the cells
are judged from the records on disk, so a resumed run continues the same rounds and never sends a
finished sample again."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ctxprobe.evals.compare.sequential.cells import StopOptions, StopRule, resolve_rule, stop_reason
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.identity import CellKey, cell_key
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite


def stop_rule(opts: object, suite: Suite) -> StopRule:
    """The run's stopping rule: the suite's `stop:`, with the options given (`RunOptions.stopping`) on top."""
    return resolve_rule(suite.stop, {k: getattr(opts, k) for k in StopOptions.model_fields})


def capped_suite(suite: Suite, rule: StopRule) -> Suite:
    """The suite planned to the cap: every task `rule.cap(samples)` seeds (a fixed rule: the suite itself)."""
    if rule.stop == "fixed":
        return suite
    tasks = [t.model_copy(update={"samples": rule.cap(t.samples or suite.samples)}) for t in suite.tasks]
    return suite.model_copy(update={"tasks": tasks})


def fixed_grid_tokens(suite: Suite) -> int:
    """Prompt tokens the suite's own grid (its `samples` per cell) would spend."""
    per_task = [
        (t.samples or suite.samples) * len(t.depths or suite.depths) * sum(t.lengths or suite.lengths)
        for t in suite.tasks
    ]
    return int(sum(per_task) * max(1, len(suite.templates or [None])) * len(suite.question_positions or [None]))


def cell_counts(records: Iterable[SampleRecord]) -> dict[CellKey, tuple[int, int]]:
    """(correct, scored) per cell; errored samples are not in n."""
    counts: dict[CellKey, list[int]] = defaultdict(lambda: [0, 0])
    for record in records:
        if record.error is None and record.score is not None:
            entry = counts[cell_key(record.sample.recipe)]
            entry[0] += int(record.score.correct)
            entry[1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}


def next_round(
    recipes: list[Recipe], records: Iterable[SampleRecord], rule: StopRule, caps: dict[CellKey, int], sent: set[str]
) -> list[Recipe]:
    """The recipes of the earliest seed an undecided cell still has, for every undecided cell (an empty
    list: every cell is decided or out of seeds). Neither a finished sample nor one `sent` already by this
    process (an error is sent again only by a resume) is in it."""
    records = list(records)
    skip = {r.sample.sample_id for r in records if r.error is None} | sent
    counts = cell_counts(records)
    open_recipes = [r for r in recipes if r.sample_id() not in skip]
    undecided = [
        r for r in open_recipes if stop_reason(*counts.get(cell_key(r), (0, 0)), rule, caps[cell_key(r)]) is None
    ]
    if not undecided:
        return []
    first = min(r.seed for r in undecided)
    return [r for r in undecided if r.seed == first]


def cell_caps(recipes: list[Recipe]) -> dict[CellKey, int]:
    """Seeds planned per cell: the cap."""
    caps: dict[CellKey, int] = defaultdict(int)
    for recipe in recipes:
        caps[cell_key(recipe)] += 1
    return dict(caps)


def stop_summary(records: Iterable[SampleRecord], rule: StopRule, caps: dict[CellKey, int]) -> dict[str, int]:
    """Cells by why they stopped (`open` where a run ended before deciding them)."""
    counts = cell_counts(records)
    out: dict[str, int] = defaultdict(int)
    for key, cap in caps.items():
        out[stop_reason(*counts.get(key, (0, 0)), rule, cap) or "open"] += 1
    return dict(out)
