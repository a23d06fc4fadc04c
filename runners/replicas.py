"""Balancing requests across replicas of one deployment, and failing over when one goes away.

A request goes to the replica with the fewest requests in flight, ties broken round-robin so that an idle pool
still spreads its load (or to the replica a lane of prompts sharing a prefix keeps to). A chain (prompts one
prefix cache serves one after another, named by its key: `tasks.identity.chain_key`) keeps to the replica its
first request went to, so its cache is never split across replicas; when that replica leaves the rotation, the
chain's next request picks another one and the rest of the chain stays there (it does not move back). A replica whose
connection fails is taken out of rotation: its requests go to the others, and it is tried again once its
backoff has passed (1 s, then 2, 4, ... up to a minute while it keeps failing); the first request it answers
puts it back. Both events are kept (`events`) and handed to `on_event` as they happen, so a run says so in one
line and its manifest records when each replica was dropped and taken back. With every replica out, the one
due soonest is tried: a pool never refuses to send."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Generic, TypeVar

from ctxprobe.runners.response import ReplicaEvent

T = TypeVar("T")


class LeastInFlight(Generic[T]):
    """Not thread-safe by design: used from one asyncio event loop. `shown` names a replica in events (its URL
    without credentials)."""

    def __init__(
        self,
        replicas: Sequence[T],
        *,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        shown: Callable[[T], str] = str,
        on_event: Callable[[ReplicaEvent], None] | None = None,
    ) -> None:
        if not replicas:
            raise ValueError("at least one replica is needed")
        self._replicas = list(replicas)
        self._in_flight = [0] * len(self._replicas)
        self._failures = [0] * len(self._replicas)
        self._down_until: list[float | None] = [None] * len(self._replicas)
        self._next = 0
        self._chains: dict[str, int] = {}  # chain key -> the replica the chain keeps to
        self._base_s, self._max_s = backoff_base_s, backoff_max_s
        self._clock, self._shown, self._on_event = clock, shown, on_event
        self.events: list[ReplicaEvent] = []

    @property
    def in_flight(self) -> list[int]:
        return list(self._in_flight)

    @property
    def out_of_rotation(self) -> list[T]:
        """Replicas taken out and not yet due to be tried again."""
        now = self._clock()
        return [r for r, until in zip(self._replicas, self._down_until) if until is not None and until > now]

    def _in_rotation(self) -> list[int]:
        now = self._clock()
        up = [i for i, until in enumerate(self._down_until) if until is None or until <= now]
        if up:
            return up
        return [min(range(len(self._replicas)), key=lambda i: self._down_until[i] or 0.0)]

    def chain_replica(self, chain: str) -> T | None:
        """The replica `chain` keeps to, None before its first request."""
        index = self._chains.get(chain)
        return None if index is None else self._replicas[index]

    @contextmanager
    def use(self, prefer: int | None = None, chain: str | None = None) -> Iterator[T]:
        """Hold the chosen replica for the duration of one request: the replica `chain` keeps to while it is
        in rotation; else replica `prefer % n` when given and in rotation (a lane of prompts sharing a prefix
        stays on the replica that cached it); else the least busy replica in rotation. A chain keeps to the
        replica chosen for it from then on."""
        n = len(self._replicas)
        up = self._in_rotation()
        kept = self._chains.get(chain) if chain is not None else None
        if kept is not None and kept in up:
            index = kept
        elif prefer is not None and prefer % n in up:
            index = prefer % n
        else:
            order = [(self._next + i) % n for i in range(n)]
            index = min((i for i in order if i in up), key=lambda i: self._in_flight[i])
            self._next = (index + 1) % n
        if chain is not None:
            self._chains[chain] = index
        self._in_flight[index] += 1
        try:
            yield self._replicas[index]
        finally:
            self._in_flight[index] -= 1

    def in_rotation_besides(self, replica: T) -> bool:
        """Whether another replica is in rotation (a request that failed on `replica` has somewhere to go)."""
        now = self._clock()
        return any(
            r != replica and (until is None or until <= now) for r, until in zip(self._replicas, self._down_until)
        )

    def failed(self, replica: T, reason: str) -> None:
        """`replica`'s connection failed: out of rotation until its backoff passes (a pool of one keeps it)."""
        if len(self._replicas) == 1:
            return
        i = self._replicas.index(replica)
        self._failures[i] += 1
        wait = min(self._max_s, self._base_s * 2 ** (self._failures[i] - 1))
        was_in = self._down_until[i] is None
        self._down_until[i] = self._clock() + wait
        if was_in:
            self._emit(ReplicaEvent(replica=self._shown(replica), event="dropped", reason=reason, retry_after_s=wait))

    def answered(self, replica: T) -> None:
        """`replica` answered (any HTTP answer): back in rotation if it was out."""
        i = self._replicas.index(replica)
        self._failures[i] = 0
        if self._down_until[i] is not None:
            self._down_until[i] = None
            self._emit(ReplicaEvent(replica=self._shown(replica), event="restored", reason="answered again"))

    def _emit(self, event: ReplicaEvent) -> None:
        self.events.append(event)
        if self._on_event is not None:
            self._on_event(event)
