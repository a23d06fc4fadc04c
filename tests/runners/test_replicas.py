"""Failover across replicas: a replica whose connection fails leaves the rotation, its requests go to the
others, it is tried again after a backoff that doubles while it keeps failing, and the first answer puts it
back. The pool on a fake clock; a run on two fake replicas, one dead from the start and one killed mid-run."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fake_engine import FakeEngine

from ctxprobe.evals.cli.main import main
from ctxprobe.runners.replicas import LeastInFlight


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _pick(pool: LeastInFlight[str], prefer: int | None = None, chain: str | None = None) -> str:
    with pool.use(prefer, chain) as replica:
        return replica


def test_a_failed_replica_leaves_the_rotation_until_its_backoff_passes_and_an_answer_puts_it_back() -> None:
    clock = Clock()
    pool = LeastInFlight(["a", "b", "c"], backoff_base_s=1.0, backoff_max_s=8.0, clock=clock)
    pool.failed("b", "connection refused")
    assert pool.out_of_rotation == ["b"]
    assert {_pick(pool) for _ in range(12)} == {"a", "c"}
    assert _pick(pool, prefer=1) in ("a", "c")  # a lane's preferred replica is out: another one serves it
    clock.now += 1.0  # its backoff passed: tried again
    assert "b" in {_pick(pool) for _ in range(6)}
    pool.failed("b", "connection refused")  # failed again: twice as long out
    clock.now += 1.5
    assert pool.out_of_rotation == ["b"]
    clock.now += 0.5
    assert pool.out_of_rotation == []
    pool.answered("b")
    assert [(e.replica, e.event) for e in pool.events] == [("b", "dropped"), ("b", "restored")]
    assert pool.events[0].retry_after_s == 1.0 and pool.events[0].reason == "connection refused"


def test_the_backoff_doubles_up_to_its_cap() -> None:
    clock = Clock()
    pool = LeastInFlight(["a", "b"], backoff_base_s=1.0, backoff_max_s=8.0, clock=clock)
    waits = []
    for _ in range(6):
        pool.failed("b", "reset")
        start = clock.now
        while pool.out_of_rotation:
            clock.now += 0.25
        waits.append(clock.now - start)
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert [e.event for e in pool.events] == ["dropped"]  # one line: it never came back in between


def test_with_every_replica_out_the_one_due_first_is_tried_and_a_pool_of_one_is_never_emptied() -> None:
    clock = Clock()
    pool = LeastInFlight(["a", "b"], clock=clock)
    pool.failed("a", "x")
    clock.now += 0.5
    pool.failed("b", "x")
    assert _pick(pool) == "a"
    alone = LeastInFlight(["only"], clock=clock)
    alone.failed("only", "x")
    assert alone.out_of_rotation == [] and alone.events == [] and _pick(alone) == "only"


def _run(urls: list[str], results: Path, *extra: str) -> int:
    args = [
        "run",
        "--family",
        "niah",
        "--lengths",
        "1k",
        "--depths",
        "0:100:25",
        "--samples",
        "2",
        "--quiet",
        "--no-report",
        "--results-dir",
        str(results),
        "--concurrency",
        "2",
        "--retries",
        "0",
        "--order",
        "as-listed",
        *extra,
    ]
    for url in urls:
        args += ["--endpoint", url]
    return main(args)


def _records(results: Path) -> tuple[list[dict], dict]:
    folder = next(results.iterdir())
    lines = folder.joinpath("samples.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines], json.loads(folder.joinpath("manifest.json").read_text())


def test_a_dead_replica_gets_no_sample_to_lose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm") as dead:
        dead_url = dead.url  # once closed, nothing listens on its port
    with FakeEngine("vllm", answer="The number is 1234567.") as good:
        assert _run([good.url, dead_url], tmp_path) == 0
    records, manifest = _records(tmp_path)
    assert len(records) == 10 and all(r["error"] is None for r in records)
    assert {r["response"]["endpoint"] for r in records} == {good.url}
    [dropped] = manifest["replica_events"]
    assert dropped["replica"] == dead_url and dropped["event"] == "dropped"
    err = capsys.readouterr().err
    assert err.count("taken out of rotation") == 1 and dead_url in err


def test_a_replica_killed_mid_run_hands_its_samples_to_the_other(tmp_path: Path) -> None:
    served = 0
    lock = threading.Lock()
    with FakeEngine("vllm", answer="The number is 1234567.") as good:
        victim = FakeEngine("vllm", answer=lambda body: _count_and_kill())

        def _count_and_kill() -> str:
            nonlocal served
            with lock:
                served += 1
                if served == 2:
                    threading.Timer(0.0, victim.kill).start()
            return "The number is 1234567."

        with victim:
            assert _run([good.url, victim.url], tmp_path) == 0
    records, manifest = _records(tmp_path)
    assert len(records) == 10 and not [r for r in records if r["error"] is not None]
    by = {r["response"]["endpoint"] for r in records}
    assert by == {good.url, victim.url}  # the victim served some before it died, the good one the rest
    assert [e["event"] for e in manifest["replica_events"]] == ["dropped"]
    assert manifest["replica_events"][0]["replica"] == victim.url


def test_the_first_replica_killed_mid_run_leaves_its_tokenizer_and_samples_to_the_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first replica is the one the token counter was opened on: killed after a few answers, its
    tokenize calls and its samples in flight go to the second one, and every sample is scored."""
    served = 0
    lock = threading.Lock()
    victim = FakeEngine("vllm", answer=lambda body: _count_and_kill(), completion_delay_s=0.05)

    def _count_and_kill() -> str:
        nonlocal served
        with lock:
            served += 1
            if served == 3:
                threading.Timer(0.0, victim.kill).start()
        return "The number is 1234567."

    with victim, FakeEngine("vllm", answer="The number is 1234567.", completion_delay_s=0.05) as good:
        code = _run([victim.url, good.url], tmp_path, "--samples", "4")
    err = capsys.readouterr().err
    assert code == 0, err
    records, manifest = _records(tmp_path)
    assert len(records) == 20 and not [r for r in records if r["error"] is not None]
    assert {r["response"]["endpoint"] for r in records} == {good.url, victim.url}
    assert manifest["replica_events"][0] == {**manifest["replica_events"][0], "replica": victim.url, "event": "dropped"}
    assert "stopped serving" not in err


def test_a_chain_keeps_to_its_replica_moves_once_when_it_fails_and_stays_after_it_is_back() -> None:
    clock = Clock()
    pool = LeastInFlight(["a", "b", "c"], backoff_base_s=1.0, clock=clock)
    assert _pick(pool, prefer=0, chain="x") == "a" and pool.chain_replica("x") == "a"
    assert {_pick(pool, prefer=2, chain="x") for _ in range(5)} == {"a"}  # the chain's replica, not the lane's
    with pool.use(chain="y") as held:  # a new chain, no lane: the least busy ("a" has none in flight now)
        assert held == "a" and _pick(pool, chain="v") == "b"  # while "a" is busy, the next new chain: "b"
    pool.failed("a", "connection refused")
    moved = _pick(pool, prefer=0, chain="x")
    assert moved in ("b", "c") and pool.chain_replica("x") == moved
    clock.now += 1.0
    pool.answered("a")  # back in rotation
    assert {_pick(pool, prefer=0, chain="x") for _ in range(5)} == {moved}  # stays where it went
    assert _pick(pool, prefer=0, chain="z") == "a"  # a new chain takes the lane's replica again
    assert _pick(pool, prefer=0) == "a" and pool.chain_replica("w") is None
