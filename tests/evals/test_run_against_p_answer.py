"""`run --against BASELINE --metric p_answer`: the paired run's rows on the answer probability, with the
accuracy rows beside them. Driven through the plan's own rounds (`next_paired_round` / `update`) with the
candidate's records written by hand as the engine would return them with answer probabilities (the records'
shape, `AnswerLogprobs`), and through the command line where a baseline without them is one line, exit 2."""

from pathlib import Path

import numpy as np
import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.against import gate_cases, gate_report, next_paired_round, paired_run, render_gate
from ctxprobe.tasks.errors import UserError
from tests.evals.compare.synthetic import SEEDS, all_right, answer_logprobs, grid, record, write_run


def _base(tmp_path: Path) -> tuple[Path, dict]:
    rng = np.random.default_rng(7)
    probs = {k: float(0.5 + 0.45 * rng.random()) for k in grid()}
    return write_run(tmp_path / "base", "f16", all_right(), p_answer=probs), probs


def _play(plan, answer) -> list:
    """Round after round as the run sends them: the candidate's record for each recipe sent."""
    done: list = []
    sent: set[str] = set()
    while batch := next_paired_round(plan, done, sent):
        sent.update(r.sample_id() for r in batch)
        done += [answer((r.context_tokens, float(r.depth), r.seed)) for r in batch]
    return done


def test_a_less_sure_candidate_fails_on_p_answer_and_passes_on_accuracy(tmp_path):
    base, probs = _base(tmp_path)

    def less_sure(key):
        return record(key, True).model_copy(update={"logprobs": answer_logprobs(probs[key] - 0.4)})

    plan = paired_run(base, 0.05, 0.05, "estimate:4", metric="p_answer")
    done = _play(plan, less_sure)
    report = gate_report(plan)
    pooled = next(e for e in report["rows"] if e["primary"])
    assert report["metric"] == "p_answer" and report["verdict"] == "FAIL" and pooled["verdict"] == "FAIL"
    assert pooled["diff"] == pytest.approx(-0.4) and pooled["n"] == len(done) < len(grid())  # stopped early
    [beside] = pooled["beside"]  # no top-k lists in these records: no KL beside
    assert beside == {
        "metric": "correct",
        "n": len(done),
        "diff": 0.0,
        "diff_lo": pytest.approx(beside["diff_lo"]),
        "diff_hi": pytest.approx(beside["diff_hi"]),
    }
    text = render_gate(report)
    assert "--metric p_answer): FAIL" in text and "beside it: correct" in text
    cases = gate_cases(report, "q4_0")
    assert cases[0].metric == "p_answer" and "beside it correct: diff 0.0" in cases[0].message()

    # the same candidate judged on accuracy: nothing dropped, with p_answer shown beside
    plan = paired_run(base, 0.05, 0.05, "estimate:4")
    _play(plan, less_sure)
    report = gate_report(plan)
    pooled = next(e for e in report["rows"] if e["primary"])
    assert report["metric"] == "correct" and pooled["verdict"] != "FAIL"
    [beside] = pooled["beside"]
    assert beside["metric"] == "p_answer" and beside["diff"] == pytest.approx(-0.4)


def test_pairs_without_p_answer_are_counted_as_lacking_never_as_zero(tmp_path):
    base, probs = _base(tmp_path)

    def half(key):  # the candidate's engine gave answer probabilities for the 1K samples only
        rec = record(key, True)
        return rec.model_copy(update={"logprobs": answer_logprobs(probs[key]) if key[0] == 1024 else "unavailable"})

    plan = paired_run(base, 0.05, 0.05, "estimate:4", metric="p_answer")
    done = _play(plan, half)
    report = gate_report(plan)
    at_2k = next(e for e in report["rows"] if e["context_tokens"] == 2048)
    at_1k = next(e for e in report["rows"] if e["context_tokens"] == 1024)
    assert at_2k["n"] == 0 and at_2k["verdict"] == "UNDECIDED" and at_2k["lacking_p_answer"] == 20
    assert at_1k["n"] == 20 and at_1k["diff"] == 0.0 and at_1k["lacking_p_answer"] == 0
    assert len(done) == len(grid()) == 2 * 2 * len(SEEDS)  # undecided rows used every pair the baseline holds
    assert "(20 pairs without p_answer)" in render_gate(report)


def test_a_baseline_without_answer_probabilities_is_refused(tmp_path, capsys):
    plain = write_run(tmp_path / "plain", "f16", all_right())
    with pytest.raises(UserError, match="has no answer probabilities"):
        paired_run(plain, 0.05, 0.05, "estimate:4", metric="p_answer")
    assert main(["run", "--metric", "p_answer", "--quiet", "--results-dir", str(tmp_path / "out")]) == 2
    assert "--metric p_answer needs --against" in capsys.readouterr().err


def test_the_command_line_gates_on_p_answer_and_says_what_pairs_lack(tmp_path, capsys):
    """`run --against BASE --metric p_answer` against the fake engine: the baseline's records carry answer
    probabilities (added to a real run's records), the fake engine gives none, so every pair lacks one: no
    row can be decided on p_answer (exit 6), the table says how many pairs lack it, and accuracy is beside."""
    import json
    import shutil

    from ctxprobe.evals.records.store import RunStore
    from tests.evals.test_run_against import _against, _baseline, _gate
    from tests.evals.test_run_sequential import _finds_the_needle
    from tests.runners.fake_engine import FakeEngine

    plain = _baseline(tmp_path, samples=3)
    base = tmp_path / "with-p"
    shutil.copytree(plain, base)
    (base / "samples.jsonl").unlink()
    store = RunStore(base)
    for rec in RunStore(plain).records():
        store.append(rec.model_copy(update={"logprobs": answer_logprobs(0.8)}))
    store.close()
    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as engine:
        code = _against(engine.url, base, tmp_path / "cand", "--fail-if-drop", "0.05", "--metric", "p_answer")
    out = capsys.readouterr().out
    gate = _gate(tmp_path / "cand")
    assert code == 6 and gate["metric"] == "p_answer" and gate["verdict"] == "UNDECIDED"
    pooled = next(e for e in gate["rows"] if e["primary"])
    [beside] = pooled["beside"]
    assert pooled["n"] == 0 and pooled["lacking_p_answer"] == 12 and beside["metric"] == "correct"
    assert beside["n"] == 12 and beside["diff"] == 0.0
    assert "--metric p_answer): UNDECIDED" in out and "(12 pairs without p_answer)" in out
    manifest = json.loads((next((tmp_path / "cand").iterdir()) / "manifest.json").read_text())
    assert manifest["options"]["metric"] == "p_answer"  # a resumed run gates on the same metric
