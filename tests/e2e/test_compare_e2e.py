"""`ctxprobe compare` on two small real runs of the embedded engine: f16 and q4_0 KV cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe

pytestmark = pytest.mark.engine

SUITE = ["--family", "niah", "--lengths", "1k", "--depths", "0,100", "--samples", "2", "--quiet"]


def test_compare_f16_with_q4_0_kv_cache(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for label, extra in (("f16", []), ("kvq4", ["--kv-cache-type", "q4_0"])):
        done = ctxprobe("run", *SUITE, "--label", label, "--results-dir", str(runs), *extra)
        assert done.returncode in (0, 1), done.stderr[-2000:]
    base, cand = sorted(runs.iterdir(), key=lambda p: p.name.endswith("kvq4"))
    done = ctxprobe("compare", str(base), str(cand), "--fail-if-drop", "0.99", "--results-dir", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "baseline f16  vs  candidate kvq4" in done.stdout and "gate --fail-if-drop 0.99: pass" in done.stdout
    (folder,) = (tmp_path / "cmp").iterdir()
    data = json.loads((folder / "compare.json").read_text())
    pairing = data["pairings"][0]
    # same model, same tokenizer: every sample pairs by its prompt hash
    assert pairing["by_prompt"] + sum(pairing["errored_base"].values()) + sum(pairing["errored_cand"].values()) >= 4
    assert pairing["by_task"] == 0 and data["warnings"] == []
    assert data["candidates"][0]["engine"]["engine"] == "llama-server"
    (pooled,) = [r for r in data["rows"] if r["level"] == "family_length"]
    assert pooled["n"] == pairing["pairs"] and -1 <= pooled["diff_lo"] <= pooled["diff"] <= pooled["diff_hi"] <= 1
    assert (folder / "diff_heatmap_kvq4_niah.png").stat().st_size > 10_000
