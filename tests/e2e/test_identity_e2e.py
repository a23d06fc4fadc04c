"""The same suite against the real engine started twice, at two addresses, gives identical sample ids and
byte-identical prompts; and the tokenizer reached through the server is the same identity as the one read
from the GGUF, so an embedded run pairs with both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe, only_run_dir

from ctxprobe.runners.launcher import EmbeddedEngine

pytestmark = pytest.mark.engine

SUITE = (
    "--family",
    "niah",
    "--lengths",
    "512",  # identity does not depend on the length
    "--depths",
    "0,100",
    "--samples",
    "1",
    "--mode",
    "completions",
    "--quiet",
)


def ids_and_shas(run_dir: Path) -> set[tuple[str, str]]:
    lines = (run_dir / "samples.jsonl").read_text().splitlines()
    return {(json.loads(x)["sample"]["sample_id"], json.loads(x)["sample"]["prompt_sha256"]) for x in lines}


def test_two_real_servers_and_the_gguf_give_the_same_samples(tmp_path: Path) -> None:
    runs = []
    with (
        EmbeddedEngine(n_ctx=1024, log_path=tmp_path / "a.log") as a,
        EmbeddedEngine(n_ctx=1024, log_path=tmp_path / "b.log") as b,
    ):
        assert a.base_url != b.base_url
        for name, engine in (("a", a), ("b", b)):
            done = ctxprobe("run", "--endpoint", engine.base_url, *SUITE, "--results-dir", str(tmp_path / name))
            assert done.returncode == 0, done.stderr[-2000:]
            runs.append(only_run_dir(tmp_path / name))
    done = ctxprobe("run", *SUITE, "--n-ctx", "1024", "--results-dir", str(tmp_path / "embedded"))
    assert done.returncode == 0, done.stderr[-2000:]
    runs.append(only_run_dir(tmp_path / "embedded"))
    first = ids_and_shas(runs[0])
    assert len(first) == 2
    assert all(ids_and_shas(r) == first for r in runs[1:])
    manifests = [json.loads((r / "manifest.json").read_text()) for r in runs]
    assert len({m["tokenizer"] for m in manifests}) == 1
    assert [m["token_counter"].split(":")[0] for m in manifests] == ["server", "server", "local"]
