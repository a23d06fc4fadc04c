"""`ctxprobe compare` on two small real runs of the embedded engine, f16 and q4_0 KV cache, and the paired
gate (`run --against`) of q4_0 against the f16 run. Two samples a run (1K, depths 0 and 100): the engine is
deterministic at temperature 0, so the pairing, the gates' tables and compare's agreement with them are the
same on two pairs as on more; two pairs decide no 5-point margin (UNDECIDED) and the KL a pair is measured per
pair (0.02-0.07 nats), so its mean stays above the floor asserted. The accuracy gate's q4_0 run is made once
and is also the candidate `compare` reads."""

from __future__ import annotations

import json
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from ctxprobe_cli import ctxprobe

from ctxprobe.evals.compare.paired.kl_gate import KL_MARGIN

pytestmark = pytest.mark.engine

SUITE = ["--family", "niah", "--lengths", "1k", "--depths", "0,100", "--samples", "1", "--quiet"]
SAMPLES = 2  # the suite's: one length, two depths, one sample each


@pytest.fixture(scope="module")
def f16_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("f16")
    done = ctxprobe("run", *SUITE, "--label", "f16", "--results-dir", str(runs))
    assert done.returncode in (0, 1), done.stderr[-2000:]
    (base,) = runs.iterdir()
    return base


def against_q4_0(f16_run: Path, results: Path, *gate: str) -> CompletedProcess[str]:
    """`run --against` the f16 run with a q4_0 KV cache, this gate's flags, into `results`."""
    return ctxprobe(
        "run",
        "--against",
        str(f16_run),
        *gate,
        "--kv-cache-type",
        "q4_0",
        "--label",
        "kvq4",
        "--quiet",
        "--no-report",
        "--results-dir",
        str(results),
    )


@pytest.fixture(scope="module")
def paired_run(f16_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[CompletedProcess[str], Path]:
    """`run --against` the f16 run with a q4_0 KV cache and a 5-point margin: the finished command, its run."""
    runs = tmp_path_factory.mktemp("kvq4")
    done = against_q4_0(f16_run, runs, "--fail-if-drop", "0.05")
    assert done.returncode in (0, 1, 6), done.stderr[-2000:]
    (cand,) = runs.iterdir()
    return done, cand


def test_compare_f16_with_q4_0_kv_cache(
    tmp_path: Path, f16_run: Path, paired_run: tuple[CompletedProcess[str], Path]
) -> None:
    base, (_, cand) = f16_run, paired_run
    done = ctxprobe("compare", str(base), str(cand), "--fail-if-drop", "0.99", "--results-dir", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "baseline f16  vs  candidate kvq4" in done.stdout and "gate --fail-if-drop 0.99: PASS" in done.stdout
    (folder,) = (tmp_path / "cmp").iterdir()
    data = json.loads((folder / "compare.json").read_text())
    pairing = data["pairings"][0]
    # same model, same tokenizer: every sample pairs by its prompt hash
    errored = sum(pairing["errored_base"].values()) + sum(pairing["errored_cand"].values())
    assert pairing["by_prompt"] + errored >= SAMPLES
    assert pairing["by_task"] == 0 and data["warnings"] == []
    assert data["candidates"][0]["engine"]["engine"] == "llama-server"
    (pooled,) = [r for r in data["rows"] if r["level"] == "family_length"]
    assert pooled["n"] == pairing["pairs"] and -1 <= pooled["diff_lo"] <= pooled["diff"] <= pooled["diff_hi"] <= 1
    assert (folder / "diff_heatmap_kvq4_niah.png").stat().st_size > 10_000


def test_the_paired_gate_sends_q4_0_the_f16_runs_samples_and_compare_agrees(
    f16_run: Path, paired_run: tuple[CompletedProcess[str], Path]
) -> None:
    """2 pairs cannot decide a 5-point margin: UNDECIDED, exit 6 (documented), every pair by its prompt; compare
    on the two runs reads the same rows with the same verdicts."""
    done, cand = paired_run
    assert done.returncode == 6, done.stderr[-2000:]
    manifest = json.loads((cand / "manifest.json").read_text())
    gate = manifest["paired_gate"]
    assert gate["verdict"] == "UNDECIDED" and manifest["options"]["kv_cache_type"] == "q4_0"
    pooled = next(r for r in gate["rows"] if r["primary"])
    assert pooled["baseline_samples"] == SAMPLES and 0 < pooled["n"] <= SAMPLES and pooled["diff_lo"] < -0.05
    base_ids = {
        json.loads(line)["sample"]["sample_id"] for line in (f16_run / "samples.jsonl").read_text().splitlines()
    }
    cand_ids = {json.loads(line)["sample"]["sample_id"] for line in (cand / "samples.jsonl").read_text().splitlines()}
    assert cand_ids <= base_ids and manifest["fixed_grid_prompt_tokens"] == SAMPLES * 1024

    import ctxprobe as api
    from ctxprobe.evals.compare.paired.verdict import gate_cases

    compared = api.compare(f16_run, cand, fail_if_drop=0.05, write=False)
    assert compared.sequential
    assert [c.verdict for c in gate_cases(compared)] == [r["verdict"] for r in gate["rows"]]


def test_the_kl_gate_on_the_real_engine_sees_q4_0_and_compare_agrees(tmp_path: Path, f16_run: Path) -> None:
    """`run --against --metric kl` of a q4_0 KV cache against the f16 run: the answer distributions the engine
    returned diverge measurably (0.02-0.07 nats a cell measured at 1K-2K), the gate's table is in nats with the
    accuracy and p_answer rows beside it, and `compare --metric kl` on the two runs gives the same verdicts."""
    done = against_q4_0(f16_run, tmp_path / "runs", "--metric", "kl")
    assert done.returncode in (1, 6), done.stderr[-2000:]  # FAIL, or undecided on 2 pairs
    assert f"(--kl-margin {KL_MARGIN:g} --metric kl)" in done.stdout and "kl is the mean KL in nats" in done.stdout
    (cand,) = (tmp_path / "runs").iterdir()
    gate = json.loads((cand / "manifest.json").read_text())["paired_gate"]
    pooled = next(r for r in gate["rows"] if r["primary"])
    assert gate["metric"] == "kl" and gate["kl_margin"] == KL_MARGIN and pooled["n"] > 0
    assert 1e-3 < pooled["diff"] < 1.0 and 0.0 <= pooled["diff_lo"] <= pooled["diff"] <= pooled["diff_hi"]
    assert [b["metric"] for b in pooled["beside"]] == ["correct", "p_answer"]
    assert (done.returncode == 1) == (gate["verdict"] == "FAIL")

    import ctxprobe as api
    from ctxprobe.evals.compare.paired.verdict import gate_cases

    compared = api.compare(f16_run, cand, metric="kl", write=False)
    assert [c.verdict for c in gate_cases(compared)] == [r["verdict"] for r in gate["rows"]]
    assert compared.exit_code == {"FAIL": 1, "UNDECIDED": 6, "PASS": 0}[gate["verdict"]]  # compare's as run's
