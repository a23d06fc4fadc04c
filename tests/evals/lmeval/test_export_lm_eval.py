"""The exported task directory runs under lm-eval's own evaluator (an in-process model, no server), and
lm-eval's scores are ctxprobe's scores of the same outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.lmeval.export import LmEvalExport, write_lm_eval_tasks
from ctxprobe.evals.lmeval.source import export_samples
from ctxprobe.evals.score import score_sample
from ctxprobe.tasks.sample import Sample

lm_eval = pytest.importorskip("lm_eval")
from lm_eval.api.model import LM  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402


def scripted_answer(sample: Sample, index: int) -> str:
    """Right, wrong by one extra leading digit (the trap a substring scorer falls into), or off topic."""
    value = sample.expected.answers[0]
    return [f" {value}.\nMore text", f" 1{value}.", " I do not know."][index % 3]


class ScriptedLM(LM):  # type: ignore[misc]
    """Answers each prompt from a dict (prompt -> text); records the generation settings it was given."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__()
        self.answers = answers
        self.gen_kwargs: list[dict[str, Any]] = []

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        out = []
        for request in requests:
            prompt, kwargs = request.args
            self.gen_kwargs.append(kwargs)
            out.append(self.answers[prompt])
        return out

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[LmEvalExport, list[Sample]]:
    source = export_samples("quick", token_counter="estimate", lengths="1k", depths="0,50,100")
    return write_lm_eval_tasks(source, tmp_path_factory.mktemp("export") / "tasks"), source.samples


def test_lm_eval_scores_equal_ctxprobe_scores(exported: tuple[LmEvalExport, list[Sample]]) -> None:
    export, samples = exported
    answers = {s.prompt: scripted_answer(s, i) for i, s in enumerate(samples)}
    model = ScriptedLM(answers)
    manager = TaskManager(include_path=str(export.dir), include_defaults=False)
    results = lm_eval.simple_evaluate(model=model, tasks=[export.group], task_manager=manager, log_samples=True)

    by_hash = {s.prompt_sha256: s for s in samples}
    logged = [row for task in export.tasks for row in results["samples"][task]]
    assert len(logged) == len(samples)
    for row in logged:
        sample = by_hash[row["prompt_hash"]]  # lm-eval's prompt hash is the sample's sha256
        score = score_sample(sample, answers[sample.prompt])
        assert row["exact"] == float(score.correct)
        assert row["partial"] == pytest.approx(score.partial)
        assert row["doc"]["sample_id"] == sample.sample_id
    expected_exact = sum(score_sample(s, answers[s.prompt]).correct for s in samples) / len(samples)
    assert results["groups"][export.group]["exact,none"] == pytest.approx(expected_exact)
    assert 0 < expected_exact < 1  # the script mixes right and wrong answers
    budgets = {s.prompt: s.max_tokens for s in samples}
    assert all(k["until"] == [] and k["temperature"] == 0.0 for k in model.gen_kwargs)
    assert sorted(k["max_gen_toks"] for k in model.gen_kwargs) == sorted(budgets.values())


def test_export_refuses_a_folder_in_use(tmp_path: Path) -> None:
    from ctxprobe.tasks.errors import UserError

    (tmp_path / "keep.txt").write_text("x")
    source = export_samples("quick", token_counter="estimate", lengths="1k", depths="50")
    with pytest.raises(UserError, match="not empty"):
        write_lm_eval_tasks(source, tmp_path)
