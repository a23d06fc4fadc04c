"""Request slots handed out by priority: at most `n` holders at once, and a waiter of a lower priority
number goes before any waiter of a higher one (first come first served within a priority). A fanned-out
send order gives a sweep's head priority over other sweeps' tails: a head served sooner lets its own tails
go sooner. Used from one asyncio event loop."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class PrioritySlots:
    def __init__(self, n: int) -> None:
        self._free = max(1, n)
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrival = itertools.count()

    @asynccontextmanager
    async def hold(self, priority: int = 0) -> AsyncIterator[None]:
        """Hold one slot for the body: at once when one is free and nobody waits, else in turn."""
        if self._free > 0 and not self._waiting:
            self._free -= 1
        else:
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (priority, next(self._arrival), turn))
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():  # handed a slot just as it was cancelled: pass it on
                    self._release()
                else:
                    self._waiting = [w for w in self._waiting if w[2] is not turn]
                    heapq.heapify(self._waiting)
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            _, _, turn = heapq.heappop(self._waiting)
            if not turn.done():
                turn.set_result(None)  # the slot passes straight to the next waiter
                return
        self._free += 1
