"""The doctor's two checks of what a run relies on, asked of the endpoint rather than assumed:

- token counts add up: ctxprobe sizes a prompt as the sum of its parts' counts, so the engine's tokenizer
  must give the same count twice for one text, the parts of a haystack must add up to the whole within
  the assembler's safety margin, and a completion's `usage.prompt_tokens` must be the count plus the
  tokens the endpoint puts before a prompt. Only then are prompt lengths exact.
- the stated context is accepted: one prompt within a few tokens of the context length the engine states,
  sent for one answer token (`ctxprobe limit` measures the accepted length where this fails).

The long prompt is one text repeated, counted with one tokenize call of the whole, so the check costs a
few calls and one long prefill, whatever the context length."""

from __future__ import annotations

from ctxprobe.evals.doctor.check import Check
from ctxprobe.runners.endpoint import EndpointClient, EndpointError
from ctxprobe.runners.response import ErrorKind
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.tasks.assemble import safety_margin
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.haystack import make_haystack

CONTEXT_ROOM = 16  # tokens left below the stated context (llama-server rejects a prompt of exactly n_ctx)
UNITS = 200  # haystack units counted one by one and as a whole
FILLER = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "


def counts_add_up(counter: ServerTokenizer, served_prompt: str, served_tokens: int | None) -> Check:
    """Whether the engine's counts are what prompt planning assumes (same text, same count; parts sum to
    the whole; the completion's usage is the count plus BOS)."""
    try:
        units = make_haystack("noise").units(0, UNITS)
        parts = counter.count_many(units)
        whole, again = counter.count_many(["".join(units), "".join(units)])
        planned = counter.count_many([served_prompt])[0] + counter.bos_tokens
    except UserError as exc:
        return Check(name="token counts", status="failed", found=str(exc))
    problems = []
    if whole != again:
        problems.append(f"one text counted {whole} then {again} tokens")
    margin = safety_margin(whole)
    if abs(sum(parts) - whole) > margin:
        problems.append(
            f"{UNITS} haystack units count {sum(parts)} one by one but {whole} together "
            f"(more than the {margin}-token margin prompts are planned with)"
        )
    if served_tokens is not None and served_tokens != planned:
        problems.append(f"a prompt counted {planned} tokens (BOS included) was served as {served_tokens}")
    if problems:
        return Check(
            name="token counts",
            status="failed",
            found="counts do not add up: " + "; ".join(problems),
            advice="prompt lengths will not be exact: use --token-counter local:PATH with the served "
            "model's own tokenizer, and check the table's 'prompt length off the plan' line",
        )
    served = (
        f"; the server's usage agrees ({served_tokens})"
        if served_tokens is not None
        else "; the server reported no usage to compare"
    )
    return Check(
        name="token counts",
        status="ok",
        found=f"repeatable, {UNITS} units sum to their whole ({whole} tokens){served}: exact prompt lengths",
    )


async def context_accepted(client: EndpointClient, counter: ServerTokenizer, context_length: int | None) -> Check:
    """One prompt of about `context_length - CONTEXT_ROOM` tokens, for one answer token."""
    name = "context accepted"
    if not context_length:
        return Check(
            name=name, status="n/a", found="the engine states no context length", advice="ctxprobe limit measures it"
        )
    target = context_length - CONTEXT_ROOM - counter.bos_tokens
    try:
        prompt, tokens = _filler_of(counter, target)
    except UserError as exc:
        return Check(name=name, status="failed", found=str(exc))
    planned = tokens + counter.bos_tokens
    try:
        reply = await client.send(prompt, max_tokens=1, planned_tokens=planned, seed=0)
    except EndpointError as exc:
        said = f" (the engine says its limit is {exc.limit:,})" if exc.limit else ""
        if exc.kind is ErrorKind.rejected_too_long:
            return Check(
                name=name,
                status="failed",
                found=f"the stated {context_length:,} tokens do not hold: a prompt of {planned:,} tokens "
                f"was rejected as too long{said}",
                advice="ctxprobe limit finds the length it accepts",
            )
        return Check(
            name=name,
            status="failed",
            found=f"a prompt of {planned:,} tokens failed: {exc.kind.value}: {exc.detail}"[:300],
            advice="ctxprobe limit finds the length it accepts",
        )
    served = f" (the server counted {reply.prompt_tokens:,})" if reply.prompt_tokens not in (None, planned) else ""
    return Check(name=name, status="ok", found=f"{context_length:,} tokens: a prompt of {planned:,}{served} was taken")


def _filler_of(counter: ServerTokenizer, target: int) -> tuple[str, int]:
    """Repeated filler of at most `target` tokens (and within a repetition of it), counted as a whole."""
    unit = counter.count_many([FILLER])[0]
    if unit <= 0 or target < unit:
        raise UserError(f"the context length leaves no room for a {unit}-token filler")
    reps = target // unit
    for _ in range(8):  # a count that is not additive converges in a step or two
        tokens = counter.count_many([FILLER * reps])[0]
        if tokens <= target:
            return FILLER * reps, tokens
        reps -= max(1, -(-(tokens - target) // unit))
        if reps <= 0:
            break
    raise UserError(f"could not size a filler prompt below {target:,} tokens")
