"""Gate metrics by name (`evals.compare.metrics`): the built-in ones in the order reports list them, an
unknown name refused in one line naming the known ones, and a metric registered from one module of its own
gating `run --against` as the built-in ones do (driven through the plan's own rounds, records written by hand)."""

from pathlib import Path

import pytest

from ctxprobe.evals.compare import metrics
from ctxprobe.evals.compare.against import gate_report, paired_run, render_gate
from ctxprobe.evals.compare.metrics.base import METRICS, PairMetric, pair_metric
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.errors import UserError
from tests.evals.compare.synthetic import all_right, grid, record, write_run
from tests.evals.test_run_against_p_answer import _play


def test_the_built_in_metrics_come_first_in_their_order() -> None:
    assert metrics.metric_names()[:3] == ["correct", "p_answer", "kl"]
    with pytest.raises(UserError, match=r"--metric 'nope' is no gate metric; known: correct, p_answer, kl"):
        metrics.metric("nope")


@pytest.fixture
def partial_metric():
    """A toy metric: the pair's difference of partial credit, in [-1, 1]."""

    @pair_metric
    class Partial(PairMetric):
        name = "partial_toy"
        always = True

        def diff(self, base: SampleRecord, cand: SampleRecord, margin: float) -> float | None:
            return (cand.score.partial if cand.score else 0.0) - (base.score.partial if base.score else 0.0)

    yield Partial
    METRICS.remove("partial_toy")


def test_a_registered_metric_gates_a_paired_run_like_the_built_in_ones(tmp_path: Path, partial_metric) -> None:
    base = write_run(tmp_path / "base", "f16", all_right())

    def worse_partial(key):  # every answer still right, partial credit down by 0.5
        rec = record(key, True)
        assert rec.score is not None
        return rec.model_copy(update={"score": rec.score.model_copy(update={"partial": rec.score.partial - 0.5})})

    plan = paired_run(base, 0.05, 0.05, "estimate:4", metric="partial_toy")
    done = _play(plan, worse_partial)
    report = gate_report(plan)
    pooled = next(e for e in report["rows"] if e["primary"])
    assert report["metric"] == "partial_toy" and report["verdict"] == "FAIL" and pooled["verdict"] == "FAIL"
    assert pooled["diff"] == pytest.approx(-0.5) and len(done) < len(grid())  # decided before the baseline ran out
    [beside] = pooled["beside"]  # correctness beside it, unchanged
    assert beside["metric"] == "correct" and beside["diff"] == 0.0
    assert "(--fail-if-drop 0.05 --metric partial_toy): FAIL" in render_gate(report)

    plan = paired_run(base, 0.05, 0.05, "estimate:4")  # judged on accuracy, the toy metric shown beside
    _play(plan, worse_partial)
    pooled = next(e for e in gate_report(plan)["rows"] if e["primary"])
    assert pooled["verdict"] != "FAIL" and [b["metric"] for b in pooled["beside"]] == ["partial_toy"]
