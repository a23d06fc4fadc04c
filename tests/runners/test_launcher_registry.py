"""Launched engines are plug-ins: a launcher registered through the registry (runners/launchers/) or named by a
`ctxprobe.launchers` entry point gets its argument group in `run --help`, `--engine NAME` resolves to it, an
unknown name is one line listing the known ones, and, loaded before the options are composed (as an entry
point is), its settings are run options: a run with `--engine toy` is served by it and records its settings."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, Field

from ctxprobe.evals.cli.main import build_parser
from ctxprobe.evals.run.send.options import EndpointOptions, RunOptions
from ctxprobe.evals.run.send.serving import default_mode
from ctxprobe.runners import launchers as registry
from ctxprobe.runners.launchers import Launch, Launcher, launcher, launcher_for, launcher_names, launchers
from ctxprobe.runners.launchers.llama_cpp import EmbeddedSettings
from ctxprobe.runners.served import Launched
from ctxprobe.runners.settings import VllmSettings
from ctxprobe.tasks.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
TOY_DIR = Path(__file__).parent / "fixtures" / "launchers"


def run_help() -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices["run"].format_help()  # type: ignore[attr-defined]


def test_the_built_in_launchers_are_registered_in_order() -> None:
    assert launcher_names()[:2] == ("llama.cpp", "vllm")
    assert launcher_for("llama.cpp").default_mode == "completions" and launcher_for("vllm").default_mode == "chat"
    assert default_mode(EndpointOptions()) == "completions"
    assert default_mode(EndpointOptions(engine="vllm")) == "chat"
    assert default_mode(EndpointOptions(endpoints=["http://127.0.0.1:9"], engine="llama.cpp")) == "chat"


def test_an_unknown_engine_is_one_line_listing_the_known_ones() -> None:
    with pytest.raises(UserError) as caught:
        launcher_for("nope")
    assert str(caught.value) == "unknown engine 'nope' to start; known: llama.cpp, vllm"
    with pytest.raises(UserError, match="--engine"):
        from ctxprobe.evals.run.send.options import validated

        validated(RunOptions, {"engine": "nope"})


def test_the_built_in_settings_stay_run_options() -> None:
    """Every launcher's settings are run options by their flat names; the chosen launcher's are one part of the
    run's options, typed as its own settings model, and another launcher's are not this run's engine."""
    opts = RunOptions(kv_cache_type="q4_0", engine="vllm", vllm_python="/usr/bin/python3", model_file="m.gguf")
    assert (opts.endpoint.engine, opts.endpoint.launcher) == ("vllm", VllmSettings(vllm_python="/usr/bin/python3"))
    embedded = RunOptions(kv_cache_type="q4_0", model_file="m.gguf").endpoint.launcher
    assert type(embedded) is EmbeddedSettings and (embedded.kv_cache_type, embedded.model_file) == ("q4_0", "m.gguf")
    named = {name for found in launchers() for name in found.settings.model_fields}
    assert named <= set(RunOptions.flat_fields())
    assert opts.flat()["kv_cache_type"] == "f16" and opts.flat()["vllm_python"] == "/usr/bin/python3"
    with pytest.raises(UserError, match=r"VllmSettings given for --engine llama\.cpp"):
        RunOptions(endpoint=EndpointOptions(launcher=VllmSettings()))


class ToySettings(BaseModel):
    toy_greeting: str = Field("hello", description="toy engine: what it says first")


@contextlib.contextmanager
def registered_toy() -> Iterator[type[Launcher]]:
    class Toy(Launcher):
        name = "toy"
        summary = "a toy"
        group = "toy engine (--engine toy)"
        settings = ToySettings
        metavars: ClassVar[dict[str, str]] = {"toy_greeting": "WORDS"}

        def serve(self, launch: Launch) -> contextlib.AbstractContextManager[Launched]:
            raise NotImplementedError

    launcher(Toy)
    try:
        yield Toy
    finally:
        registry.unregister("toy")


def test_a_registered_launcher_gets_its_group_and_resolves_by_name() -> None:
    assert "toy engine" not in run_help()
    with registered_toy() as toy:
        text = run_help()
        assert "toy engine (--engine toy):" in text and "--toy-greeting WORDS" in text
        assert "toy engine: what it says first (default: hello)" in text
        assert isinstance(launcher_for("toy"), toy) and "toy" in launcher_names()
        with pytest.raises(ValueError, match="registered twice"):
            launcher(toy)
    assert "toy engine" not in run_help() and "toy" not in launcher_names()


def test_a_launcher_may_not_take_another_launchers_field() -> None:
    class Thief(Launcher):
        name = "thief"
        summary = "takes n_ctx"
        group = "thief"
        settings = type("ThiefSettings", (BaseModel,), {"__annotations__": {"n_ctx": int}, "n_ctx": 1})

        def serve(self, launch: Launch) -> contextlib.AbstractContextManager[Launched]:
            raise NotImplementedError

    with pytest.raises(ValueError, match=r"n_ctx, already launcher 'llama\.cpp'"):
        launcher(Thief)
    assert "thief" not in launcher_names()


def toy_entry_points(real: object = metadata.entry_points) -> object:
    def entry_points(**params: object) -> object:
        if params.get("group") == registry.ENTRY_POINT_GROUP:
            return metadata.EntryPoints([metadata.EntryPoint("toy", "toy_launcher", registry.ENTRY_POINT_GROUP)])
        return real(**params)  # type: ignore[operator]

    return entry_points


def test_an_entry_point_names_a_launcher_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TOY_DIR))
    monkeypatch.setattr(metadata, "entry_points", toy_entry_points())
    monkeypatch.setattr(registry.LAUNCHERS, "discovered", False)
    monkeypatch.delitem(sys.modules, "toy_launcher", raising=False)
    try:
        found = launcher_for("toy")
        assert type(found).__module__ == "toy_launcher" and found.group == "toy engine (--engine toy)"
        assert "--toy-context TOKENS" in run_help()
    finally:
        registry.unregister("toy")


def test_an_entry_point_that_does_not_load_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = metadata.EntryPoints([metadata.EntryPoint("gone", "no_such_module_here", registry.ENTRY_POINT_GROUP)])
    monkeypatch.setattr(metadata, "entry_points", lambda **params: broken)
    monkeypatch.setattr(registry.LAUNCHERS, "discovered", False)
    with pytest.raises(UserError, match=r"launcher plugin 'gone' .* does not load"):
        launchers()


# The whole path, in a process of its own: the entry point is there before the options are composed, as an
# installed plugin's is, so `--engine toy` and `--toy-context` are run options, the run is served by the toy.
# The process runs each command line it is given in turn, as `ctxprobe` would, and prints what each exited
# with and wrote (one interpreter start, not one per command).
SCRIPT = f"""
import contextlib, io, json, sys
from importlib import metadata
sys.path[:0] = [{str(TOY_DIR)!r}, {str(ROOT)!r}]
real = metadata.entry_points
def entry_points(**params):
    if params.get("group") == "ctxprobe.launchers":
        return metadata.EntryPoints([metadata.EntryPoint("toy", "toy_launcher", "ctxprobe.launchers")])
    return real(**params)
metadata.entry_points = entry_points
from ctxprobe.evals.cli.main import main
def command(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return {{"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()}}
json.dump([command(argv) for argv in json.loads(sys.argv[1])], sys.stdout)
"""


def cli(*commands: list[str], cwd: Path) -> list[dict[str, Any]]:
    """What each command line exited with and wrote, run in turn in one process."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_entry_point_launcher_serves_a_run(tmp_path: Path) -> None:
    run = ["run", "--engine", "toy", "--toy-context", "4096", "--family", "niah", "--lengths", "1k", "--depths", "50"]
    results = ["--samples", "1", "--quiet", "--no-report", "--allow-errors", "--results-dir", str(tmp_path / "results")]
    shown, done, wrong = cli(["run", "--help"], run + results, ["run", "--engine", "nope"], cwd=tmp_path)
    assert shown["returncode"] == 0, shown["stderr"]
    assert "--engine {llama.cpp,vllm,toy}" in shown["stdout"] and "toy (a fake server in a thread)" in shown["stdout"]
    assert "toy engine (--engine toy):" in shown["stdout"] and "--toy-context TOKENS" in shown["stdout"]
    assert done["returncode"] == 0, done["stderr"]
    manifest = json.loads(next((tmp_path / "results").glob("*/manifest.json")).read_text())
    assert manifest["options"]["engine"] == "toy" and manifest["options"]["toy_context"] == 4096
    assert manifest["mode"] == "chat" and manifest["engine"]["engine"] == "vllm"  # the fake speaks vLLM
    assert manifest["engine"]["context_length"] == 4096
    assert wrong["returncode"] == 2 and "invalid choice: 'nope'" in wrong["stderr"]
