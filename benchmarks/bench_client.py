"""Client overhead of ctxprobe's EndpointClient against a bare `openai.AsyncOpenAI` loop.

A minimal local server (stdlib, in a subprocess on 127.0.0.1) answers every request at once, so what is
measured is the client: 200 requests of 128K-token prompts (~512 KB of text each), 16 at a time, through
each client in turn (same request shape: streamed completions with usage, temperature 0, a seed).

    python benchmarks/bench_client.py [--requests 200] [--concurrency 16] [--prompt-kb 512] [--rounds 3]

Prints the client CPU time per request (the overhead; targets: ctxprobe <= 10 ms) and the throughput
ratio ctxprobe / bare (target >= 0.9), as medians over the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai

from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig

MODEL = "bench-model"
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


# --- the instant server (runs in a subprocess) -----------------------------------------------------------
def _sse(events: list[dict[str, object]]) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


_USAGE = {"prompt_tokens": 131072, "completion_tokens": 2, "total_tokens": 131074}
_STREAM = _sse(
    [
        {
            "id": "c",
            "object": "text_completion",
            "created": 0,
            "model": MODEL,
            "choices": [{"index": 0, "text": " 42", "logprobs": None, "finish_reason": None}],
        },
        {
            "id": "c",
            "object": "text_completion",
            "created": 0,
            "model": MODEL,
            "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": "stop"}],
        },
        {"id": "c", "object": "text_completion", "created": 0, "model": MODEL, "choices": [], "usage": _USAGE},
    ]
)
_WHOLE = json.dumps(
    {
        "id": "c",
        "object": "text_completion",
        "created": 0,
        "model": MODEL,
        "usage": _USAGE,
        "choices": [{"index": 0, "text": " 42", "logprobs": None, "finish_reason": "stop"}],
    }
).encode()
_MODELS = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "bench"}]}).encode()


class _Instant(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(_MODELS, "application/json")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if b'"stream":true' in body.replace(b" ", b""):
            self._send(_STREAM, "text/event-stream")
        else:
            self._send(_WHOLE, "application/json")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 refuses a burst of 16 new connections


def serve() -> None:
    server = _Server(("127.0.0.1", 0), _Instant)
    print(server.server_address[1], flush=True)
    server.serve_forever()


# --- the two clients -------------------------------------------------------------------------------------
def make_prompts(n: int, kb: int) -> list[str]:
    """Distinct prompts of about `kb` KB (~4 characters, i.e. one 128K-token prompt per 512 KB)."""
    base = " ".join(WORDS[i % len(WORDS)] for i in range(kb * 1024 // 6))[: kb * 1024]
    return [f"request {i}: {base}" for i in range(n)]


async def run_ctxprobe(url: str, prompts: list[str], concurrency: int, stream: bool) -> None:
    config = EndpointConfig(base_urls=(url,), model=MODEL, concurrency=concurrency, stream=stream)
    async with EndpointClient(config) as client:
        results = await asyncio.gather(
            *(client.send(p, max_tokens=16, planned_tokens=131072, seed=i) for i, p in enumerate(prompts))
        )
    assert all(r.text.strip() == "42" and r.prompt_tokens == 131072 for r in results)


async def run_bare(url: str, prompts: list[str], concurrency: int, stream: bool) -> None:
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="EMPTY", max_retries=0)
    slots = asyncio.Semaphore(concurrency)

    async def one(prompt: str, seed: int) -> str:
        async with slots:
            if not stream:
                whole = await client.completions.create(
                    model=MODEL, prompt=prompt, max_tokens=16, temperature=0, seed=seed, timeout=3600
                )
                return whole.choices[0].text
            chunks = await client.completions.create(
                model=MODEL,
                prompt=prompt,
                max_tokens=16,
                temperature=0,
                seed=seed,
                stream=True,
                stream_options={"include_usage": True},
                timeout=3600,
            )
            text: list[str] = []
            async for chunk in chunks:
                text.extend(c.text for c in chunk.choices)
            return "".join(text)

    try:
        results = await asyncio.gather(*(one(p, i) for i, p in enumerate(prompts)))
    finally:
        await client.close()
    assert all(r.strip() == "42" for r in results)


@dataclass
class Timing:
    wall_s: float
    cpu_s: float


def measure(runner: Callable[[], Awaitable[None]]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(runner())  # type: ignore[arg-type]
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--prompt-kb", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-stream", action="store_true", help="whole (non-streamed) responses instead")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0

    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        prompts = make_prompts(args.requests, args.prompt_kb)
        stream, n, c = not args.no_stream, args.requests, args.concurrency
        measure(lambda: run_bare(url, prompts[:c], c, stream))  # warm-up: imports, connections
        measure(lambda: run_ctxprobe(url, prompts[:c], c, stream))
        ours: list[Timing] = []
        bare: list[Timing] = []
        for _ in range(args.rounds):  # interleaved, so drift hits both alike
            bare.append(measure(lambda: run_bare(url, prompts, c, stream)))
            ours.append(measure(lambda: run_ctxprobe(url, prompts, c, stream)))
    finally:
        server.terminate()
        server.wait()

    def med(values: list[float]) -> float:
        return statistics.median(values)

    ours_cpu_ms = med([t.cpu_s for t in ours]) / n * 1000
    bare_cpu_ms = med([t.cpu_s for t in bare]) / n * 1000
    ours_rps, bare_rps = n / med([t.wall_s for t in ours]), n / med([t.wall_s for t in bare])
    print(
        f"{n} requests x {args.prompt_kb} KB prompts, concurrency {c}, "
        f"{'streamed' if stream else 'whole'} responses, median of {args.rounds} rounds"
    )
    print(
        f"client overhead per request (client CPU): ctxprobe {ours_cpu_ms:.2f} ms, bare SDK {bare_cpu_ms:.2f} ms, "
        f"ctxprobe extra {ours_cpu_ms - bare_cpu_ms:+.2f} ms  (target: ctxprobe <= 10 ms)"
    )
    print(
        f"throughput: ctxprobe {ours_rps:.1f} req/s, bare SDK {bare_rps:.1f} req/s, "
        f"ratio ctxprobe/bare {ours_rps / bare_rps:.3f}  (target >= 0.9)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
