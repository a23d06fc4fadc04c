"""Pairing the samples of two runs of one suite: by prompt sha256 where the prompts are byte-identical,
else by task fields (`recipe.task_key()`: the same question at the same length and depth, counted by
another tokenizer, so the prompts differ and the comparison says so). Samples that errored on either side
leave the pairs and are counted by kind per side, never scored as wrong."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ctxprobe.evals.records.load import Run
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import DATASET_DIGEST
from ctxprobe.tasks.lengths import format_length


@dataclass(frozen=True)
class Pair:
    base: SampleRecord
    cand: SampleRecord
    same_prompt: bool


@dataclass(frozen=True)
class Pairing:
    """The scored pairs of one baseline/candidate comparison and what was left out, and why."""

    pairs: list[Pair]
    by_prompt: int
    by_task: int
    errored_base: dict[str, int] = field(default_factory=dict)
    errored_cand: dict[str, int] = field(default_factory=dict)
    unpaired_base: int = 0
    unpaired_cand: int = 0

    @property
    def prompts_differ(self) -> bool:
        return self.by_task > 0


def pair_runs(base: Run, cand: Run) -> Pairing:
    """Pair `cand` with `base`, in the order of the candidate's sample ids (so that the examples and every
    statistic read the same pairs in the same order however the runs' requests finished); a UserError naming
    the first difference when no sample is in common."""
    by_sha = {r.sample.prompt_sha256: r for r in base.records}
    by_task = {r.sample.recipe.task_key(): r for r in base.records}
    matched: list[Pair] = []
    used: set[str] = set()
    for rec in sorted(cand.records, key=lambda r: r.sample.sample_id):  # not the order requests finished in
        partner = by_sha.get(rec.sample.prompt_sha256)
        same = partner is not None
        if partner is None:
            partner = by_task.get(rec.sample.recipe.task_key())
        if partner is None or partner.sample.sample_id in used:
            continue
        used.add(partner.sample.sample_id)
        matched.append(Pair(partner, rec, same))
    if not matched:
        raise UserError(f"{cand.dir} has no sample in common with {base.dir}:{first_difference(base, cand)}")
    scored = [p for p in matched if p.base.error is None and p.cand.error is None]
    return Pairing(
        pairs=scored,
        by_prompt=sum(1 for p in scored if p.same_prompt),
        by_task=sum(1 for p in scored if not p.same_prompt),
        errored_base=dict(Counter(p.base.error.value for p in matched if p.base.error is not None)),
        errored_cand=dict(Counter(p.cand.error.value for p in matched if p.cand.error is not None)),
        unpaired_base=len(base.records) - len(used),
        unpaired_cand=len(cand.records) - len(matched),
    )


def first_difference(base: Run, cand: Run) -> str:
    """Why the two runs hold no sample in common: each fact that tells them apart on a line of its own
    (suite, mode, lengths, generator version, tokenizer, template, dataset, task parameters, depths, seeds)."""
    left, right = _facts(base), _facts(cand)
    reasons = [
        f"{name} {left[name]} vs {right[name]}{_WHY.get(name, '')}" for name in left if left[name] != right[name]
    ]
    if not reasons:
        return " the same suite, mode, lengths, generator, tokenizer, template, parameters, depths and seeds, but no prompt in common"
    return "\n  " + "\n  ".join(reasons)


_WHY = {
    "mode": " (chat and completions prompts differ: a chat run pairs only with a chat run)",
    "template": " (each prompt layout writes its own prompts)",
    "generator version": " (another generator builds other prompts)",
    "dataset": (
        " (a run from before datasets were named by content drew its samples by the file's path: "
        "`ctxprobe run --against` that run rebuilds its samples from the same file)"
    ),
}


def _facts(run: Run) -> dict[str, str]:
    recipes = [r.sample.recipe for r in run.records]
    return {
        "suite": repr(run.manifest.suite.name),
        "mode": _listed(sorted({r.mode for r in recipes})),
        "lengths": ",".join(format_length(n) for n in sorted({r.context_tokens for r in recipes})) or "none",
        "generator version": _listed(sorted({f"{r.family} v{r.generator_version}" for r in recipes})),
        "tokenizer": run.manifest.tokenizer or _listed(sorted({r.tokenizer for r in recipes})),
        "template": _listed(sorted({str(r.params.get("template", "ctxprobe")) for r in recipes})),
        "dataset": _listed(sorted({_dataset(r.params) for r in recipes})),
        "task parameters": _listed(sorted({_params(r.family, r.params) for r in recipes})),
        "depths": _listed(f"{d:g}" for d in sorted({r.depth for r in recipes})),
        "seeds": _listed(str(s) for s in sorted({r.seed for r in recipes})),
    }


def _dataset(params: dict[str, object]) -> str:
    """A task's dataset as its identity has it: its content digest, or (a recipe from before digests) its path."""
    if params.get(DATASET_DIGEST):
        return f"sha256:{str(params[DATASET_DIGEST])[:12]}"
    return f"path {params['dataset']}" if params.get("dataset") else "none"


def _params(family: str, params: dict[str, object]) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in ("template", "dataset", DATASET_DIGEST))
    return f"{family}({shown})"


def _listed(values: Iterable[str]) -> str:
    """The distinct values as one string (the first 6, and how many more)."""
    distinct = list(dict.fromkeys(values))
    if not distinct:
        return "none"
    more = f" (+{len(distinct) - 6} more)" if len(distinct) > 6 else ""
    return ",".join(distinct[:6]) + more
