"""What moved with a drop: the signals `compare` and `history` name beside it.

A drop in accuracy between two builds (or two nights) reads as the model's loss, and at long context the
serving stack is a common cause. Beside each comparison with a drop, one line per signal that moved with it:

- served != planned: the dropped rows' pairs the server counted beyond the tolerance off their planned length
  (records' `prompt_tokens_off`): a prompt cut or padded by the server is not the prompt the recipe asks.
- the cache path: each run's cache-path control (manifest `cache_check`): its verdict, what differed of what
  was checked. Run-wide: a control checks a share of a run's requests, not a row's.
- the deployment lint: a line one run's lint printed that the other's did not (manifest `deployment_lint`).
- the rival share: the share of the dropped rows' answers that named another needle of their prompt
  (`Score.attribution`): a model that confuses neighbours, not one that lost the context. Said where it moved
  by `RIVAL_SHARE_STEP` or more, and only where both runs attributed their wrong answers (records before
  attribution say nothing).

Nothing here decides anything: the lines point at where to look."""

from __future__ import annotations

from ctxprobe.evals.compare.paired.pairing import Pair
from ctxprobe.evals.compare.paired.rows import group_key
from ctxprobe.evals.records.cache_check import CacheCheck
from ctxprobe.evals.records.compare import CompareRow
from ctxprobe.evals.records.load import Run
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.runners.response import LintLine
from ctxprobe.tasks.absent import ABSENT

RIVAL_SHARE_STEP = 0.05  # the rival share moved: by 5 points or more of the dropped rows' answers


def moved_signals(base: Run, cand: Run, pairs: list[Pair], drops: list[CompareRow]) -> list[str]:
    """One line per signal that moved between `base` and `cand` with the rows in `drops` (their pairs, from
    `pairs`, for the signals a sample carries); none without a drop."""
    if not drops:
        return []
    wanted = {(r.level, (r.family, r.variant, r.haystack, r.context_tokens, r.depth)) for r in drops}
    levels = {level for level, _ in wanted}
    dropped = [p for p in pairs if any((level, group_key(p, level)) in wanted for level in levels)]
    lines = [
        served_line(dropped),
        cache_line(base.manifest.cache_check, cand.manifest.cache_check),
        *lint_lines(base.manifest.deployment_lint, cand.manifest.deployment_lint),
        rival_line(dropped),
    ]
    return [line for line in lines if line]


def served_line(pairs: list[Pair]) -> str:
    """Served != planned in the dropped rows' pairs, where the count differs between the runs."""
    base, cand = (sum(1 for p in pairs if getattr(p, side).prompt_tokens_off is not None) for side in ("base", "cand"))
    if base == cand:
        return ""
    return (
        f"served != planned in {base} -> {cand} of {len(pairs)} samples (prompt_tokens_off: a prompt served at "
        "another length than its recipe's)"
    )


def _checks(check: CacheCheck | None) -> str | None:
    """`3 of 8` (checks that differed, of those compared); None where nothing was compared."""
    if check is None or check.verdict in ("off", "unsupported") or not check.checked:
        return None
    return f"{check.differed} of {check.checked}"


def cache_line(base: CacheCheck | None, cand: CacheCheck | None) -> str:
    """The cache path, where its verdict or its differing checks changed between the runs."""
    verdicts = [c.verdict if c is not None else "not recorded" for c in (base, cand)]
    before, after = _checks(base), _checks(cand)
    differed = [c.differed if c is not None and c.checked else 0 for c in (base, cand)]
    if verdicts[0] == verdicts[1] and (before == after or not any(differed)):
        return ""
    now = f"differed in {after} checks" if after else "not checked"
    return f"cache path {now} (baseline {before or 'not checked'}; {verdicts[0]} -> {verdicts[1]})"


def lint_lines(base: list[LintLine] | None, cand: list[LintLine] | None) -> list[str]:
    """The deployment lint: each line new in the candidate or gone from it (a lint that did not run on one side:
    the other side's lines, said so)."""
    if base is None or cand is None:
        ran = cand if base is None else base
        side = "candidate" if base is None else "baseline"
        return [f"deployment lint (run on the {side} only): {line.message}" for line in ran or []]
    before, after = {line.message for line in base}, {line.message for line in cand}
    return [f"deployment lint, new: {line.message}" for line in cand if line.message not in before] + [
        f"deployment lint, gone: {line.message}" for line in base if line.message not in after
    ]


def rival_share(records: list[SampleRecord]) -> tuple[int, int] | None:
    """(rival answers, answers) of the present questions of `records`; None where they hold wrong answers and
    none is attributed (records written before attribution). An absent question (`tasks/absent.py`) is left
    out of both counts: its wrong answer is `hallucinated`, never a rival, and counting it among the answers
    would thin the share of the questions that can be confused."""
    present = [r for r in records if r.sample.expected.kind != ABSENT]
    wrong = [r for r in present if r.score is not None and not r.score.correct]
    if wrong and all(r.score.attribution is None for r in wrong if r.score is not None):
        return None
    return sum(1 for r in wrong if r.score is not None and r.score.attribution == "rival"), len(present)


def rival_line(pairs: list[Pair]) -> str:
    """The rival share of the dropped rows' answers, where it moved by `RIVAL_SHARE_STEP` or more."""
    base, cand = rival_share([p.base for p in pairs]), rival_share([p.cand for p in pairs])
    if base is None or cand is None or not pairs:
        return ""
    (b, n), (c, _) = base, cand
    if not n or abs(c - b) / n < RIVAL_SHARE_STEP:
        return ""
    return (
        f"rival share {100 * b / n:.0f} % -> {100 * c / n:.0f} % ({b} -> {c} of {n} answers named another needle "
        "of their prompt)"
    )
