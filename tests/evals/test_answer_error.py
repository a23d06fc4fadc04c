"""Responses that cannot be scored fairly are typed errors, not wrong answers."""

from __future__ import annotations

from ctxprobe.evals.records.record import ErrorKind, Response
from ctxprobe.evals.run.send.loop import answer_error


def response(text: str, finish: str | None, done: int | None) -> Response:
    return Response(
        endpoint="http://x", text=text, finish_reason=finish, prompt_tokens=4090, completion_tokens=done, latency_s=1.0
    )


def test_answer_cut_short_by_a_full_context_is_no_answer_room() -> None:
    kind, detail = answer_error(response(": 12", "length", 3), max_tokens=20)
    assert kind is ErrorKind.no_answer_room and "3 of 20" in (detail or "")


def test_a_length_stop_on_a_prompt_that_fits_the_context_is_truncated_not_no_room() -> None:
    """A 4K prompt in a 1M context has room: the engine cut the answer for a reason of its own."""
    kind, detail = answer_error(response(": 12", "length", 3), max_tokens=20, context_length=2**20)
    assert kind is ErrorKind.truncated and "3 of 20" in (detail or "") and "1,048,576" in (detail or "")
    # the prompt and its budget overflow the served context by one token: no room
    kind, _ = answer_error(response(": 12", "length", 3), max_tokens=20, context_length=4090 + 19)
    assert kind is ErrorKind.no_answer_room
    assert (
        answer_error(response(": 12", "length", 3), max_tokens=20, context_length=4090 + 20)[0] is ErrorKind.truncated
    )


def test_full_length_answer_and_stopped_answer_are_scored() -> None:
    assert answer_error(response(": 1234567. And then", "length", 20), max_tokens=20) == (None, None)
    assert answer_error(response(": 1234567.", "stop", 5), max_tokens=20) == (None, None)


def test_empty_answer_is_empty() -> None:
    assert answer_error(response("  ", "stop", 0), max_tokens=20)[0] is ErrorKind.empty


def test_whitespace_the_model_generated_is_its_wrong_answer_not_an_error() -> None:
    """A base model emitting blank lines until max_tokens answered, wrongly; only nothing at all is empty."""
    assert answer_error(response("\n \n \n", "length", 20), max_tokens=20) == (None, None)
    assert answer_error(response("", "length", 20), max_tokens=20)[0] is ErrorKind.empty
    assert answer_error(response("  ", "stop", None), max_tokens=20)[0] is ErrorKind.empty
