"""One retry policy for every call ctxprobe makes to an endpoint: the probe, the tokenize calls, the
`/metrics` scrape and the completions themselves.

429, 5xx and connection errors (refused, reset) are retried with exponential backoff and jitter,
honouring Retry-After; a timeout is never retried (a call that ran out of time once, against a frozen or
overloaded server, would run out again, and a run must not wait minutes past its `--timeout`). A call
that still fails raises `CallFailed`: before anything was sent that is bad input (exit 2, it is a
`UserError`); mid-run the run stops as `endpoint_lost` (exit 3) and can be resumed."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from ctxprobe.runners.settings import ClientSettings
from ctxprobe.runners.shown_text import one_line
from ctxprobe.tasks.errors import ExitError, UserError
from ctxprobe.tasks.exit_codes import ExitCode

# The defaults are the client settings' (runners/settings.py), declared there once.
DEFAULT_TIMEOUT_S: float = ClientSettings.model_fields["timeout"].default
DEFAULT_RETRIES: int = ClientSettings.model_fields["retries"].default
BACKOFF_BASE_S = 1.0
BACKOFF_MAX_S = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """How long one call may take and how often a transient failure is tried again."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_RETRIES
    backoff_base_s: float = BACKOFF_BASE_S
    backoff_max_s: float = BACKOFF_MAX_S

    @classmethod
    def of(cls, settings: ClientSettings) -> RetryPolicy:
        """The policy of the user's client settings: their timeout as each call's deadline, their retries."""
        return cls(timeout_s=settings.timeout, max_retries=settings.retries)

    def with_backoff(self, base_s: float, max_s: float) -> RetryPolicy:
        return dataclasses.replace(self, backoff_base_s=base_s, backoff_max_s=max_s)

    def backoff_s(self, attempts: int, retry_after_s: float | None = None, rng: random.Random | None = None) -> float:
        """The wait before attempt `attempts + 1`: base x 2^(attempts-1), capped, with jitter in [0.5, 1];
        at least the server's Retry-After (within the cap)."""
        cap = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (attempts - 1))
        delay: float = cap * (rng or random).uniform(0.5, 1.0)
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, self.backoff_max_s))
        return delay


def retryable_status(status: int) -> bool:
    """429 (busy) and 5xx (a transient server fault) are tried again; other answers are final."""
    return status == 429 or status >= 500


def refused_key(status: int) -> bool:
    return status in (401, 403)


class CallFailed(UserError):
    """A call to the endpoint that gave no usable answer after the policy's retries (or one that must not
    be retried: a timeout, a refused key). `status` is the last HTTP status (None: no answer at all)."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(one_line(message, 600))  # it may quote a server's answer: one line, always
        self.status = status
        self.attempts = attempts

    @property
    def key_refused(self) -> bool:
        return self.status is not None and refused_key(self.status)


class CallTimedOut(CallFailed, ExitError):
    """A call the endpoint accepted but did not answer in full within its deadline (a frozen server, one that
    drips its answer a byte at a time): not bad input, the endpoint is not serving. Before anything was sent a
    command ends with exit 3 in one line; mid-run the run stops as `endpoint_lost` (exit 3)."""

    exit_code = ExitCode.ENDPOINT_LOST
