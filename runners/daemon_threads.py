"""Work on daemon threads, so a stuck or long call never holds the process at exit.

`concurrent.futures.ThreadPoolExecutor` joins its workers when the interpreter exits, and they first run
every item still queued: a build that queued 50,000 tokenize calls, or one blocked on a frozen server,
kept ctxprobe alive for minutes after Ctrl-C or SIGTERM. Here each item runs on a daemon thread, the
first failure stops the items not yet started, and nothing waits for a thread at exit."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def daemon_map(fn: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """`[fn(x) for x in items]` in order, at most `workers` at a time on daemon threads. The first
    exception is raised once every started item has ended; items not started by then are skipped."""
    if workers <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    results: list[Any] = [None] * len(items)
    failure: list[BaseException] = []
    lock = threading.Lock()
    index = iter(range(len(items)))

    def work() -> None:
        while True:
            with lock:
                if failure:
                    return
                i = next(index, None)
            if i is None:
                return
            try:
                results[i] = fn(items[i])
            except BaseException as exc:
                with lock:
                    failure.append(exc)
                return

    threads = [
        threading.Thread(target=work, daemon=True, name="ctxprobe-call") for _ in range(min(workers, len(items)))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failure:
        raise failure[0]
    return results


async def in_daemon_thread(fn: Callable[..., R], *args: Any) -> R:
    """Await `fn(*args)` run on a daemon thread of its own. Cancelling the await leaves the thread to end
    by itself (its result is dropped); the event loop and the process never wait for it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[R] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def work() -> None:
        try:
            value: Any = fn(*args)
            ok = True
        except BaseException as exc:
            value, ok = exc, False
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for this any more
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=work, daemon=True, name="ctxprobe-build").start()
    return await future
