"""ServerTokenizer uses each engine's tokenize call of docs/ENGINES.md and counts text without BOS."""

from __future__ import annotations

import time

import pytest
from fake_engine import CHAT_TEMPLATE_TOKENS, FLAVORS, FakeEngine

from ctxprobe.runners.server_tokenizer import (
    BATCH_CHARS,
    BATCH_PROBE,
    BATCH_TEXTS,
    ServerTokenizer,
    batches,
    server_token_counter,
)
from ctxprobe.tasks.errors import UserError
from tests.in_flight import InFlight

TEXTS = ["one", "one two", "one two three four five", "", "a b c d e f g h i j"]


@pytest.mark.parametrize("flavor", FLAVORS)
def test_counts_are_text_only_in_order(flavor: str) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        tok = ServerTokenizer(engine.url, flavor)
        assert tok.count_many(TEXTS) == [1, 2, 5, 0, 10]
        assert tok.count("x y z") == 3
        assert tok.bos_tokens == 1
        assert tok.adds_bos == (flavor == "llama-cpp-python")
        assert tok.approximate is False and tok.spec == f"server:{engine.url}"


@pytest.mark.parametrize(
    ("flavor", "path", "body"),
    [
        ("vllm", "/tokenize", {"prompt": "a b", "add_special_tokens": False}),
        ("sglang", "/v1/tokenize", {"prompt": "a b", "add_special_tokens": False}),
        ("llama-server", "/tokenize", {"content": "a b", "add_special": False}),
        ("llama-cpp-python", "/extras/tokenize/count", {"input": "a b"}),
    ],
)
def test_each_engines_call(flavor: str, path: str, body: dict[str, object]) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        ServerTokenizer(engine.url, flavor)._raw_count("a b", special=False)
        assert (engine.requests[-1].path, engine.requests[-1].body) == (path, body)


@pytest.mark.parametrize("flavor", ["vllm", "sglang", "llama-server"])
def test_chat_overhead_where_the_engine_applies_its_template(flavor: str) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        assert ServerTokenizer(engine.url, flavor).chat_overhead("a b c") == CHAT_TEMPLATE_TOKENS


@pytest.mark.parametrize("flavor", ["vllm", "llama-server"])
def test_chat_pair_overhead_is_what_two_more_messages_add_beyond_their_text(flavor: str) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        # the fake template adds CHAT_TEMPLATE_TOKENS around the whole conversation: nothing per message
        assert ServerTokenizer(engine.url, flavor).chat_pair_overhead("a b c") == 0
    with FakeEngine("llama-cpp-python") as engine:
        assert ServerTokenizer(engine.url, "llama-cpp-python").chat_pair_overhead() is None


def test_chat_overhead_is_none_for_llama_cpp_python() -> None:
    with FakeEngine("llama-cpp-python") as engine:
        assert ServerTokenizer(engine.url, "llama-cpp-python").chat_overhead() is None


def test_requests_run_concurrently_but_bounded() -> None:
    with FakeEngine("vllm") as engine:
        tok = ServerTokenizer(engine.url, "vllm", concurrency=3)
        flight, raw = InFlight(), tok._raw_count

        def slow(text: str, *, special: bool) -> int:
            with flight:
                time.sleep(0.05)
            return raw(text, special=special)

        tok._raw_count = slow  # type: ignore[method-assign]
        assert tok.count_many(["w"] * 12) == [1] * 12
    assert flight.peak == 3


def test_server_token_counter_probes_the_engine() -> None:
    with FakeEngine("sglang", model="org/m") as engine:
        tok = server_token_counter(engine.url)
        assert (tok.engine, tok.model) == ("sglang", "org/m")
        assert tok.count("a b") == 2


def test_unknown_engine_and_missing_route_are_user_errors() -> None:
    with pytest.raises(UserError, match="no tokenize call"):
        ServerTokenizer("http://127.0.0.1:1", "tgi")
    with FakeEngine("vllm") as engine, pytest.raises(UserError, match="HTTP 404"):
        ServerTokenizer(engine.url, "sglang").count("a")


def test_make_counter_builds_server_counters_with_the_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.runners.server_tokenizer import make_counter
    from ctxprobe.tasks.token_counter import make_token_counter

    monkeypatch.setenv("SERVER_KEY", "k-1")
    with FakeEngine("llama-server", api_key="k-1") as engine:
        tok = make_counter(f"server:{engine.url}", api_key_env="SERVER_KEY")
        assert isinstance(tok, ServerTokenizer) and tok.count("a b c") == 3
        assert make_counter(f"server:{engine.url}", api_key_env="SERVER_KEY") is tok  # one per process
        with pytest.raises(UserError, match="needs its endpoint's client"):
            make_token_counter(f"server:{engine.url}")  # the tasks package alone never reaches an endpoint
    assert make_counter("estimate:3").count_many(["abcdef"]) == [2]


def test_token_ids_leave_out_the_bos_llama_cpp_python_adds() -> None:
    with FakeEngine("llama-cpp-python") as engine:
        tok = ServerTokenizer(engine.url, "llama-cpp-python")
        assert len(tok.token_ids("a b c")) == tok.count("a b c") == 3


MANY = [" ".join(["w"] * (i % 7)) for i in range(1300)]  # 0 to 6 words each, 1,300 texts


def list_calls(engine: FakeEngine) -> int:
    return sum(
        1
        for r in engine.requests
        if isinstance(r.body, dict) and isinstance(r.body.get("content", r.body.get("prompt")), list)
    )


@pytest.mark.parametrize("flavor", ["llama-server", "sglang"])
def test_many_texts_are_counted_in_batches_with_the_counts_of_single_calls(flavor: str) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        tok = ServerTokenizer(engine.url, flavor)
        assert tok.count_many(MANY) == [len(t.split()) for t in MANY]
        # the check (one batch of BATCH_PROBE and one call for each of its texts), then 3 batches of 512
        assert list_calls(engine) == 1 + 3
        assert len(engine.requests) == 1 + len(BATCH_PROBE) + 3


@pytest.mark.parametrize("flavor", ["vllm", "llama-cpp-python"])
def test_an_engine_without_a_list_call_counts_one_text_a_call(flavor: str) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        tok = ServerTokenizer(engine.url, flavor)
        assert tok.count_many(MANY[:40]) == [len(t.split()) for t in MANY[:40]]
        assert list_calls(engine) == 0 and not tok.counts_batches


def test_a_server_that_refuses_a_list_is_counted_one_text_a_call() -> None:
    def strings_only(engine: FakeEngine, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        content = body["content"]
        if not isinstance(content, str):  # e.g. a proxy that takes one string
            return 400, {"error": {"code": 400, "message": "content must be a string", "type": "invalid_request_error"}}
        return 200, {"tokens": list(range(len(content.split())))}

    with FakeEngine("llama-server", routes={("POST", "/tokenize"): strings_only}) as engine:
        tok = ServerTokenizer(engine.url, "llama-server")
        assert tok.count_many(MANY[:30]) == [len(t.split()) for t in MANY[:30]]
        assert not tok.counts_batches and list_calls(engine) == 1  # the check's batch only


def test_a_batch_answer_that_disagrees_with_single_calls_is_not_used() -> None:
    def bos_per_piece(engine: FakeEngine, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        content = body["content"]
        pieces = content if isinstance(content, list) else [content]
        tokens: list[int] = []
        for piece in pieces:  # a server that puts a BOS before every string of a list
            tokens += (
                [2, *range(len(piece.split()))]
                if isinstance(piece, str) and isinstance(content, list)
                else (list(range(len(piece.split()))) if isinstance(piece, str) else [piece])
            )
        return 200, {"tokens": tokens}

    with FakeEngine("llama-server", routes={("POST", "/tokenize"): bos_per_piece}) as engine:
        tok = ServerTokenizer(engine.url, "llama-server")
        assert tok.count_many(MANY[:30]) == [len(t.split()) for t in MANY[:30]]
        assert not tok.counts_batches and list_calls(engine) == 1


def test_batches_keep_the_order_and_both_limits() -> None:
    texts = ["ab"] * (BATCH_TEXTS + 5) + ["x" * BATCH_CHARS, "y", "z" * (BATCH_CHARS // 2)] * 2
    runs = batches(texts)
    assert [t for run in runs for t in run] == texts
    assert all(len(run) <= BATCH_TEXTS for run in runs)
    assert all(sum(map(len, run)) <= BATCH_CHARS or len(run) == 1 for run in runs)
    assert [len(run) for run in runs] == [BATCH_TEXTS, 5, 1, 2, 1, 2]
