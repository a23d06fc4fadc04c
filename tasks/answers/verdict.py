"""The scorer's verdict on one sample (`Score`), defined here, below evals, because a family's own scorer
(tasks/families, or a module `--include` loads) returns one without importing evals. The records
(evals/records/record.py) store it as it is: the same model, so the JSON a record holds is unchanged."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# What a wrong answer named (`Score.attribution`): another needle of its prompt (`rival`), no needle of its prompt
# (`other`), or a value where the prompt holds none, an absent needle's question (`hallucinated`).
Attribution = Literal["rival", "other", "hallucinated"]

# The scoring rule's version (every answer kind's scorer: evals/scoring/score.py, the families' own and the
# modules they read), on every score: runs scored by different rules are not compared as builds (`compare`
# warns and its gate refuses, `history` says so). 1: the first candidate of the answer's shape; 2: the
# expected value(s) and no rival candidate, negated values not credited, partial credit recall x precision,
# accuracies' intervals Clopper-Pearson; 3: answers and rivals compared in their comparison characters (NFKC,
# Cyrillic and Greek look-alikes), a rival's digits in any grouping one number, denials after the value ("X is
# wrong") and later corrections ("X. Actually, scratch that: Y.") withdraw it, a needle file's `number` and `set`
# exact over every number / item offered and its `contains` refusing "A or B"; 4: one answer slot per kind (chat:
# the whole reply; completions: the documented unit, stated on the score), the candidates of the asked kind in
# one canonical form (numbers under any separator, in words or scientific notation; hex and UUIDs under any
# grouping; letter-spaced words; `return` lines as Python reads them), the slot's polarity (refusal, jest,
# denial, question, withdrawal) from one table of cues. A number, not a hash of the source: moving a scorer
# keeps it.
SCORER_VERSION = 4


class Score(BaseModel):
    """The scorer's verdict: `correct` is exact on the extracted answer; `partial` is the partial credit
    (edit similarity for recall, fraction of the chain for multi-hop, fraction of values for multi-value)."""

    model_config = ConfigDict(frozen=True)

    extracted: list[str]
    correct: bool
    partial: float
    unit: str | None = Field(
        None,
        description="the answer slot read: `reply` (chat), `first sentence`, `first "
        "line`, `first paragraph` (completions), a dataset's own (`last line`, `response`); "
        "None where a record predates it",
    )
    attribution: Attribution | None = Field(
        None,
        description="what a wrong answer named: `rival` (another needle "
        "of its prompt), `other` (none of its prompt's needles), `hallucinated` "
        "(a value where the prompt holds none: an absent needle); None where "
        "correct, not attributed, or a record predates it",
    )
    rival_depth: float | None = Field(
        None,
        description="a `rival` answer, or a `hallucinated` one that quoted "
        "another needle of its prompt: the depth (%) of the needle it named",
    )
    scorer_version: int = Field(
        SCORER_VERSION, description="the scoring rule that gave this verdict (1 where a record predates versions)"
    )
