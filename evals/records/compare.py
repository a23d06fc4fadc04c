"""What `ctxprobe compare` writes (`compare.json`) and history and the report read back: the inputs, the
paired rows, the examples and the gate's verdict. Computed in `evals.compare`; typed and versioned here so
every reader shares one shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from ctxprobe.evals.records.kl import KLComparison
from ctxprobe.evals.records.manifest import engine_facts
from ctxprobe.evals.records.outputs import read_output
from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion
from ctxprobe.runners.response import EngineInfo
from ctxprobe.tasks.exit_codes import ExitCode, Undecided, gate_exit_code
from ctxprobe.tasks.lengths import format_length

COMPARE_JSON = "compare.json"
Level = Literal["cell", "family_length", "family"]  # family: pooled over its lengths (context_tokens 0)


class RunInput(BaseModel):
    """What the comparison read: a run folder and its manifest's key facts."""

    path: str
    label: str
    suite: str
    status: str
    created: float
    tokenizer: str
    token_counter: str
    model: str | None = None
    engine: EngineInfo | None = None
    samples: int
    engine_fault: str | None = Field(
        None, description="the run's cache-path control found an engine fault: its line (the run's scores are suspect)"
    )

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_facts(cls, value: Any) -> Any:
        return engine_facts(value)


class CandidatePairing(BaseModel):
    """How one candidate paired with the baseline, and what was left out (errors by kind per side)."""

    candidate: str
    pairs: int
    by_prompt: int
    by_task: int
    errored_base: dict[str, int]
    errored_cand: dict[str, int]
    unpaired_base: int
    unpaired_cand: int
    signals: list[str] = Field(
        default_factory=list,
        description="beside a drop: one line per signal that moved "
        "with it (served != planned, the cache path, deployment lint lines, the rival share; "
        "`evals/compare/signals.py`); empty without a drop, or in comparisons before them",
    )


class AnswerProbabilityRow(BaseModel):
    """A comparison row's p_answer statistics (`evals.paired.p_answer`), over the `n` of its pairs where
    both records had answer probabilities (`missing`: the pairs that did not). Intervals are betting
    confidence sequences: `lo`/`hi` two-sided 95 %, `gate_lo`/`gate_hi` each one-sided at the gate's alpha."""

    model_config = ConfigDict(frozen=True)

    n: int
    missing: int
    base: float
    cand: float
    diff: float
    lo: float
    hi: float
    gate_lo: float
    gate_hi: float
    p_value: float
    p_holm: float | None = None


class CompareRow(BaseModel):
    """One group of pairs. `diff` is candidate minus baseline; `p_holm` and `significant` are set on
    family x length rows (the gate's family of tests), cells keep their unadjusted `p_value`."""

    model_config = ConfigDict(frozen=True)

    candidate: str
    level: Level
    family: str
    variant: str
    haystack: str
    context_tokens: int
    depth: float | None
    n: int
    base_correct: int
    cand_correct: int
    base_accuracy: float
    cand_accuracy: float
    diff: float
    diff_lo: float
    diff_hi: float
    base_only: int
    cand_only: int
    p_value: float
    p_holm: float | None = None
    significant: bool = False
    partial_base: float
    partial_cand: float
    partial_diff: float
    partial_lo: float
    partial_hi: float
    p_answer: AnswerProbabilityRow | None = Field(
        None,
        description="the answer probability's paired difference "
        "(None: no pair of the row has answer probabilities on both sides)",
    )
    clusters: int | None = Field(
        None,
        description="the chains a row of a nested run pools, its unit of independence "
        "(its interval and p-value are over chain means); None: each pair is its own unit "
        "(the independent layout, a cell; left out of compare.json then)",
    )

    @model_serializer(mode="wrap")
    def _without_unset_clusters(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A row of independent pairs writes no `clusters`: compare.json and compare.csv stay as they were (an
        optional field, no new schema version: files without it read as independent, and readers that predate
        it ignore it)."""
        out: dict[str, Any] = handler(self)
        if out.get("clusters", 0) is None:
            del out["clusters"]
        return out

    def where(self) -> str:
        """`niah variant=single [prose] 2K` (and `@ 50%` for a cell): for messages, never parsed."""
        length = "all lengths" if self.level == "family" else format_length(self.context_tokens)
        text = f"{self.family} {self.variant} [{self.haystack}] {length}"
        return text if self.depth is None else f"{text} @ {self.depth:g}%"


class Example(BaseModel):
    """A pair one build got right and the other wrong."""

    model_config = ConfigDict(frozen=True)

    candidate: str
    where: str
    worse: str  # "candidate" or "baseline"
    sample_id: str
    expected: list[str]
    base_extracted: list[str]
    cand_extracted: list[str]
    needle_depth: float | None


class CompareResult(BaseModel):
    """One comparison: `compare.json`."""

    model_config = ConfigDict(frozen=True)

    schema_version: SchemaVersion = SCHEMA_VERSION
    baseline: RunInput
    candidates: list[RunInput]
    alpha: float
    fail_if_drop: float | None
    interval_method: str
    p_method: str
    partial_method: str
    pairings: list[CandidatePairing]
    rows: list[CompareRow]
    examples: list[Example]
    failed: list[CompareRow] = Field(description="pooled family and family x length rows the gate fails")
    passed: list[CompareRow] | None = Field(
        None,
        description="runs that stopped adaptively: the rows the gate passes "
        "by the paired gate's rule (else a row passes when its interval is above "
        "-fail_if_drop)",
    )
    sequential: bool = Field(False, description="a run stopped adaptively: intervals and p-values are anytime-valid")
    metric: Literal["correct", "p_answer", "kl"] = Field(
        "correct",
        description="what the gate judged: correctness (the default), the answer probability's "
        "difference, or KL at the answer positions against `kl.margin` nats",
    )
    verdict: Literal["PASS", "FAIL", "UNDECIDED"] | None = Field(
        None,
        description="the gate's word on the comparison, as every output says it (None: no gate asked for, "
        "or a comparison written before the word was recorded)",
    )
    warnings: list[str] = Field(default_factory=list)
    kl: KLComparison | None = Field(
        None,
        description="KL at depth and top-1 agreement at the answer positions (None in comparisons written before it)",
    )
    out_dir: str | None = None
    files: list[str] = Field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The gate's exit code: 1 when it fails a row, 6 when it is UNDECIDED, else 0 (`gate_exit_code`)."""
        return self.gate_exit_code()

    def gate_exit_code(self, undecided: Undecided = "exit") -> int:
        """The gate's exit code with UNDECIDED made what `undecided` says (`run --against`'s `--undecided`)."""
        return int(ExitCode.SAMPLE_ERRORS if self.failed else gate_exit_code(self.verdict, undecided))

    def family_rows(self, candidate: str | None = None) -> list[CompareRow]:
        return [r for r in self.rows if r.level == "family_length" and candidate in (None, r.candidate)]

    def gate_rows(self, candidate: str | None = None) -> list[CompareRow]:
        """The rows the gate tests: each family pooled over its lengths (primary), then family x length."""
        return [r for r in self.rows if r.level in ("family", "family_length") and candidate in (None, r.candidate)]


def read_compare(folder: Path) -> CompareResult:
    """A compare folder's `compare.json` (any version)."""
    return read_output(Path(folder) / COMPARE_JSON, CompareResult)
