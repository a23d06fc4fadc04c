"""The exported task directory runs under lm-eval's own evaluator (an in-process model, no server), and
lm-eval's scores are ctxprobe's scores of the same outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.lmeval.export import LmEvalExport, write_lm_eval_tasks
from ctxprobe.evals.lmeval.importer import import_lm_eval
from ctxprobe.evals.lmeval.source import export_samples
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.answers.absence import ABSENT, ABSTAINED
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Sample, sha256_text

lm_eval = pytest.importorskip("lm_eval")
from lm_eval.api.model import LM  # noqa: E402
from lm_eval.loggers import EvaluationTracker  # noqa: E402
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


@pytest.fixture(scope="module")
def evaluated(
    exported: tuple[LmEvalExport, list[Sample]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[ScriptedLM, dict[str, Any], Path]:
    """lm-eval's evaluator on the export with a scripted model; its logs saved as `lm_eval run` saves them."""
    export, samples = exported
    model = ScriptedLM({s.prompt: scripted_answer(s, i) for i, s in enumerate(samples)})
    manager = TaskManager(include_path=str(export.dir), include_defaults=False)
    results = lm_eval.simple_evaluate(model=model, tasks=[export.group], task_manager=manager, log_samples=True)
    out = tmp_path_factory.mktemp("lm-eval-out")
    tracker = EvaluationTracker(output_path=str(out))
    logged = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=logged)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=logged[task])
    results["samples"] = logged
    return model, results, out


def test_lm_eval_scores_equal_ctxprobe_scores(
    exported: tuple[LmEvalExport, list[Sample]], evaluated: tuple[ScriptedLM, dict[str, Any], Path]
) -> None:
    export, samples = exported
    model, results, _ = evaluated
    by_hash = {s.prompt_sha256: s for s in samples}
    logged = [row for task in export.tasks for row in results["samples"][task]]
    assert len(logged) == len(samples)
    for row in logged:
        sample = by_hash[row["prompt_hash"]]  # lm-eval's prompt hash is the sample's sha256
        score = score_sample(sample, model.answers[sample.prompt])
        assert row["exact"] == float(score.correct)
        assert row["partial"] == pytest.approx(score.partial)
        assert row["doc"]["sample_id"] == sample.sample_id
    expected_exact = sum(score_sample(s, model.answers[s.prompt]).correct for s in samples) / len(samples)
    assert results["groups"][export.group]["exact,none"] == pytest.approx(expected_exact)
    assert 0 < expected_exact < 1  # the script mixes right and wrong answers
    assert all(k["until"] == [] and k["temperature"] == 0.0 for k in model.gen_kwargs)
    assert sorted(k["max_gen_toks"] for k in model.gen_kwargs) == sorted(s.max_tokens for s in samples)


def test_import_gives_lm_eval_scores_back(
    exported: tuple[LmEvalExport, list[Sample]], evaluated: tuple[ScriptedLM, dict[str, Any], Path], tmp_path: Path
) -> None:
    export, samples = exported
    _, results, out = evaluated
    imported = import_lm_eval([out], results_dir=tmp_path)
    run = load_run(imported.run_dir)
    assert {r.sample.sample_id for r in run.records} == {s.sample_id for s in samples}
    lm_exact = {row["doc"]["sample_id"]: row["exact"] for task in export.tasks for row in results["samples"][task]}
    for record in run.records:
        assert record.score is not None and float(record.score.correct) == lm_exact[record.sample.sample_id]
        exported_sample = next(s for s in samples if s.sample_id == record.sample.sample_id)
        assert record.sample.model_dump() == exported_sample.model_dump()  # everything but the prompt, as stored
    frame = run.frame()
    assert frame["correct"].mean() == pytest.approx(results["groups"][export.group]["exact,none"])
    assert run.manifest.command == "import-lm-eval" and run.manifest.samples_done == len(samples)
    assert imported.ruler_accuracy() is None


def test_import_refuses_a_prompt_that_is_not_the_export(
    evaluated: tuple[ScriptedLM, dict[str, Any], Path], tmp_path: Path
) -> None:
    _, _, out = evaluated
    log = next(out.rglob("samples_ctxprobe_niah_single_1024_*.jsonl"))
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    rows[1]["arguments"]["gen_args_0"]["arg_0"] = rows[1]["arguments"]["gen_args_0"]["arg_0"].replace(" ", "  ", 1)
    tampered = tmp_path / log.name
    tampered.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError, match="is not the exported prompt"):
        import_lm_eval([tampered], results_dir=tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_export_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    source = export_samples("quick", token_counter="estimate", lengths="1k", depths="50")
    with pytest.raises(UserError, match="not empty"):
        write_lm_eval_tasks(source, tmp_path)


def test_import_reads_a_chat_model_log(evaluated: tuple[ScriptedLM, dict[str, Any], Path], tmp_path: Path) -> None:
    """`local-chat-completions --apply_chat_template` logs the JSON messages as `arg_0` and hashes them:
    the prompt checked against the sample is the user message."""
    _, _, out = evaluated
    log = next(out.rglob("samples_ctxprobe_niah_single_1024_*.jsonl"))
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    for row in rows:
        args = row["arguments"]["gen_args_0"]
        args["arg_0"] = json.dumps([{"role": "user", "content": args["arg_0"]}])
        row["prompt_hash"] = sha256_text(args["arg_0"])
    chat_log = tmp_path / log.name
    chat_log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    imported = import_lm_eval([chat_log], results_dir=tmp_path / "results")
    assert sorted(r.sample.sample_id for r in imported.records) == sorted(r["doc"]["sample_id"] for r in rows)
    rows[0]["arguments"]["gen_args_0"]["arg_0"] = json.dumps([{"role": "user", "content": "another prompt"}])
    chat_log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError, match="is not the exported prompt"):
        import_lm_eval([chat_log], results_dir=tmp_path / "results")


def test_an_absent_needle_exports_the_abstention_as_target_and_scores_by_its_verdict(tmp_path: Path) -> None:
    """An absent question has no value to expect: lm-eval's logged target is a reply that counts, the doc says
    it is absent, and lm-eval's score is ctxprobe's verdict (an abstention 1, the needle's value 0)."""
    source = export_samples("nightly", token_counter="estimate", lengths="1k", depths="50", samples=1)
    export = write_lm_eval_tasks(source, tmp_path / "tasks")
    absent = [s for s in source.samples if s.expected.kind == ABSENT]
    assert len(absent) == 1 and absent[0].expected.answers == []
    manager = TaskManager(include_path=str(export.dir), include_defaults=False)
    held = absent[0].needles[0].answer  # a value the prompt holds, but not for the asked key
    for reply, exact in ((f" {ABSTAINED}", 1.0), (" I could not find it in the text.", 1.0), (f" {held}", 0.0)):
        model = ScriptedLM({s.prompt: reply if s in absent else " 0" for s in source.samples})
        results = lm_eval.simple_evaluate(model=model, tasks=[export.group], task_manager=manager, log_samples=True)
        rows = [row for task in export.tasks for row in results["samples"][task] if row["doc"]["absent"]]
        assert len(rows) == 1 and rows[0]["doc"]["sample_id"] == absent[0].sample_id
        assert rows[0]["target"] == ABSTAINED and "absent needle" in rows[0]["doc"]["scoring"]
        assert rows[0]["exact"] == exact == float(score_sample(absent[0], reply).correct)
    present = [row for task in export.tasks for row in results["samples"][task] if not row["doc"]["absent"]]
    assert len(present) == len(source.samples) - 1 and all(row["target"] for row in present)
