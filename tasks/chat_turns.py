"""The length of a multi-turn chat prompt (a `messages` array: user, assistant, ..., user), counted as a
one-message chat prompt is: the counter counts each message's text, and the chat template's tokens come
from the endpoint. `lead` (the builder's, measured once: the template around one user message with the
generation prompt) covers the first and last message's share; each further (assistant, user) pair adds
what the template writes around two more messages, `chat_pair_overhead()`, measured once at a server that
applies its template through a count call (runners/server_tokenizer.py). A counter that cannot measure it counts
0 there, as it counts only BOS for the lead (an offline counter without a server)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxprobe.tasks.registry import Draft
from ctxprobe.tasks.sample import NeedleSpot
from ctxprobe.tasks.token_counter import TokenCounter

ChatMessage = dict[str, str]


def pair_overhead(counter: TokenCounter) -> int:
    """Template tokens one more (assistant, user) pair adds, where the counter can measure it; else 0."""
    measure = getattr(counter, "chat_pair_overhead", None)
    value = measure() if callable(measure) else None
    return value if isinstance(value, int) else 0


def messages_tokens(messages: Sequence[ChatMessage], counter: TokenCounter, lead: int) -> int:
    """The tokens of a chat prompt of `messages` (an odd number, user first): lead + texts + pairs."""
    texts = counter.count_many([m["content"] for m in messages]) if messages else []
    return lead + sum(texts) + (len(messages) - 1) // 2 * pair_overhead(counter)


def offset_of(messages: Sequence[ChatMessage], index: int, counter: TokenCounter, lead: int) -> int:
    """About where message `index` starts, in tokens: the lead and every earlier message with its pairs'
    template tokens (the lead's generation prompt, a few tokens, is counted as coming first)."""
    before = counter.count_many([m["content"] for m in messages[:index]]) if index else []
    return lead + sum(before) + index // 2 * pair_overhead(counter)


def conversation_spots(draft: Draft, counter: TokenCounter, lead: int) -> list[NeedleSpot]:
    """Where a sized draft's needles are (none for a family that writes none): each needle's text occurs in the
    prompt text (head + tail) after the previous one's, and in chat mode its `answer` is an assistant message's
    text, whose user turn is where it starts."""
    prompt = draft.head + draft.tail
    spots: list[NeedleSpot] = []
    at = 0
    contents = [m["content"] for m in draft.messages]
    for needle in draft.needles:
        at = prompt.index(needle.text, at)
        if draft.messages:
            index = contents.index(needle.answer) - 1
            tokens = offset_of(draft.messages, index, counter, lead)
        else:
            tokens = lead + counter.count_many([prompt[:at]])[0]
        spots.append(
            NeedleSpot(
                role=needle.role,
                text=needle.text,
                answer=needle.answer,
                char_offset=at,
                token_offset=tokens,
                depth_pct=needle.depth,
            )
        )
        at += len(needle.text)
    return spots
