"""Balancing requests across replicas of one deployment: the replica with the fewest requests in flight,
ties broken round-robin so that an idle pool still spreads its load."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class LeastInFlight(Generic[T]):
    """Not thread-safe by design: used from one asyncio event loop."""

    def __init__(self, replicas: Sequence[T]) -> None:
        if not replicas:
            raise ValueError("at least one replica is needed")
        self._replicas = list(replicas)
        self._in_flight = [0] * len(self._replicas)
        self._next = 0

    @property
    def in_flight(self) -> list[int]:
        return list(self._in_flight)

    @contextmanager
    def use(self, prefer: int | None = None) -> Iterator[T]:
        """Hold the chosen replica for the duration of one request: replica `prefer % n` when given (a lane of
        prompts sharing a prefix stays on the replica that cached it), else the least busy."""
        n = len(self._replicas)
        if prefer is not None:
            index = prefer % n
        else:
            order = [(self._next + i) % n for i in range(n)]
            index = min(order, key=lambda i: self._in_flight[i])
            self._next = (index + 1) % n
        self._in_flight[index] += 1
        try:
            yield self._replicas[index]
        finally:
            self._in_flight[index] -= 1
