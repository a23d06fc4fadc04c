"""Where an export's samples come from: a suite with overrides, or a run folder (its recorded recipes,
rebuilt byte for byte with its own token counter); and ctxprobe without lm-eval installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe.evals.lmeval.source import export_samples
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import Response, SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.suite import load_suite


def test_suite_overrides_shape_the_export() -> None:
    source = export_samples("quick", token_counter="estimate", lengths="1k,2k", depths="25", samples=2)
    assert source.name == "quick" and source.token_counter == "estimate"
    assert {s.recipe.context_tokens for s in source.samples} == {1024, 2048}
    assert {s.recipe.depth for s in source.samples} == {25.0}
    assert len(source.samples) == 4 * 2 * 2  # 4 tasks x 2 lengths x 2 samples


def test_a_run_folder_exports_the_prompts_it_ran(tmp_path: Path) -> None:
    ran = export_samples("quick", token_counter="estimate", lengths="1k", depths="0,100").samples
    store = RunStore(tmp_path / "run")
    store.write_manifest(RunManifest(suite=load_suite("quick"), token_counter="estimate", status="finished"))
    for sample in ran[:3]:
        store.append(SampleRecord(sample=sample, response=Response(endpoint="http://x", text="?", latency_s=1.0)))
    store.close()
    again = export_samples(str(tmp_path / "run"))
    assert [s.prompt for s in again.samples] == [s.prompt for s in ran[:3]]
    assert again.token_counter == "estimate"
    with pytest.raises(UserError, match="apply to suites"):
        export_samples(str(tmp_path / "run"), lengths="2k")


def test_ctxprobe_loads_without_lm_eval() -> None:
    code = (
        "import sys; sys.modules['lm_eval'] = None\n"
        "import ctxprobe, ctxprobe.evals.lmeval.api, ctxprobe.evals.cli.main\n"
        "ctxprobe.evals.cli.main.build_parser()\n"
        "assert ctxprobe.export_lm_eval and ctxprobe.import_lm_eval and ctxprobe.export_hf\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
