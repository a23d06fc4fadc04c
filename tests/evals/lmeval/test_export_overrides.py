"""`ctxprobe export` takes the suite overrides `ctxprobe run` takes: RULER's qa tasks exported with `--qa`
(refused before), its lengths and depths set, and a run folder refusing any override in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.run.send.options import SUITE_OVERRIDES

QA = Path(__file__).resolve().parents[2] / "tasks" / "fixtures" / "qa"


def _tasks(out: Path) -> set[str]:
    """The task names of an lm-eval task directory (each YAML's `task:` line)."""
    return {
        line.split(":", 1)[1].strip()
        for p in out.glob("*.yaml")
        for line in p.read_text().splitlines()
        if line.startswith("task:")
    }


def test_export_ruler_with_its_qa_datasets(tmp_path: Path) -> None:
    without, with_qa = tmp_path / "without", tmp_path / "with"
    common = ["--lengths", "1k", "--depths", "50", "--token-counter", "estimate"]
    assert main(["export", "ruler", str(without), *common]) == 0
    assert (
        main(["export", "ruler", str(with_qa), *common, "--qa", f"hf:{QA / 'squad.json'},hf:{QA / 'hotpotqa.json'}"])
        == 0
    )
    added = _tasks(with_qa) - _tasks(without)
    assert added and all("_qa_dataset" in name for name in added), added  # the qa tasks, refused before


def test_every_suite_override_of_run_is_an_export_flag() -> None:
    from ctxprobe.evals.cli.export import _overrides

    assert set(_overrides()) == set(SUITE_OVERRIDES) >= {"qa", "needles", "facts", "templates", "include", "lengths"}


def test_a_run_folder_takes_no_suite_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}")
    assert main(["export", str(run), str(tmp_path / "out"), "--qa", "hf:x.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--qa" in err[0] and "not to a run folder" in err[0]
