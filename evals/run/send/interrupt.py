"""SIGTERM (what schedulers, CI runners and `timeout` send) as Ctrl-C, for every command that sends samples:
the run folder then ends `interrupted`, with every finished sample kept, and a started engine is stopped."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


def _interrupt() -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While a run is under way, SIGTERM (what schedulers and CI runners send) stops it exactly as Ctrl-C
    does: the SIGINT handler in force runs (asyncio's cancels the sends cleanly, Python's raises
    KeyboardInterrupt), or, where SIGINT is ignored, KeyboardInterrupt is raised: between the event loop's steps
    while one runs, else at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
            return
        # SIGINT ignored (`nohup ctxprobe run … &`, a script's background job). Raised here, KeyboardInterrupt
        # could land inside a send's own code (mid-append), and asyncio would print that task's traceback at
        # shutdown. Raised from a callback of the event loop it ends the loop between steps, as Ctrl-C in its
        # wait does: asyncio.run cancels every send cleanly and the run ends `interrupted`.
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise KeyboardInterrupt from None
        loop.call_soon_threadsafe(_interrupt)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
