"""A vLLM-shaped fake engine whose prefix cache corrupts answers: what a real engine with a cache fault (vLLM
#40896: a prefix-cache hit that changes the answer at temperature 0) does, which the real engines here cannot
show. It reads a niah prompt as a perfect model would (the asked key's needle value), except that a request
that opens like an earlier one (its first `OPENING_WORDS` words: the shared haystack of a nested chain or a
depth sweep, served from the cache) answers another needle's value, unless it asks for a cold prefill the
way vLLM takes one (docs/ENGINES.md, "Cache path"): a `cache_salt` no earlier request carried.

    with CorruptingPrefixCache() as fake:          # fake.engine is a FakeEngine("vllm")
        ... --endpoint fake.url ...
        fake.cold_requests                          # requests that came with a fresh salt
"""

from __future__ import annotations

import re
import threading
from typing import Any

from tests.runners.fake_engine import FakeEngine

OPENING_WORDS = 64
_NEEDLE = re.compile(r"magic numbers? for ([\w-]+) is: (\d+)")
_ASKED = re.compile(r"magic number for ([\w-]+) mentioned in the provided text\?")


def _prompt(body: dict[str, Any]) -> str:
    if "messages" in body:
        return "\n".join(str(m.get("content", "")) for m in body["messages"])
    return str(body.get("prompt", ""))


def niah_answer(prompt: str, *, wrong: bool = False) -> str:
    """The asked key's value as a perfect model reads it; `wrong`: another needle's value (or the value with
    its last digit changed where the prompt holds no other)."""
    needles = dict(_NEEDLE.findall(prompt))
    asked = _ASKED.findall(prompt)
    if not asked or asked[-1] not in needles:
        return "I do not know."
    value = needles[asked[-1]]
    if wrong:
        others = [v for k, v in needles.items() if k != asked[-1] and v != value]
        value = others[0] if others else value[:-1] + str((int(value[-1]) + 1) % 10)
    return f" {value}."


class CorruptingPrefixCache:
    def __init__(self, *, corrupt: bool = True, **engine: Any) -> None:
        self.corrupt = corrupt
        self.openings: set[tuple[str, str]] = set()
        self.cold_requests = 0
        self.cached_requests = 0
        self._lock = threading.Lock()
        self.engine = FakeEngine("vllm", answer=self.answer, **engine)

    @property
    def url(self) -> str:
        return self.engine.url

    def __enter__(self) -> CorruptingPrefixCache:
        self.engine.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.engine.__exit__(*exc)

    def answer(self, body: dict[str, Any]) -> str:
        prompt = _prompt(body)
        opening = " ".join(prompt.split()[:OPENING_WORDS])
        salt = body.get("cache_salt")
        key = (salt if isinstance(salt, str) else "", opening)  # a salt is a cache of its own
        with self._lock:
            hit = key in self.openings
            self.openings.add(key)
            self.cold_requests += int(bool(key[0]) and not hit)
            self.cached_requests += int(hit)
        return niah_answer(prompt, wrong=self.corrupt and hit)
