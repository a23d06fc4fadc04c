"""A counter of calls in flight, for tests that check a bound on concurrency: wrap the call in `with
flight:` and read `flight.peak` afterwards."""

from __future__ import annotations

import threading
from typing import Any


class InFlight:
    def __init__(self) -> None:
        self.live = 0
        self.peak = 0
        self._lock = threading.Lock()

    def __enter__(self) -> InFlight:
        with self._lock:
            self.live += 1
            self.peak = max(self.peak, self.live)
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self.live -= 1
