"""Sending chains so that each context token is prefilled once (issue #40): a nested chain goes whole on one
lane in ascending length, the depths of one length back to back, never fanned out; the cache bound counts a
chain's longest context and its questions; every completion and chat request carries the chain's key in the
session header (`--session-header`, default X-Session-ID; `none` sends none; a bad name is refused in one
line, exit 2, before anything is sent); with two replicas a chain keeps to one, and a replica killed mid-run
hands its chains to the other, which keeps them. The header checks run the real openai SDK against the fake
engine, which records each request's headers and arrival."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.record import Response
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.loop import run_recipes
from ctxprobe.evals.run.send.order import QUESTION_ALLOWANCE, expected_cached_tokens, fans_out, limit_line, send_groups
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.identity import chain_key
from ctxprobe.tasks.sample import Recipe, sha256_text
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import make_token_counter
from tests.in_flight import InFlight
from tests.runners.fake_engine import FakeEngine, Recorded, Reply

COUNTER = "estimate:4"
HEADER = "x-session-id"


def nested(
    lengths: list[str], depths: str = "0,50,100", samples: int = 2, families: tuple[str, ...] = ("niah",)
) -> list[Recipe]:
    suite = Suite.model_validate(
        {
            "name": "s",
            "lengths": lengths,
            "depths": depths,
            "samples": samples,
            "layout": "nested",
            "tasks": [{"family": f} for f in families],
        }
    )
    return suite.recipes(lambda mode: COUNTER)


def test_a_chain_goes_in_ascending_length_with_the_depths_of_one_length_back_to_back() -> None:
    todo = nested(["1k", "2k", "4k"], samples=2, families=("niah", "recall"))
    shuffled = list(todo)
    random.Random(7).shuffle(shuffled)  # a resumed or re-batched run hands them in any order
    groups = send_groups(shuffled, "cache-aware")
    assert len(groups) == 2 * 2  # tasks x seeds: one group a chain
    assert sorted(r.sample_id() for g in groups for r in g) == sorted(r.sample_id() for r in todo)
    for group in groups:
        assert len({chain_key(r) for r in group}) == 1 and len(group) == 3 * 3
        lengths = [r.context_tokens for r in group]
        assert lengths == sorted(lengths)  # ascending, not deepest first
        runs = [k for k, _ in itertools.groupby(lengths)]
        assert runs == sorted(set(lengths))  # each length's depths back to back
        for length in set(lengths):
            assert sorted(r.depth for r in group if r.context_tokens == length) == [0.0, 50.0, 100.0]
    independent = Suite.model_validate(
        {"name": "s", "lengths": ["1k"], "depths": "0,50,100", "samples": 1, "tasks": [{"family": "niah"}]}
    ).recipes(lambda mode: COUNTER)
    [sweep] = send_groups(independent, "cache-aware")
    assert [r.depth for r in sweep] == [100.0, 50.0, 0.0]  # a depth sweep still deepest first


def test_a_chain_is_never_fanned_out_and_says_why_lanes_stay_idle() -> None:
    groups = send_groups(nested(["1k", "2k"], samples=2), "cache-aware")
    assert len(groups) == 2 and not fans_out(groups, "cache-aware", 8)
    line = limit_line(groups, 8, False)
    assert line is not None and line.startswith("2 chains for 8 lanes") and "at most 2 requests" in line


def test_the_bound_of_a_chain_is_its_longest_context_and_its_questions() -> None:
    """Built prompts: each consecutive pair of a chain shares at least the bound's tokens (counted on the
    shared text itself), and with the built streams the chain's uncached tokens are its longest context and
    every other prompt's tail (question), each context token once."""
    todo = nested(["1k", "2k", "4k"], samples=1)
    counter = make_token_counter(COUNTER)
    [group] = send_groups(todo, "cache-aware")
    samples = [build_sample(r, counter) for r in group]
    streams = {s.sample_id: s.measures["stream_tokens"] for s in samples}
    total, cached = expected_cached_tokens([group], streams=streams)
    tails = sum(r.context_tokens - streams[r.sample_id()] for r in group[:-1])
    assert total - cached == group[-1].context_tokens + tails
    assert total - cached < sum({r.context_tokens for r in group}) + 9 * 80  # the floor, not the grid
    for a, b in itertools.pairwise(samples):  # the counter counts the shared text whole, the builder unit by unit
        shared = os.path.commonprefix([a.prompt, b.prompt])
        assert counter.count_many([shared])[0] + counter.bos_tokens >= 0.97 * min(
            streams[a.sample_id], streams[b.sample_id]
        )
    estimated = expected_cached_tokens([group])[1]  # before any build: the question allowance
    assert 0 < estimated <= cached
    assert all(r.context_tokens - streams[r.sample_id()] <= QUESTION_ALLOWANCE for r in group)


@dataclass
class ChainSender:
    """In-process: keeps each request's lane (affinity), chain and start/end on one clock."""

    delay_s: float = 0.02
    clock: itertools.count = field(default_factory=itertools.count)  # type: ignore[type-arg]
    sent: list[dict[str, Any]] = field(default_factory=list)
    flight: InFlight = field(default_factory=InFlight)

    async def send(
        self,
        prompt: str,
        *,
        max_tokens: int,
        planned_tokens: int,
        seed: int,
        affinity: int | None = None,
        chain: str | None = None,
        **extra: Any,
    ) -> Response:
        entry = {"prompt": prompt, "lane": affinity, "chain": chain, "start": next(self.clock)}
        self.sent.append(entry)
        with self.flight:
            await asyncio.sleep(self.delay_s)
        entry["end"] = next(self.clock)
        return Response(
            text="no idea",
            finish_reason="stop",
            completion_tokens=2,
            prompt_tokens=planned_tokens,
            latency_s=self.delay_s,
            endpoint="replica",
        )


def test_two_chains_with_concurrency_two_go_on_two_lanes_one_after_another(tmp_path: Path) -> None:
    todo = nested(["1k", "2k"], samples=2)
    counter = make_token_counter(COUNTER)
    recipe_of = {build_sample(r, counter).prompt: r for r in todo}
    sender, store = ChainSender(), RunStore(tmp_path)
    progress = asyncio.run(run_recipes(todo, sender, store, concurrency=2, counter=counter, order="cache-aware"))
    store.close()
    assert len(sender.sent) == len(todo) == 12 and sender.flight.peak == 2
    by_chain: dict[str, list[dict[str, Any]]] = {}
    for entry in sender.sent:
        recipe = recipe_of[entry["prompt"]]
        assert entry["chain"] == chain_key(recipe)
        by_chain.setdefault(entry["chain"], []).append(entry)
    assert len(by_chain) == 2
    lanes = [{e["lane"] for e in entries} for entries in by_chain.values()]
    assert all(len(lane) == 1 for lane in lanes) and lanes[0] != lanes[1]  # one lane each, two lanes
    for entries in by_chain.values():
        entries.sort(key=lambda e: e["start"])
        assert all(a["end"] < b["start"] for a, b in itertools.pairwise(entries))  # never racing itself
        assert [recipe_of[e["prompt"]].context_tokens for e in entries] == [1024] * 3 + [2048] * 3
    detail = progress.order_detail
    assert detail is not None and (detail.sweeps, detail.chains, detail.fanned_out) == (2, 2, 0)


# --- against the fake engine, through the command line and the openai SDK ---


def _run(urls: list[str], out: Path, *flags: str) -> int:
    args = ["run", "--family", "niah", "--quiet", "--no-report", "--results-dir", str(out), "--retries", "0", *flags]
    for url in urls:
        args += ["--endpoint", url]
    return main(args)


def _records(out: Path) -> list[dict[str, Any]]:
    run_dir = next(out.iterdir())
    return [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]


def _prompt(call: Recorded) -> str:
    body = call.body
    return str(body["messages"][-1]["content"]) if "messages" in body else str(body["prompt"])


def _chains_by_prompt(out: Path) -> dict[str, tuple[str, Recipe]]:
    """Each sent prompt's sha256 -> (its chain key, its recipe), from the run's records."""
    out_map = {}
    for rec in _records(out):
        recipe = Recipe.model_validate(rec["sample"]["recipe"])
        out_map[rec["sample"]["prompt_sha256"]] = (chain_key(recipe), recipe)
    return out_map


NESTED = ("--layout", "nested", "--lengths", "1k,2k", "--depths", "0,50,100", "--samples", "2")


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_a_nested_run_sends_each_chain_in_order_with_its_key_in_the_header(mode: str, tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        assert _run([engine.url], tmp_path, *NESTED, "--mode", mode, "--concurrency", "2") == 0
        every = engine.completion_calls()
    calls = [c for c in every if "cache_salt" not in c.body]  # the cache-path control's cold re-sends apart
    cold = every[len(calls) :]
    assert len(cold) == 2 and all("cache_salt" in c.body for c in cold)  # after the run's own, one per length
    chains = _chains_by_prompt(tmp_path)
    assert len(calls) == len(chains) == 12
    sent: dict[str, list[Recipe]] = {}
    for call in sorted(calls, key=lambda c: c.at):
        assert call.path == ("/v1/chat/completions" if mode == "chat" else "/v1/completions")
        key, recipe = chains[sha256_text(_prompt(call))]
        assert call.headers[HEADER] == key  # every request names its chain
        sent.setdefault(key, []).append(recipe)
    assert len(sent) == 2  # two seeds: two chains
    for recipes in sent.values():
        assert [r.context_tokens for r in recipes] == [1024] * 3 + [2048] * 3
    manifest = json.loads(next(tmp_path.iterdir()).joinpath("manifest.json").read_text())
    assert manifest["options"]["session_header"] == "X-Session-ID"
    assert manifest["order_detail"]["chains"] == 2 and manifest["order_detail"]["fanned_out"] == 0


def test_an_independent_sweep_is_its_own_chain_in_the_header(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        assert (
            _run([engine.url], tmp_path, "--lengths", "1k", "--depths", "0,100", "--samples", "2", "--concurrency", "8")
            == 0
        )  # fanned out: tails carry the head's key too
        calls = engine.completion_calls()
    chains = _chains_by_prompt(tmp_path)
    keys = [call.headers[HEADER] for call in calls]
    assert keys == [chains[sha256_text(_prompt(call))][0] for call in calls]
    assert len(set(keys)) == 2 and len(keys) == 4  # one key a depth sweep (a seed)


@pytest.mark.parametrize(
    ("flag", "present", "absent"), [("none", None, HEADER), ("NONE", None, HEADER), ("X-Chain", "x-chain", HEADER)]
)
def test_the_header_is_named_or_left_out(flag: str, present: str | None, absent: str, tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        assert (
            _run(
                [engine.url],
                tmp_path,
                "--lengths",
                "1k",
                "--depths",
                "0,100",
                "--samples",
                "1",
                "--session-header",
                flag,
            )
            == 0
        )
        calls = engine.completion_calls()
    assert len(calls) == 2 and all(absent not in c.headers for c in calls)
    if present is not None:
        [key] = {chain for chain, _ in _chains_by_prompt(tmp_path).values()}
        assert all(c.headers[present] == key for c in calls)
    else:
        assert (
            json.loads(next(tmp_path.iterdir()).joinpath("manifest.json").read_text())["options"]["session_header"]
            is None
        )


@pytest.mark.parametrize("bad", ["X Session", "X-Session:", "Sessión", "", "Authorization"])
def test_a_bad_header_name_is_one_line_exit_2_before_anything_is_sent(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        try:
            code = _run([engine.url], tmp_path / "out", "--lengths", "1k", "--session-header", bad)
        except SystemExit as stop:  # the parser's own one line (an empty value)
            code = stop.code  # type: ignore[assignment]
        assert engine.requests == []
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--session-header" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def _by_replica(engines: dict[str, FakeEngine]) -> list[tuple[float, str, str]]:
    """(arrival, replica, chain key) of every completion request of the run's own (the cache-path control's
    cold re-sends apart), in arrival order."""
    return sorted(
        (c.at, name, c.headers[HEADER])
        for name, e in engines.items()
        for c in e.completion_calls()
        if "cache_salt" not in c.body
    )


def test_with_two_replicas_every_chain_keeps_to_one(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as a, FakeEngine("vllm", context_length=8192) as b:
        assert _run([a.url, b.url], tmp_path, *NESTED, "--samples", "4", "--concurrency", "4") == 0
        seen = _by_replica({"a": a, "b": b})
    assert len(seen) == 4 * 6
    where: dict[str, set[str]] = {}
    for _, replica, key in seen:
        where.setdefault(key, set()).add(replica)
    assert len(where) == 4 and all(len(r) == 1 for r in where.values())
    assert {r for rs in where.values() for r in rs} == {"a", "b"}  # the chains spread over both
    endpoints: dict[str, set[str]] = {}
    for rec in _records(tmp_path):
        endpoints.setdefault(chain_key(Recipe.model_validate(rec["sample"]["recipe"])), set()).add(
            rec["response"]["endpoint"]
        )
    assert all(len(e) == 1 for e in endpoints.values())


def test_a_replica_killed_mid_run_hands_its_chains_to_the_other_which_keeps_them(tmp_path: Path) -> None:
    served = 0
    lock = threading.Lock()
    victim = FakeEngine("vllm", context_length=8192, answer=lambda body: _count_and_kill(), completion_delay_s=0.05)

    def _count_and_kill() -> str:
        nonlocal served
        with lock:
            served += 1
            if served == 4:
                threading.Timer(0.0, victim.kill).start()
        return "The number is 1234567."

    with FakeEngine("vllm", context_length=8192, completion_delay_s=0.05) as good, victim:
        code = _run([good.url, victim.url], tmp_path, *NESTED, "--samples", "4", "--concurrency", "4")
        seen = _by_replica({"good": good, "victim": victim})
    assert code == 0
    records = _records(tmp_path)
    assert len(records) == 24 and not [r for r in records if r["error"] is not None]
    path: dict[str, list[str]] = {}
    for _, replica, key in seen:
        path.setdefault(key, []).append(replica)
    moved = [p for p in path.values() if p[0] == "victim"]
    assert moved and all(p[-1] == "good" for p in moved)  # its chains went on, on the other replica
    for p in path.values():
        assert [k for k, _ in itertools.groupby(p)] in (["good"], ["victim", "good"])  # moved once, and kept there


def test_a_chain_moved_off_a_failing_replica_stays_when_that_replica_is_back(tmp_path: Path) -> None:
    """The second replica drops its first request's connection, then serves again (back in rotation after
    its 1 s backoff): the chain that request belonged to went on on the first replica and stays there; the
    lane's own replica does not take it back."""
    with (
        FakeEngine("vllm", context_length=8192, completion_delay_s=0.3) as a,
        FakeEngine("vllm", context_length=8192, completion_delay_s=0.3) as b,
    ):
        b.script.append(Reply(drop=True))
        assert _run([a.url, b.url], tmp_path, *NESTED, "--concurrency", "2") == 0
        seen = _by_replica({"a": a, "b": b})
    path: dict[str, list[str]] = {}
    for _, replica, key in seen:
        path.setdefault(key, []).append(replica)
    assert sorted(path.values()) == [["a"] * 6, ["b"] + ["a"] * 6]  # the dropped one, then all on a
    assert not [r for r in _records(tmp_path) if r["error"] is not None]
