"""The options of `ctxprobe compare`, declared once for the API and the command line."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.evals.compare.paired.kl_gate import GateMetric, margin_option, metric_option
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.exit_codes import UNDECIDED_HELP, Undecided
from ctxprobe.tasks.same_field import same_field


class CompareOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    baseline: str = Field(description="the baseline run folder")
    candidates: list[str] = Field(min_length=1, description="candidate run folders")
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="significance level after Holm")
    fail_if_drop: float | None = Field(
        None,
        description="exit 1 when a family x length row of a candidate is worse "
        "by more than MARGIN (e.g. 0.05) with Holm-adjusted p < alpha",
    )
    metric: GateMetric = metric_option(
        "", ": exit 1 when a row's mean KL is above --kl-margin, with no --fail-if-drop needed"
    )
    kl_margin: float = margin_option("with --metric kl")
    undecided: Undecided = Field("exit", description=f"with --fail-if-drop or --metric kl: {UNDECIDED_HELP}")
    results_dir: str = Field("results", description="where the compare folder is made")
    no_report: bool = Field(False, description="do not write report.html into the compare folder")
    junit: str | None = Field(
        None, description="write the gate's rows as JUnit XML (failed / passed / skipped when undecided)"
    )
    summary_md: str | None = Field(
        None,
        description="write the gate's verdicts as a short markdown table (also "
        "appended to $GITHUB_STEP_SUMMARY when set)",
    )

    @model_validator(mode="after")
    def _undecided_needs_a_gate(self) -> CompareOptions:
        """`--undecided` maps a gate's word: without a gate it would be ignored, so it is refused, as in `run`."""
        if "undecided" in self.model_fields_set and self.fail_if_drop is None and self.metric != "kl":
            raise UserError(f"--undecided {self.undecided} needs a gate: --fail-if-drop MARGIN or --metric kl")
        return self


class HistoryOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    results_dir: str = Field(description="the folder holding run folders (e.g. results)")
    label: str | None = Field(None, description="only runs with this label")
    suite: str | None = Field(None, description="only runs of this suite (needed when the folder holds several)")
    alpha: float = same_field(CompareOptions, "alpha")
    metric: GateMetric = metric_option("what flags a night against the one before, ", " above --kl-margin")
    kl_margin: float = same_field(CompareOptions, "kl_margin")
