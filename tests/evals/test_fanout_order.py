"""The fanned-out send order: with fewer depth sweeps than lanes, each sweep's deepest sample goes first and
the rest of the sweep together once it has been served, on the head's replica. Checked on an in-process
sender that records when each request starts and ends: the lanes fill, heads precede their tails, a tail
never starts before its head has finished, every sample is sent exactly once, and every tail finds its
head's prompt (identical up to the tail's own needle) served before it on its replica, so the cache bound
of the order sent one after another still holds; a run killed mid-fan-out resumes keeping every finished
sample once. With as many sweeps as lanes the order is as before."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.record import Response
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.loop import Progress, run_recipes
from ctxprobe.evals.run.send.order import expected_cached_tokens, fans_out, reachable_in_flight, send_groups
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import make_token_counter
from tests.in_flight import InFlight
from tests.runners.fake_engine import FakeEngine

COUNTER = "estimate:4"


@dataclass
class Sent:
    prompt: str
    affinity: int | None
    start: int
    end: int = -1


@dataclass
class RecordingSender:
    """Answers after `delay_s`; keeps each request's start and end on one event clock and the peak in flight."""

    delay_s: float = 0.02
    clock: itertools.count = field(default_factory=itertools.count)  # type: ignore[type-arg]
    sent: list[Sent] = field(default_factory=list)
    flight: InFlight = field(default_factory=InFlight)

    async def send(
        self, prompt: str, *, max_tokens: int, planned_tokens: int, seed: int, affinity: int | None = None, **extra: Any
    ) -> Response:
        entry = Sent(prompt, affinity, next(self.clock))
        self.sent.append(entry)
        with self.flight:
            await asyncio.sleep(self.delay_s)
        entry.end = next(self.clock)
        return Response(
            text="no idea",
            finish_reason="stop",
            completion_tokens=2,
            prompt_tokens=planned_tokens,
            latency_s=self.delay_s,
            endpoint=f"replica-{affinity}",
        )


def recipes(samples: int, depths: str = "0:100:10") -> list[Any]:
    suite = Suite.model_validate(
        {"name": "s", "lengths": ["1k"], "depths": depths, "samples": samples, "tasks": [{"family": "niah"}]}
    )
    return suite.recipes(lambda mode: COUNTER)


def send(
    tmp_path: Path, todo: list[Any], concurrency: int, order: str = "cache-aware", delay_s: float = 0.02
) -> tuple[RecordingSender, Progress, RunStore]:
    sender, store = RecordingSender(delay_s), RunStore(tmp_path)
    tmp_path.mkdir(parents=True, exist_ok=True)
    counter = make_token_counter(COUNTER)
    progress = asyncio.run(run_recipes(todo, sender, store, concurrency=concurrency, counter=counter, order=order))  # type: ignore[arg-type]
    store.close()
    return sender, progress, store


def by_prompt(todo: list[Any]) -> dict[str, Any]:
    counter = make_token_counter(COUNTER)
    return {build_sample(r, counter).prompt: r for r in todo}


def common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def test_few_sweeps_fill_the_lanes_heads_first_every_sample_once(tmp_path: Path) -> None:
    todo = recipes(samples=4)  # 4 sweeps of 11 depths
    sender, progress, store = send(tmp_path, todo, concurrency=16, delay_s=0.5)  # time to build tails meanwhile
    assert sender.flight.peak == 16  # one lane a sweep would keep 4 in flight
    recipe_of = by_prompt(todo)
    assert sorted(recipe_of[s.prompt].sample_id() for s in sender.sent) == sorted(r.sample_id() for r in todo)
    assert sorted(store.latest_records()) == sorted(r.sample_id() for r in todo)  # each once, each recorded
    for group in send_groups(todo, "cache-aware"):
        ids = [r.sample_id() for r in group]
        sent = {recipe_of[s.prompt].sample_id(): s for s in sender.sent}
        head, tails = sent[ids[0]], [sent[i] for i in ids[1:]]
        assert group[0].depth == max(r.depth for r in group)
        assert all(head.end < t.start for t in tails)  # no tail starts before its head has been served
        assert len({s.affinity for s in [head, *tails]}) == 1  # the whole sweep on the head's replica
    assert len({s.affinity for s in sender.sent}) == 4
    detail = progress.order_detail
    assert detail is not None and (detail.sweeps, detail.lanes, detail.fanned_out, detail.samples) == (4, 16, 1, 44)
    assert detail.in_flight_reachable == 16


def test_each_tail_finds_its_heads_prefix_served_on_its_replica(tmp_path: Path) -> None:
    """The cache bound: sent one after another, each sample reuses the previous one's prompt up to the
    shallower needle; fanned out, each tail finds its head (deepest) already served on its replica, sharing
    at least as long a prefix, and at least up to the tail's own needle."""
    todo = recipes(samples=2)
    sender, _, _ = send(tmp_path, todo, concurrency=8)
    counter = make_token_counter(COUNTER)
    for group in send_groups(todo, "cache-aware"):
        samples = [build_sample(r, counter) for r in group]
        head = next(s for s in sender.sent if s.prompt == samples[0].prompt)
        for previous, tail in itertools.pairwise(samples):
            sent = next(s for s in sender.sent if s.prompt == tail.prompt)
            served_before = [s.prompt for s in sender.sent if s.end < sent.start and s.affinity == sent.affinity]
            assert head.prompt in served_before
            shared = common_prefix(tail.prompt, head.prompt)
            assert shared >= common_prefix(tail.prompt, previous.prompt)  # no less than one after another
            assert shared >= tail.needles[0].char_offset
    total, cached = expected_cached_tokens(send_groups(todo, "cache-aware"))
    assert cached / total == pytest.approx(45 / 110, abs=1e-3)  # the bound the order is planned with


def test_as_many_sweeps_as_lanes_keep_one_lane_a_sweep(tmp_path: Path) -> None:
    todo = recipes(samples=4, depths="0,50,100")
    sender, progress, _ = send(tmp_path, todo, concurrency=4)
    recipe_of = by_prompt(todo)
    for group in send_groups(todo, "cache-aware"):
        mine = sorted((s for s in sender.sent if recipe_of[s.prompt] in group), key=lambda s: s.start)
        assert [recipe_of[s.prompt].depth for s in mine] == [100.0, 50.0, 0.0]
        assert all(a.end < b.start for a, b in itertools.pairwise(mine))  # one after another, never racing
    assert progress.order_detail is not None and progress.order_detail.fanned_out == 0
    assert sender.flight.peak == 4


def test_as_listed_is_never_fanned_out(tmp_path: Path) -> None:
    todo = recipes(samples=1, depths="0,50,100")
    sender, progress, _ = send(tmp_path, todo, concurrency=8, order="as-listed")
    assert all(s.affinity is None for s in sender.sent)
    assert progress.order_detail is not None and progress.order_detail.fanned_out == 0
    assert not fans_out(send_groups(todo, "cache-aware"), "as-listed", 8)


def test_what_still_limits_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    todo = recipes(samples=3, depths="0,100")  # 3 sweeps of 2: a tail each, so at most 3 in flight
    groups = send_groups(todo, "cache-aware")
    assert reachable_in_flight(groups, 8, True) == 3 and reachable_in_flight(groups, 2, True) == 2
    sender, progress, _ = send(tmp_path, todo, concurrency=8)
    err = capsys.readouterr().err
    assert err.count("at most 3 requests can be in flight at once, not 8") == 1
    assert (
        sender.flight.peak <= 3 and progress.order_detail is not None and progress.order_detail.in_flight_reachable == 3
    )
    send(tmp_path / "full", recipes(samples=2), concurrency=8)  # 2 sweeps of 11 fill 8 lanes: nothing to say
    assert "in flight at once" not in capsys.readouterr().err


def test_a_run_against_the_fake_engine_fills_its_concurrency(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192, completion_delay_s=0.6) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--depths",
                "0:100:10",
                "--samples",
                "3",
                "--concurrency",
                "12",
                "--quiet",
                "--results-dir",
                str(tmp_path),
            ]
        )
        assert code == 0
        assert engine.peak_in_flight["completions"] == 12  # 3 sweeps: 3 in flight, one lane a sweep
        assert len(engine.completion_calls()) == 33
    run_dir = next(tmp_path.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["order_detail"] == {
        "order": "cache-aware",
        "lanes": 12,
        "batches": 1,
        "sweeps": 3,
        "chains": 0,
        "samples": 33,
        "fanned_out": 1,
        "in_flight_reachable": 12,
    }
    ids = [json.loads(x)["sample"]["sample_id"] for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 33


def test_kill_9_mid_fan_out_then_resume_keeps_every_sample_once(tmp_path: Path) -> None:
    from tests.e2e.ctxprobe_cli import only_run_dir, popen

    with FakeEngine("vllm", context_length=8192, completion_delay_s=0.3) as engine:
        proc = popen(
            "run",
            "--endpoint",
            engine.url,
            "--family",
            "niah",
            "--lengths",
            "1k",
            "--depths",
            "0:100:10",
            "--samples",
            "2",
            "--concurrency",
            "8",
            "--quiet",
            "--no-report",
            "--results-dir",
            str(tmp_path),
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            dirs = [p for p in tmp_path.iterdir() if p.is_dir()]
            if (
                dirs
                and (dirs[0] / "samples.jsonl").exists()
                and (dirs[0] / "samples.jsonl").read_text().count("\n") >= 3
            ):
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        run_dir = only_run_dir(tmp_path)
        before = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
        assert 3 <= len(before) < 22
        assert main(["run", "--resume", str(run_dir), "--quiet", "--no-report"]) == 0
    after = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    ids = [r["sample"]["sample_id"] for r in after]
    assert len(ids) == len(set(ids)) == 22
    kept = {r["sample"]["sample_id"]: r for r in after}
    assert all(kept[r["sample"]["sample_id"]] == r for r in before)  # finished samples kept, not sent again
