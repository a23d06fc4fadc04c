"""The JSON calls of a run (tokenize, the chat template's count, the gold's token ids) across the replicas of
one deployment, with the failover the completions have (runners/replicas.py): a replica that gives no answer
at all, or no complete answer within the deadline, is taken out of rotation and the call goes to another one
at once; the first answer puts it back. Without this the token counter stayed on the first replica, and a run
whose first replica died stopped although the others served.

Calls come from build threads, so the pool is used under a lock; a call itself runs outside it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ctxprobe.runners.http_json import EndpointCalls, JsonCalls
from ctxprobe.runners.replicas import LeastInFlight
from ctxprobe.runners.response import ReplicaEvent
from ctxprobe.runners.retry import CallFailed, CallTimedOut, RetryPolicy
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV


class ReplicaCalls(JsonCalls):
    """`EndpointCalls` over several replicas (the first one names them in messages and the manifest)."""

    def __init__(
        self,
        base_urls: Sequence[str],
        *,
        policy: RetryPolicy | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        on_event: Callable[[ReplicaEvent], None] | None = None,
    ) -> None:
        self.replicas = [EndpointCalls(url, policy=policy, api_key_env=api_key_env) for url in base_urls]
        first = self.replicas[0]
        self.root, self.shown, self.policy = first.root, first.shown, first.policy
        self.timeout_s, self.api_key_env = first.timeout_s, api_key_env
        self._pool: LeastInFlight[EndpointCalls] = LeastInFlight(
            self.replicas,
            backoff_base_s=self.policy.backoff_base_s,
            backoff_max_s=self.policy.backoff_max_s,
            shown=lambda calls: calls.shown,
            on_event=on_event,
        )
        self._lock = threading.Lock()

    @property
    def events(self) -> list[ReplicaEvent]:
        return list(self._pool.events)

    def send(self, method: str, path: str, payload: Any = None) -> tuple[int, Any]:
        """As `EndpointCalls.send`, on the least busy replica in rotation; a replica that does not answer
        is dropped and the call goes to the next (once per other replica), and with none left the policy's
        retries and backoff apply to the pool as a whole."""
        if len(self.replicas) == 1:
            return self.replicas[0].send(method, path, payload)
        attempts = failovers = 0
        while True:
            attempts += 1
            with self._lock:
                held = self._pool.use()
                calls = held.__enter__()
            try:
                status, body = calls.send(method, path, payload, failover=True)
            except CallFailed as err:
                if err.status is not None:  # it answered (a refused key): alive, and the answer is final
                    with self._lock:
                        self._pool.answered(calls)
                    raise
                with self._lock:
                    self._pool.failed(calls, str(err))
                    elsewhere = self._pool.in_rotation_besides(calls)
                if elsewhere and failovers < len(self.replicas) - 1:
                    failovers += 1
                    continue
                if isinstance(err, CallTimedOut) or attempts - failovers > self.policy.max_retries:
                    raise  # a timeout is never retried where it ran out (runners.retry)
                time.sleep(self.policy.backoff_s(attempts - failovers))
                continue
            finally:
                with self._lock:
                    held.__exit__(None, None, None)
            with self._lock:
                self._pool.answered(calls)
            return status, body


def calls_to(
    base_urls: Sequence[str], *, policy: RetryPolicy | None = None, api_key_env: str = DEFAULT_API_KEY_ENV
) -> EndpointCalls | ReplicaCalls:
    """One endpoint's calls, or the replicas' with failover."""
    if len(base_urls) == 1:
        return EndpointCalls(base_urls[0], policy=policy, api_key_env=api_key_env)
    return ReplicaCalls(base_urls, policy=policy, api_key_env=api_key_env)
