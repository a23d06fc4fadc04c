"""The four engines' too-long 400 bodies (docs/ENGINES.md) are recognised and their limit read."""

from __future__ import annotations

import pytest
from fake_engine import FLAVORS, too_long_body

from ctxprobe.runners.too_long import parse_too_long


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("chat", [False, True])
def test_each_engines_body_gives_limit_and_prompt(flavor: str, chat: bool) -> None:
    body = too_long_body(flavor, limit=8192, prompt_tokens=9000, chat=chat)  # type: ignore[arg-type]
    found = parse_too_long(body)
    assert found is not None
    assert found.limit == 8192
    assert found.prompt_tokens == 9000
    assert "limit 8192 tokens" in found.detail()


def test_sglang_second_wording_gives_limit() -> None:
    found = parse_too_long(too_long_body("sglang", limit=32768, prompt_tokens=40000, sglang_variant=1))
    assert found is not None and found.limit == 32768


def test_the_sdk_unwraps_nested_errors_so_the_inner_dict_works_too() -> None:
    inner = too_long_body("llama-server", limit=2048, prompt_tokens=3000)["error"]
    found = parse_too_long(inner)
    assert found is not None and (found.limit, found.prompt_tokens) == (2048, 3000)


def test_a_message_string_alone_is_enough() -> None:
    found = parse_too_long(None, "Error code: 400 - This model's maximum context length is 4096 tokens.")
    assert found is not None and found.limit == 4096


def test_llama_server_fields_are_used_when_the_message_is_reworded() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "prompt too big",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5000,
            "n_ctx": 4096,
        }
    }
    found = parse_too_long(body)
    assert found is not None and (found.limit, found.prompt_tokens) == (4096, 5000)


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": "temperature must be non-negative", "type": "BadRequestError", "code": 400}},
        {"object": "error", "message": "model not found", "type": "NotFoundError", "code": 404},
        "Internal Server Error",
        None,
    ],
)
def test_other_errors_are_not_too_long(body: object) -> None:
    assert parse_too_long(body) is None
