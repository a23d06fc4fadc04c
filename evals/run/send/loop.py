"""Where prompts are sent: build each recipe's prompt, send it with bounded concurrency, score the answer,
and append the record the moment it is finished.

Each lane builds its next prompt while its current one is in flight, on a daemon thread of its own, so
`concurrency` lanes keep `concurrency` requests in flight even when every build waits on tokenize calls,
and a build stuck on a frozen server never holds the process at exit. With fewer depth sweeps than lanes
(cache-aware order) the sweeps are fanned out instead (evals.send.order): each sweep's head is sent, its
tails are built meanwhile and sent together once the head has been served, on the head's replica; at most
`concurrency` requests are in flight and at most twice that many prompts built and not yet answered, as
with lanes. A chain of the nested layout always goes whole on one lane, in ascending length. Every request
names its chain (`tasks.identity.chain_key`: the session header, and the replica it keeps to), and a sample's
answer-probability requests go on its lane right after its answer, before the lane sends anything else.

An endpoint that stops serving mid-run (a tokenize call that still fails after its retries, a refused key,
no answer at all after a connection error or a timeout) stops the run as `EndpointLost`: resumable, never
bad input."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ctxprobe.evals.records.manifest import OrderDetail
from ctxprobe.evals.records.record import ErrorKind, Response, SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.answer_budget import AnswerBudget
from ctxprobe.evals.run.send.count_check import count_off
from ctxprobe.evals.run.send.logprobs import LogprobCapture
from ctxprobe.evals.run.send.order import Order, fans_out, limit_line, order_detail, send_groups
from ctxprobe.evals.run.send.slots import PrioritySlots
from ctxprobe.evals.scoring.ruler_score import ruler_references
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.evals.scoring.truncation import cut_off
from ctxprobe.runners.daemon_threads import in_daemon_thread
from ctxprobe.runners.endpoint import EndpointError
from ctxprobe.runners.response import LOGPROBS_UNAVAILABLE, ReplicaEvent, no_answer
from ctxprobe.runners.retry import CallFailed
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import chain_key
from ctxprobe.tasks.lengths import format_length
from ctxprobe.tasks.sample import Recipe, Sample
from ctxprobe.tasks.token_counter import TokenCounter


class PromptClient(Protocol):
    """What the prompts are sent through: the endpoint client (runners.endpoint), or a test's fake."""

    async def send(
        self,
        prompt: str,
        *,
        max_tokens: int,
        planned_tokens: int,
        seed: int,
        affinity: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        messages: list[dict[str, str]] | None = None,
        logprobs: int | None = None,
        chain: str | None = None,
    ) -> Response: ...


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


class EndpointLost(Exception):
    """Requests fail to connect and the endpoint no longer answers: the run stops sending."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


TICK_S = 10.0  # with nothing answered for this long, the progress line is said again (a prefill in flight)

# Errors after which the run asks whether the endpoint still answers at all.
_ASK_IF_THERE = (ErrorKind.connection_error, ErrorKind.timeout)


@dataclass
class Progress:
    total: int
    sent: int = 0  # requests sent (a sample in flight when a run stops is sent but not done)
    done: int = 0
    errors: int = 0
    correct: int = 0
    prompt_tokens: int = 0
    total_tokens: int = 0  # the planned prompt tokens of every sample to send (0: unknown, the ETA counts samples)
    done_tokens: int = 0  # ... of those done
    started: float = field(default_factory=time.monotonic)
    replica_events: list[ReplicaEvent] = field(default_factory=list)
    order_detail: OrderDetail | None = None  # how the send order ran, for the manifest
    said_limited: bool = False  # the order's in-flight limit was said (once a run)
    # the request out longest: (seconds out, seconds its prefill is expected to take, or None); set by the sender
    longest: Callable[[], tuple[float, float | None] | None] | None = None

    def replica_event(self, event: ReplicaEvent) -> None:
        """A replica dropped from rotation or put back: said in one line, kept for the manifest."""
        self.replica_events.append(event)
        print(f"ctxprobe: {event.line()}", file=sys.stderr)

    def batch_sent(self, detail: OrderDetail, limited: str | None) -> None:
        """A batch's send order, kept for the manifest; what limits its requests in flight said once a run."""
        self.order_detail = detail
        if limited is not None and not self.said_limited:
            self.said_limited = True
            print(f"ctxprobe: {limited}", file=sys.stderr)

    def add(self, record: SampleRecord) -> None:
        self.done += 1
        self.done_tokens += record.sample.recipe.context_tokens
        if record.error is not None:
            self.errors += 1
        elif record.score is not None and record.score.correct:
            self.correct += 1
        if record.response is not None and record.response.prompt_tokens:
            self.prompt_tokens += record.response.prompt_tokens
        else:
            self.prompt_tokens += record.sample.planned_tokens

    @property
    def in_flight(self) -> int:
        """Requests sent whose answer was not kept (the run stopped while they were out)."""
        return self.sent - self.done

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        eta = self.eta(elapsed)
        scored = self.done - self.errors
        acc = f"{self.correct / scored:.2f}" if scored else "-"
        eta_text = f"{eta:,.0f}s" if eta == eta else "?"
        line = (
            f"{self.done}/{self.total} done  acc {acc}  errors {self.errors}  "
            f"{self.prompt_tokens / elapsed:,.0f} prompt tok/s  ETA {eta_text}"
        )
        return line + self.prefill_text()

    def eta(self, elapsed: float) -> float:
        """Seconds left at the rate measured so far: prompt tokens a second over the prompt tokens left, where
        the samples' lengths are known (a long sample takes longer than a short one: a count of samples left
        said 359 s of a 674 s run), else samples a second over the samples left; NaN before any is done."""
        if self.total_tokens and self.done_tokens:
            return (self.total_tokens - self.done_tokens) / (self.done_tokens / elapsed)
        rate = self.done / elapsed
        return (self.total - self.done) / rate if rate > 0 else float("nan")

    def prefill_text(self) -> str:
        """`  prefill 412s of ~900s` for the request out longest (once it has been out `TICK_S`): a long
        prefill sends nothing for minutes, and the line says it is under way and how far."""
        out = self.longest() if self.longest is not None else None
        if out is None or out[0] < TICK_S:
            return ""
        elapsed, expected = out
        return f"  prefill {elapsed:,.0f}s" + (f" of ~{expected:,.0f}s" if expected is not None else "")


def answer_error(
    response: Response, max_tokens: int, context_length: int | None = None
) -> tuple[ErrorKind | None, str | None]:
    """A response that cannot be scored fairly: no text at all, or an answer the engine stopped for length
    before `max_tokens`. That is a full context (vLLM and llama-cpp-python clamp max_tokens silently) unless
    the prompt and its budget fit the served `context_length`: then the engine cut the answer short for a
    reason of its own (a server-side cap on generated tokens), and the sample is `truncated`."""
    if no_answer(response.text, response.reasoning, response.completion_tokens):
        return ErrorKind.empty, "the endpoint returned no text"
    done = response.completion_tokens
    if response.finish_reason == "length" and done is not None and done < max_tokens:
        prompt = response.prompt_tokens
        stopped = f"stopped for length after {done} of {max_tokens} answer tokens"
        if context_length and prompt is not None and prompt + max_tokens <= context_length:
            return ErrorKind.truncated, (
                f"{stopped}, although the prompt ({prompt:,} tokens) and its budget fit the "
                f"context ({context_length:,}): the engine cut the answer short (a cap on "
                "generated tokens on the server?)"
            )
        return ErrorKind.no_answer_room, f"{stopped} (prompt {prompt} tokens): no room left in the context"
    return None, None


def planned_tokens(recipes: Sequence[Recipe]) -> int:
    """The prompt tokens `recipes` plan to send: what the ETA counts down."""
    return sum(r.context_tokens for r in recipes)


def record_of(
    sample: Sample,
    response: Response | None,
    error: ErrorKind | None,
    detail: str | None,
    attempts: int,
    max_tokens: int | None = None,
    context_length: int | None = None,
) -> SampleRecord:
    """The record of one sent sample; `attempts` counts the HTTP requests it took, retries included;
    `max_tokens` is what was sent (the answer budget plus any reasoning budget; default the sample's answer
    budget); `context_length` the served context, where known."""
    sent = max_tokens or sample.max_tokens
    if response is not None and error is None:
        error, detail = answer_error(response, sent, context_length)
    score = score_sample(sample, response.text) if response is not None and error is None else None
    if response is not None and score is not None:
        why = cut_off(sample, response, score)
        if why is not None:
            hint = "--answer-tokens" + (" or --reasoning-tokens" if response.reasoning else "")
            error, score = ErrorKind.truncated, None
            detail = (
                f"stopped at the answer budget ({sent} tokens): {why}; the answer ends {response.text[-40:]!r}; "
                f"raise it with {hint}"
            )
    references = ruler_references(sample, response.text) if score is not None and response is not None else {}
    return SampleRecord(
        sample=sample,
        response=response,
        score=score,
        error=error,
        error_detail=detail,
        attempts=attempts,
        reference_scores=references,
        prompt_tokens_off=count_off(sample, response),
        finished_at=time.time(),
    )


def _cell_name(recipe: Recipe) -> str:
    """`niah single [prose] 4K`: a cell as a person reads it (for display only)."""
    kind = recipe.params.get("variant") or recipe.params.get("kind") or ""
    return f"{recipe.family} {kind} [{recipe.haystack}] {format_length(recipe.context_tokens)}".replace("  ", " ")


def _count(counter: TokenCounter, text: str) -> int | None:
    """Tokens of `text` (reasoning the engine did not count), or None when the counter cannot say."""
    try:
        return counter.count_many([text])[0]
    except UserError:
        return None


async def run_recipes(
    recipes: list[Recipe],
    client: PromptClient,
    store: RunStore,
    *,
    concurrency: int,
    counter: TokenCounter | None = None,
    on_record: Callable[[SampleRecord, Progress], None] | None = None,
    attempts_before: dict[str, int] | None = None,
    still_there: Callable[[], bool] | None = None,
    order: Order = "as-listed",
    progress: Progress | None = None,
    budget: AnswerBudget | None = None,
    context_length: int | None = None,
    logprobs: LogprobCapture | Literal["unavailable"] | None = None,
    on_tick: Callable[[Progress], None] | None = None,
) -> Progress:
    """Send every recipe once; each finished sample is appended to the store before the next one counts.
    `concurrency` lanes each send whole groups of `send_groups(recipes, order)`, one sample after another,
    building the next prompt while the current one is in flight; with fewer depth sweeps than lanes
    (cache-aware), the sweeps are fanned out (`order.fans_out`). `progress.order_detail` says which.
    After a connection error or a timeout, `still_there()` asks whether the endpoint answers at all; when
    it doesn't, the samples in flight are abandoned (nothing of theirs is written) and `EndpointLost` is
    raised, as it is for a refused key or a tokenize call that still fails after its retries.
    `budget` says how many tokens each sample may generate; a sample whose prompt and budget do not fit in
    `context_length` is recorded as an error without being sent.
    `logprobs` measures each answer's probabilities (evals/run/send/logprobs.py) after its binary result is
    made; "unavailable" records that the engine gives none. `on_tick(progress)` is called every `TICK_S`
    while no sample finishes and one is in flight (the progress line, with the prefill under way)."""
    progress = progress if progress is not None else Progress(total=len(recipes), total_tokens=planned_tokens(recipes))
    lanes = max(1, concurrency)
    loop = SendLoop(
        client,
        store,
        progress,
        lanes,
        order,
        budget or AnswerBudget(),
        counter=counter,
        on_record=on_record,
        attempts_before=attempts_before or {},
        still_there=still_there,
        context_length=context_length,
        logprobs=logprobs,
    )
    groups = send_groups(recipes, order)
    fanned = fans_out(groups, order, lanes)
    progress.batch_sent(order_detail(groups, order, lanes, progress.order_detail), limit_line(groups, lanes, fanned))
    ticker = asyncio.ensure_future(loop.tick(on_tick)) if on_tick is not None else None
    try:
        await loop.send_all(groups, fanned)
    finally:
        if ticker is not None:
            ticker.cancel()
    return progress


@dataclass
class SendLoop:
    """One `run_recipes` call's sending: its lanes or fanned-out sweeps, each sample's request, its record."""

    client: PromptClient
    store: RunStore
    progress: Progress
    lanes: int
    order: Order
    budget: AnswerBudget
    counter: TokenCounter | None = None
    on_record: Callable[[SampleRecord, Progress], None] | None = None
    attempts_before: dict[str, int] = field(default_factory=dict)
    still_there: Callable[[], bool] | None = None
    context_length: int | None = None
    logprobs: LogprobCapture | Literal["unavailable"] | None = None
    misfit_cells: set[str] = field(default_factory=set)  # the cells whose misfit was said (one line per cell)

    def __post_init__(self) -> None:
        self.held, self.sending = PrioritySlots(2 * self.lanes), PrioritySlots(self.lanes)

    async def send_all(self, groups: list[list[Recipe]], fanned: bool) -> None:
        """Every group, on lanes or fanned out; the first error ends the others and is raised alone."""
        try:
            # A task group: one lane that raises (a lost endpoint) cancels the others.
            async with asyncio.TaskGroup() as tasks:
                if fanned:  # every head asks for its slots before any tail does
                    heads = [(asyncio.Event(), asyncio.Event()) for _ in groups]  # built, served
                    for i in range(max(len(g) for g in groups)):
                        for index, group in enumerate(groups):
                            if i < len(group):
                                tasks.create_task(self.sweep(index, group, heads[index], i))
                else:
                    pending = iter(groups)
                    for index in range(self.lanes):
                        tasks.create_task(self.lane(index, pending))
        except BaseExceptionGroup as failed:  # report one error, as a plain exception: a lost endpoint first
            flat = _leaves(failed)
            raise next((e for e in flat if isinstance(e, EndpointLost)), flat[0]) from None

    async def build(self, recipe: Recipe) -> Sample:
        try:
            return await in_daemon_thread(build_sample, recipe, self.counter)
        except CallFailed as exc:  # the server's token counter stopped serving: resumable, not bad input
            raise EndpointLost(str(exc)) from None

    async def lane(self, index: int, pending: Iterator[list[Recipe]]) -> None:
        for group in pending:  # one shared iterator: each group goes to the first free lane
            nxt = asyncio.ensure_future(self.build(group[0]))
            try:
                for i, recipe in enumerate(group):
                    sample = await nxt
                    if i + 1 < len(group):
                        nxt = asyncio.ensure_future(self.build(group[i + 1]))
                    await self.one(recipe, sample, index if self.order == "cache-aware" else None)
            finally:
                nxt.cancel()  # a lane stopped mid-group leaves no build behind

    async def sweep(self, index: int, group: list[Recipe], head: tuple[asyncio.Event, asyncio.Event], i: int) -> None:
        """Sample `i` of a fanned-out sweep. A tail is built once its head is (the head's build counts the
        sweep's haystack, and heads are not held back by tails' builds), while the head is out, and sent
        once the head has been served (its record kept), on the head's replica (`index`); heads go first
        for a free slot."""
        built, served = head
        async with self.held.hold(0 if i == 0 else 1):
            if i:
                await built.wait()
            sample = await self.build(group[i])
            if i == 0:
                built.set()
            else:
                await served.wait()
            async with self.sending.hold(0 if i == 0 else 1):
                await self.one(group[i], sample, index)
        if i == 0:
            served.set()

    async def one(self, recipe: Recipe, sample: Sample, affinity: int | None) -> None:
        """Send one sample (unless it does not fit), score it, keep its record."""
        response: Response | None = None
        error: ErrorKind | None
        detail: str | None
        attempts = 1
        max_tokens = self.budget.max_tokens(sample)
        misfit = self.budget.misfit(sample, self.context_length)
        if misfit is not None:
            error, detail = self.misfit_error(recipe, sample, misfit)
        else:
            response, error, detail, attempts = await self.request(recipe, sample, affinity, max_tokens)
        record = record_of(
            sample,
            response,
            error,
            detail,
            self.attempts_before.get(sample.sample_id, 0) + attempts,
            max_tokens,
            self.context_length,
        )
        update: dict[str, Any] = {
            "answer_tokens": self.budget.answer(sample),
            "reasoning_tokens_budget": self.budget.reasoning_tokens,
        }
        if isinstance(self.logprobs, LogprobCapture) and response is not None:
            update["logprobs"], update["logprobs_detail"] = await self.logprobs.measure(sample, response, recipe.seed)
        elif self.logprobs == LOGPROBS_UNAVAILABLE:
            update["logprobs"] = LOGPROBS_UNAVAILABLE
        record = record.model_copy(update=update)
        self.store.append(record)
        self.progress.add(record)
        if self.on_record is not None:
            self.on_record(record, self.progress)

    def misfit_error(self, recipe: Recipe, sample: Sample, misfit: str) -> tuple[ErrorKind, str]:
        """The error of a sample whose prompt and budget do not fit the context; said once per cell."""
        assert self.context_length is not None
        too_long = sample.planned_tokens >= self.context_length
        cell = _cell_name(recipe)
        if cell not in self.misfit_cells:  # one line per cell
            self.misfit_cells.add(cell)
            print(
                f"ctxprobe: {cell}: {misfit}; other samples of this cell that do not fit are not sent either",
                file=sys.stderr,
            )
        return (ErrorKind.rejected_too_long if too_long else ErrorKind.no_answer_room), misfit

    async def request(
        self, recipe: Recipe, sample: Sample, affinity: int | None, max_tokens: int
    ) -> tuple[Response | None, ErrorKind | None, str | None, int]:
        """Send the sample: its response (None when it failed), error, detail and the HTTP requests it took."""
        response: Response | None = None
        error: ErrorKind | None = None
        detail: str | None = None
        attempts = 1
        self.progress.sent += 1
        extra = self.budget.extra_body()
        asked: dict[str, Any] = {}
        if isinstance(self.logprobs, LogprobCapture):
            extra = {**extra, **self.logprobs.answer_body}
            asked["logprobs"] = self.logprobs.top
        try:
            if extra:
                asked["extra_body"] = extra
            if sample.messages:
                asked["messages"] = sample.messages
            response = await self.client.send(
                sample.prompt,
                max_tokens=max_tokens,
                planned_tokens=sample.planned_tokens,
                seed=recipe.seed,
                affinity=affinity,
                chain=chain_key(recipe),
                **asked,
            )
            attempts = response.attempts
        except EndpointError as exc:
            error, detail, attempts = exc.kind, exc.detail, exc.attempts
            if exc.key_refused:  # every later request would be refused too: stop, resume with the key
                raise EndpointLost(f"the endpoint refused the API key: {detail}") from None
        if error in _ASK_IF_THERE and self.still_there is not None and not await in_daemon_thread(self.still_there):
            raise EndpointLost(detail or "no answer")
        if (
            response is not None
            and response.reasoning
            and response.reasoning_tokens is None
            and self.counter is not None
        ):
            used = await in_daemon_thread(_count, self.counter, response.reasoning)
            response = response.model_copy(update={"reasoning_tokens": used})
        return response, error, detail, attempts

    async def tick(self, on_tick: Callable[[Progress], None]) -> None:
        """`on_tick(progress)` every `TICK_S` while nothing finishes and a sample is in flight."""
        seen = self.progress.done
        while True:
            await asyncio.sleep(TICK_S)
            if self.progress.done == seen and self.progress.in_flight > 0:
                on_tick(self.progress)
            seen = self.progress.done
