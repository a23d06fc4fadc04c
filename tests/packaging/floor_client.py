"""Run inside an environment holding only the declared floor versions of the endpoint client's
dependencies (see test_dependency_floors.py): one prompt per mode, streamed and not, and a too-long
rejection, against the stdlib fake engine. Prints `ok` when every check held."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runners"))

from fake_engine import FakeEngine

from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.runners.response import ErrorKind


async def send(config: EndpointConfig, prompt: str) -> str:
    async with EndpointClient(config) as client:
        response = await client.send(prompt, max_tokens=8, planned_tokens=10, seed=7)
    return response.text


async def too_long(config: EndpointConfig) -> ErrorKind:
    async with EndpointClient(config) as client:
        try:
            await client.send("word " * 80, max_tokens=8, planned_tokens=80, seed=7)
        except EndpointError as err:
            return err.kind
    raise AssertionError("a prompt over the context length was accepted")


def main() -> None:
    for mode in ("completions", "chat"):
        for stream in (True, False):
            with FakeEngine("vllm") as engine:
                config = EndpointConfig(base_urls=(engine.url,), mode=mode, stream=stream)  # type: ignore[arg-type]
                assert asyncio.run(send(config, "one two three")) == "The answer is 42.", (mode, stream)
        with FakeEngine("vllm", context_length=50) as engine:
            config = EndpointConfig(base_urls=(engine.url,), model="m", mode=mode, retries=0)  # type: ignore[arg-type]
            assert asyncio.run(too_long(config)) is ErrorKind.rejected_too_long, mode
    print("ok")


if __name__ == "__main__":
    main()
