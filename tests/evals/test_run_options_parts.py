"""A run's options are one model of named parts: the same options given by their flat names (the keyword
arguments of `ctxprobe.run`, the flags, the manifest's `options`) or as parts are one object; the manifest keeps
the flat form it always had, so a run folder written before the parts resumes as it did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.sequential.cells import StopOptions
from ctxprobe.evals.run.send.options import EndpointOptions, OutputOptions, RunOptions, SuiteOptions, validated
from ctxprobe.runners.launchers import launchers
from ctxprobe.runners.launchers.llama_cpp import EmbeddedSettings
from ctxprobe.tasks.errors import UserError
from tests.runners.fake_engine import FakeEngine, Reply

SUITE = ["--family", "niah", "--lengths", "1k", "--depths", "0,50,100", "--samples", "2", "--quiet"]


def test_flat_names_and_parts_are_one_object() -> None:
    flat = RunOptions(
        family="niah", lengths="1k", label="q4km", concurrency=2, n_ctx=4096, stop="decided", max_samples=8
    )
    parts = RunOptions(
        grid=SuiteOptions(family="niah", lengths="1k"),
        outputs=OutputOptions(label="q4km"),
        endpoint=EndpointOptions(concurrency=2, launcher=EmbeddedSettings(n_ctx=4096)),
        stopping=StopOptions(stop="decided", max_samples=8),
    )
    assert flat == parts and flat.flat() == parts.flat()
    assert (
        flat.given() == parts.given() == {"family", "lengths", "label", "concurrency", "n_ctx", "stop", "max_samples"}
    )
    # a part given whole, with a flat name of its fields on top
    both = RunOptions(endpoint=EndpointOptions(concurrency=2), n_ctx=4096)
    assert (both.endpoint.concurrency, both.endpoint.launcher.n_ctx) == (2, 4096)  # type: ignore[attr-defined]


def test_the_options_are_a_handful_of_parts_and_no_tower() -> None:
    assert len(RunOptions.model_fields) <= 30
    ours = [c for c in RunOptions.__mro__ if c.__module__.startswith("ctxprobe")]
    assert len(ours) <= 3
    settings = {found.settings for found in launchers()}
    for model in (RunOptions, EndpointOptions):
        assert not settings & set(model.__mro__)  # no class inherits from every launcher's settings


def test_the_flat_form_reads_back_as_the_same_options() -> None:
    given = RunOptions(
        suite="quick",
        endpoints=["http://127.0.0.1:9"],
        engine="vllm",
        model_dir="m",
        against="base-run",
        logprobs=True,
        judge_endpoint="http://127.0.0.1:8",
        gpus=2,
        label="x",
    )
    again = validated(RunOptions, given.flat())
    assert again.flat() == given.flat() and again.endpoint.launcher == given.endpoint.launcher


def test_a_bad_option_inside_a_part_is_named_by_its_flag() -> None:
    for values, flag in (
        ({"concurrency": 0}, "--concurrency"),
        ({"n_ctx": 1}, "--n-ctx"),
        ({"samples": 0}, "--samples"),
        ({"top_logprobs": 0}, "--top-logprobs"),
    ):
        with pytest.raises(UserError, match=f"^invalid option {flag}: "):
            validated(RunOptions, values)


def test_a_run_folder_written_with_the_old_flat_options_resumes(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as a:
        a.script.extend(Reply(status=500) for _ in range(2))  # two samples end in http errors
        code = main(
            ["run", "--endpoint", a.url, *SUITE, "--retries", "0", "--concurrency", "1", "--results-dir", str(tmp_path)]
        )
    assert code == 1
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    # An older manifest: flat names, every launcher's settings, and none of the options added since.
    old = {
        k: v
        for k, v in manifest["options"].items()
        if k not in ("cache_check", "probe_up_to", "logprobs", "top_logprobs", "baseline_endpoint", "facts")
    }
    assert {"n_ctx", "vllm_args", "engine", "label", "stop"} <= set(old)
    path.write_text(json.dumps({**manifest, "options": old}))
    with FakeEngine("vllm", context_length=8192) as b:  # the same model, now at another port
        code = main(["run", "--resume", str(run_dir), "--endpoint", b.url, "--quiet"])
        assert len(b.completion_calls()) == 2  # only the errored ones are sent again
    assert code == 0
    after = json.loads(path.read_text())
    assert after["status"] == "finished" and after["options"]["endpoints"] == [b.url]
    assert after["options"]["concurrency"] == 1 and after["options"]["retries"] == 0  # kept from the run
