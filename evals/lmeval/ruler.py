"""lm-eval's RULER docs (all 13 tasks: `niah_*`, `ruler_vt`, `ruler_cwe`, `ruler_fwe`, `ruler_qa_squad`,
`ruler_qa_hotpot`) as ctxprobe samples, so their answers can be scored by ctxprobe's exact scorer and tabled
by depth x length. A QA doc's answers are alternatives (any one is correct); every other task's are all
required.

RULER logs no depth: it is found here by locating each answer in `doc.input`, as a percentage of the
haystack (between the task's opening line and its question), and the recipe's depth is that of the first
needle rounded to the nearest 10% so that cells hold several docs (the exact figure stays in
`needles[].depth_pct`). Tasks without a needle have depth 0: aggregation (its words are everywhere) and QA
(an answer need not be written in the documents: HotpotQA's "yes"). Token offsets are not known (-1). The length is `doc.max_length`, RULER's target,
which includes its 128 answer tokens (a "1024" prompt is about 900 tokens).

RULER's own score, `string_match_all`, is a case-insensitive substring test, recall only: `16462207`
counts as the needle `6462207`. It is kept next to ctxprobe's exact score as `ruler_substring` (lm-eval's
logged value where there is one; lm-eval 0.4.13's `string_match_part` for QA is the same fraction for one
answer)."""

from __future__ import annotations

from typing import Any

from ctxprobe.evals.lmeval.logs import LoggedDoc
from ctxprobe.evals.scoring.ruler_score import SUBSTRING, ruler_substring
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Expected, NeedleSpot, Recipe, Sample, sha256_text

FAMILY = "ruler"


def is_ruler_doc(doc: dict[str, Any]) -> bool:
    return {"input", "outputs", "max_length"} <= doc.keys()


__all__ = ["FAMILY", "SUBSTRING", "is_ruler_doc", "ruler_sample", "ruler_substring"]


def is_qa(task: str) -> bool:
    return "qa" in task.split("_")


def has_needles(task: str) -> bool:
    """RULER's retrieval tasks (`niah_*`, `vt`): their answers are written at one place of the haystack."""
    return task.startswith("niah") or task in ("ruler_vt", "vt")


def ruler_sample(logged: LoggedDoc, prompt: str, *, mode: str, tokenizer: str, generator: str) -> Sample:
    """The ctxprobe sample of one RULER doc; `prompt` is the text lm-eval sent (a chat model's user message)."""
    doc = logged.doc
    text, answers = doc["input"], [str(a) for a in doc["outputs"]]
    if not answers:
        raise UserError(f"{logged.path}: doc {logged.doc_id} has no expected answers")
    start, end = _haystack_span(text)
    needles = [_needle(text, answer, start, end) for answer in answers] if has_needles(logged.task) else []
    kind = "any" if is_qa(logged.task) else "value" if len(answers) == 1 else "values"
    recipe = Recipe(
        family=FAMILY,
        params={"task": logged.task},
        haystack=FAMILY,
        context_tokens=int(doc["max_length"]),
        depth=round(needles[0].depth_pct / 10) * 10 if needles else 0.0,
        seed=logged.doc_id,
        mode=mode,
        tokenizer=tokenizer,
        generator_version=generator,
    )
    return Sample(
        sample_id=recipe.sample_id(),
        recipe=recipe,
        prompt=prompt,
        prompt_sha256=sha256_text(prompt),
        planned_tokens=int(doc.get("length") or doc["max_length"]),
        approximate=False,
        question=text[end:].strip(),
        answer_prefix=str(doc.get("gen_prefix") or "").strip(),
        max_tokens=int(logged.gen_kwargs.get("max_gen_toks") or 128),
        expected=Expected(kind=kind, answers=answers),
        needles=needles,
    )


def _haystack_span(text: str) -> tuple[int, int]:
    """Where the haystack lies: after the instruction's first line, before the last line (the question)."""
    first = text.find("\n")
    last = text.rstrip().rfind("\n")
    if first < 0 or last <= first:
        return 0, len(text)
    return first + 1, last


def _needle(text: str, answer: str, start: int, end: int) -> NeedleSpot:
    at = text.find(answer, start, end)
    if at < 0:
        raise UserError(f"RULER answer {answer!r} is not in its doc's haystack")
    sentence_start = max(text.rfind(". ", start, at) + 2, text.rfind("\n", start, at) + 1, start)
    sentence_end = text.find("\n", at, end)
    sentence = text[sentence_start : sentence_end if sentence_end > 0 else at + len(answer)].strip()
    depth = 100.0 * (sentence_start - start) / max(end - start, 1)
    return NeedleSpot(
        role="target",
        text=sentence,
        answer=answer,
        char_offset=at,
        token_offset=-1,
        depth_pct=round(min(max(depth, 0.0), 100.0), 2),
    )
