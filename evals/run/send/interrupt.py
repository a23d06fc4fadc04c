"""SIGTERM (what schedulers, CI runners and `timeout` send) as Ctrl-C, for every command that sends samples:
the run folder then ends `interrupted`, with every finished sample kept, and a started engine is stopped."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While a run is under way, SIGTERM (what schedulers and CI runners send) stops it exactly as Ctrl-C
    does: the SIGINT handler in force runs (asyncio's cancels the sends cleanly, Python's raises
    KeyboardInterrupt), or KeyboardInterrupt is raised where SIGINT is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
