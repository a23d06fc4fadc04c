"""`ctxprobe run` against a remote OpenAI-compatible endpoint (a fake vLLM, for its response shapes):
the engine probe, its own tokenizer as the token counter, the chat template in the budget, replicas."""

from __future__ import annotations

import json
from pathlib import Path

from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import CHAT_TEMPLATE_TOKENS, FakeEngine


def test_run_against_vllm_replicas_counts_with_the_servers_tokenizer(tmp_path: Path) -> None:
    with (
        FakeEngine("vllm", context_length=8192, answer="The number is 1234567.", reasoning="thinking") as a,
        FakeEngine("vllm", context_length=8192, answer="The number is 1234567.", reasoning="thinking") as b,
    ):
        code = main(
            [
                "run",
                "--endpoint",
                a.url,
                "--endpoint",
                b.url,
                "--family",
                "niah",
                "--lengths",
                "2k",
                "--depths",
                "0,50,100",
                "--samples",
                "2",
                "--label",
                "fake-vllm",
                "--quiet",
                "--results-dir",
                str(tmp_path),
            ]
        )
        calls = len(a.completion_calls()) + len(b.completion_calls())
        assert a.completion_calls() and b.completion_calls()  # balanced across replicas
    assert code == 0 and calls == 6
    run_dir = next(tmp_path.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["engine"]["engine"] == "vllm" and manifest["engine"]["context_length"] == 8192
    assert manifest["mode"] == "chat" and manifest["token_counter"].startswith("server:")
    records = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 6
    for r in records:
        planned, served = r["sample"]["planned_tokens"], r["response"]["prompt_tokens"]
        assert planned == served <= 2048  # the server's own count, chat template included
        assert served >= 2048 - 32
        assert r["response"]["reasoning"] == "thinking"
        assert r["score"]["correct"] is False and r["error"] is None
    assert CHAT_TEMPLATE_TOKENS > 1
