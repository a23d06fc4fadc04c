"""`history` over three synthetic nights where the third drops, with folders it must pass over."""

import json
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from tests.evals.compare.synthetic import all_right, grid, write_run


@pytest.fixture
def nights(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    lost = [k for k in grid() if k[0] == 2048][:9]  # the third night loses 9 of 20 at 2K
    one_wrong = {**all_right(), grid()[0]: False}
    write_run(results / "n1", "nightly", all_right(), created=100.0)
    write_run(results / "n3", "nightly", {**all_right(), **{k: False for k in lost}}, created=300.0)
    write_run(results / "n2", "nightly", one_wrong, created=200.0)
    write_run(results / "crashed", "nightly", all_right(), created=250.0, status="interrupted")
    write_run(results / "other", "manual", all_right(), created=150.0)
    (results / "20260101-compare-a-vs-b").mkdir()
    (results / "20260101-compare-a-vs-b" / "compare.json").write_text("{}")
    (results / "notes").mkdir()
    return results


def test_three_nights_third_drops_flagged(nights: Path):
    result = ctxprobe.history(nights, label="nightly", write=False)
    assert [Path(r.path).name for r in result.runs] == ["n1", "n2", "n3"]
    assert [len(s.drops) for s in result.steps] == [0, 2]  # the family pooled over its lengths, and 2K
    pooled, drop = result.steps[1].drops
    assert pooled.level == "family" and pooled.context_tokens == 0
    assert (drop.context_tokens, drop.diff, drop.base_only, drop.cand_only) == (2048, pytest.approx(-0.45), 9, 0)
    at_2k = [p.accuracy for p in result.points if p.context_tokens == 2048]
    assert at_2k == pytest.approx([1.0, 1.0, 0.55])
    third = next(p for p in result.points if p.run.endswith("n3") and p.context_tokens == 2048)
    assert third.ci_lo < 0.55 < third.ci_hi


def test_history_cli_writes_a_trend_and_reads_folders_as_they_are(nights: Path, capsys):
    assert main(["history", str(nights), "--label", "nightly"]) == 0
    out = capsys.readouterr().out
    assert (
        "DROP niah variant=single [prose] all lengths" in out
        and "[prose] 2K -45 points" in out
        and out.count("no significant drop") == 1
    )
    folder = nights / "history-quick"
    assert (folder / "trend.png").stat().st_size > 10_000
    assert len(json.loads((folder / "history.json").read_text())["runs"]) == 3
    # its own folder and a compare folder are no runs: a second call reads the same three
    assert main(["history", str(nights), "--label", "nightly"]) == 0
    assert len(json.loads((folder / "history.json").read_text())["runs"]) == 3


def test_history_of_several_suites_needs_one_named(nights: Path, capsys):
    write_run(nights / "big", "nightly", all_right(), created=400.0, suite="big")
    assert main(["history", str(nights)]) == 2
    assert "several suites" in capsys.readouterr().err
    assert len(ctxprobe.history(nights, suite="big", write=False).runs) == 1


def test_history_on_kl_flags_the_night_whose_answer_distributions_moved(tmp_path: Path, capsys):
    """Three nights with answer log-probabilities, every answer right: the third's distributions moved
    (logit noise 0.6), which accuracy cannot see and `--metric kl` flags; the second is the first again."""
    from tests.evals.compare.kl_runs import VOCAB, answer_logprobs, base_dists, shifted, write_logprob_run

    results = tmp_path / "results"
    same = lambda k: answer_logprobs(base_dists(k), VOCAB)  # noqa: E731
    for name, created, logprobs in (
        ("n1", 100.0, same),
        ("n2", 200.0, same),
        ("n3", 300.0, lambda k: answer_logprobs(shifted(base_dists(k), 0.6, k), VOCAB)),
    ):
        path = write_logprob_run(results / name, "nightly", logprobs)
        manifest = json.loads((path / "manifest.json").read_text())
        manifest["created"] = created
        (path / "manifest.json").write_text(json.dumps(manifest))
    assert [len(s.drops) for s in ctxprobe.history(results, write=False).steps] == [0, 0]
    on_kl = ctxprobe.history(results, metric="kl", write=False)
    assert on_kl.metric == "kl" and [len(s.drops) for s in on_kl.steps] == [0, 3]  # pooled, 1K, 2K
    assert all(" KL 0.0" in line or " KL 0.1" in line for line in on_kl.steps[1].flagged)
    assert main(["history", str(results), "--metric", "kl"]) == 0
    out = capsys.readouterr().out
    assert "n2 -> n3: 40 pairs: DIVERGES niah" in out and "n1 -> n2: 40 pairs: no divergence above the margin" in out
