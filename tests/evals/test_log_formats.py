"""Files written before limit.json, compare.json and history.json carried a schema version, and before the
manifest's engine facts were typed, read back through today's models (fixtures written by that code)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxprobe.evals.records.compare import read_compare
from ctxprobe.evals.records.history import read_history
from ctxprobe.evals.records.limit import LimitOutput, read_limit
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.outputs import write_output
from ctxprobe.evals.records.schema import SCHEMA_VERSION
from ctxprobe.evals.records.store import RunStore
from ctxprobe.tasks.errors import UserError

OLD = Path(__file__).parent / "fixtures" / "v2_outputs"


def _folder(tmp_path: Path, *names: str) -> Path:
    for name in names:
        shutil.copy(OLD / name, tmp_path / name.replace("limit_", ""))
    return tmp_path


def test_old_run_folder_reads_with_typed_engine(tmp_path: Path) -> None:
    store = RunStore(_folder(tmp_path, "manifest.json", "samples.jsonl"))
    manifest = store.load_manifest()
    assert manifest.schema_version == 2
    assert manifest.engine is not None
    assert (manifest.engine.engine, manifest.engine.version, manifest.engine.context_length) == (
        "llama.cpp",
        "b6000",
        1_048_576,
    )
    assert len(list(store.records())) == 3


@pytest.mark.parametrize(
    "engine, expected",
    [
        ({}, None),
        ({"harness": "lm-eval", "lm_eval_version": "0.4.13"}, ("lm-eval", "0.4.13")),
        ({"engine": "vllm", "extra": 1}, ("vllm", None)),
    ],
)
def test_engine_dicts_migrate(engine: dict[str, object], expected: tuple[str, str | None] | None) -> None:
    data = json.loads((OLD / "manifest.json").read_text()) | {"engine": engine}
    info = RunManifest.model_validate(data).engine
    assert (info.engine, info.version) == expected if info else expected is None


def test_old_limit_json(tmp_path: Path) -> None:
    out = read_limit(_folder(tmp_path, "limit.json"))
    assert out.schema_version == 1
    (target,) = out.targets
    assert target.engine is not None and (target.engine.engine, target.engine.version) == ("vllm", "0.9.1")
    assert target.accepted.accepted_tokens == 32512 and target.effective and target.effective.effective == 16384


def test_old_compare_json(tmp_path: Path) -> None:
    result = read_compare(_folder(tmp_path, "compare.json"))
    raw = json.loads((OLD / "compare.json").read_text())
    assert result.schema_version == 1 and "schema_version" not in raw
    assert [r.model_dump(exclude={"p_answer"}) for r in result.rows] == raw["rows"]
    assert all(r.p_answer is None for r in result.rows) and result.metric == "correct"  # written before p_answer
    assert result.baseline.engine is not None and result.baseline.engine.engine == "llama.cpp"
    assert result.interval_method == raw["interval_method"]


def test_old_history_json(tmp_path: Path) -> None:
    result = read_history(_folder(tmp_path, "history.json"))
    raw = json.loads((OLD / "history.json").read_text())
    assert result.schema_version == 1 and result.suite == raw["suite"] == "small"
    assert len(result.points) == len(raw["points"]) > 0 and len(result.steps) == len(raw["steps"]) == 1


def test_written_files_carry_the_version(tmp_path: Path) -> None:
    old = read_limit(_folder(tmp_path, "limit.json"))
    write_output(tmp_path / "limit.json", LimitOutput(targets=old.targets))
    assert json.loads((tmp_path / "limit.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert read_limit(tmp_path) == LimitOutput(targets=old.targets)


def test_corrupt_output_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "compare.json").write_text('{"rows": 3}')
    with pytest.raises(UserError, match=r"corrupt compare\.json"):
        read_compare(tmp_path)
    with pytest.raises(UserError, match=r"no history\.json"):
        read_history(tmp_path)
