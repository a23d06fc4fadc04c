"""The doctor's checks: each asks the endpoint one thing, with the API key, and says what it found and,
where something is missing, the engine flag that turns it on (each engine adapter's advice, from
docs/ENGINES.md). Nothing here sends more than a few tokens, but the context check (evals/doctor/counts.py):
one prompt near the stated context."""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel

from ctxprobe.evals.doctor.check import Check, Status
from ctxprobe.evals.doctor.counts import context_accepted, counts_add_up
from ctxprobe.evals.doctor.lint import endpoint_lint
from ctxprobe.evals.run.answer_style import AnswerStyle, answer_style, chat_fit
from ctxprobe.runners.deployment_lint import LintLine, render_lint
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.runners.engines import EngineAdapter, known_engines
from ctxprobe.runners.engines.base import registered
from ctxprobe.runners.http_json import display_url
from ctxprobe.runners.probe import EngineInfo, UnknownModel, probe_engine
from ctxprobe.runners.retry import (  # the run's own --timeout: a busy server answers a probe late too
    DEFAULT_TIMEOUT_S,
    RetryPolicy,
)
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV, ClientSettings
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.token_counter import TokenCounter, make_token_counter

__all__ = ["Check", "DoctorReport", "Status", "doctor", "render_doctor"]

PROBE_PROMPT = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."


class DoctorReport(BaseModel):
    endpoint: str  # as shown: never the credentials or query the given URL may carry
    engine: EngineInfo
    checks: list[Check]
    recommended_mode: Literal["chat", "completions"] | None = None
    answer_styles: list[AnswerStyle] = []
    lint: list[LintLine] = []  # the deployment lint's findings (runners/deployment_lint.py)


def doctor(
    endpoint: str,
    *,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    model: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    context_check: bool = True,
    config: str | None = None,
    max_length: int | None = None,
) -> DoctorReport:
    """Ask the endpoint what it exposes; every probe waits up to `timeout_s` (the run's `--timeout`).
    Raises `UserError` when it does not answer at all, or when `config` cannot be read. `context_check=False`
    leaves out the one prompt near the stated context (a long prefill). The deployment lint holds what the
    endpoint states against `config` (the model's config.json, folder or GGUF) and `max_length`."""
    settings = ClientSettings(model=model, api_key_env=api_key_env, timeout=timeout_s, retries=1)
    policy = RetryPolicy.of(settings)
    lint = endpoint_lint(
        endpoint, config=config, max_length=max_length, model=model, api_key_env=api_key_env, policy=policy
    )  # first: a config that cannot be read is one line before any prefill
    try:
        info = probe_engine(endpoint, model=model, api_key_env=api_key_env, policy=policy)
    except UnknownModel as unknown:  # every other check would fail for the name: say only that
        info = probe_engine(endpoint, api_key_env=api_key_env, policy=policy)
        return DoctorReport(
            endpoint=display_url(endpoint),
            engine=info,
            lint=lint,
            checks=[
                Check(
                    name="model",
                    status="failed",
                    found=str(unknown),
                    advice=f"pass --model {unknown.served[0]}"
                    if len(unknown.served) == 1
                    else "pass --model with one of those names",
                )
            ],
        )
    name = info.engine
    checks = [
        Check(
            name="engine",
            status="ok" if name != "unknown" else "missing",
            found=f"{name} {info.version or '(version not stated)'}; model {info.model or '?'}",
            advice=""
            if name != "unknown"
            else f"not a known engine ({', '.join(known_engines())}): "
            "ctxprobe runs, but counts tokens with --token-counter local:… or estimate",
        ),
        Check(
            name="context length",
            status="ok" if info.context_length else "missing",
            found=f"{info.context_length:,} tokens ({info.context_source})" if info.context_length else "not stated",
            advice="" if info.context_length else "ctxprobe limit measures it",
        ),
    ]
    tokenize, counter = _tokenize(endpoint, name, api_key_env, policy)
    checks.append(tokenize)
    endpoint_config = EndpointConfig(
        base_urls=(endpoint,),
        model=model or info.model,
        api_key_env=api_key_env,
        mode="completions",
        concurrency=1,
        timeout=timeout_s,
        retries=1,
    )
    completions, chat, served, context = asyncio.run(
        _generation_checks(endpoint_config, name, counter, info.context_length, context_check)
    )
    if counter is not None:
        checks.append(counts_add_up(counter, _REPEATED, served))
    checks += [c for c in (context,) if c is not None]
    if completions.status == "failed" and chat.status != "ok":  # neither mode answered: the mode is not it
        completions = completions.model_copy(
            update={"advice": "neither completions nor chat answered: check --model, the key and the endpoint's log"}
        )
        chat = chat.model_copy(update={"advice": ""})
    checks += [completions, chat, _metrics(endpoint, name, api_key_env, policy)]
    mode: Literal["chat", "completions"] | None = None
    if chat.status == "ok":
        mode = "chat"
    elif completions.status != "failed":  # completions answered (cached tokens may be unreported)
        mode = "completions"
    modes: list[Mode] = ["completions"] if completions.status != "failed" else []
    modes += ["chat"] if chat.status == "ok" else []  # a model that does not follow chat has no chat style
    styles, style_checks = asyncio.run(_styles(endpoint_config, modes, counter or make_token_counter("estimate")))
    return DoctorReport(
        endpoint=display_url(endpoint),
        engine=info,
        checks=checks + style_checks,
        recommended_mode=mode,
        answer_styles=styles,
        lint=lint,
    )


def _tokenize(
    endpoint: str, engine: str, api_key_env: str, policy: RetryPolicy
) -> tuple[Check, ServerTokenizer | None]:
    from ctxprobe.runners.server_tokenizer import server_token_counter

    try:
        counter = server_token_counter(endpoint, api_key_env=api_key_env, policy=policy)
        n = counter.count_many([PROBE_PROMPT])[0]
    except UserError as exc:
        return Check(
            name="tokenize",
            status="missing",
            found=str(exc),
            advice="count with --token-counter local:PATH (the model's GGUF or tokenizer.json) or estimate",
        ), None
    return Check(
        name="tokenize",
        status="ok",
        found=f"the engine's own tokenizer ({engine}): {n} tokens for the "
        "probe sentence (whether counts add up: below)",
    ), counter


_REPEATED = " ".join([PROBE_PROMPT] * 8)  # the completions check's prompt


async def _generation_checks(
    config: EndpointConfig,
    engine: str,
    counter: ServerTokenizer | None,
    context_length: int | None,
    context_check: bool,
) -> tuple[Check, Check, int | None, Check | None]:
    """(completions, chat, the server's count of the completions prompt, the context check if asked)."""
    async with EndpointClient(config) as plain, EndpointClient(config.model_copy(update={"mode": "chat"})) as chat:
        completions, served = await _completions(plain, engine)
        context = None
        if counter is not None and context_check:
            context = await context_accepted(plain, counter, context_length)
        return completions, await _chat(chat), served, context


async def _completions(client: EndpointClient, engine: str) -> tuple[Check, int | None]:
    """Completions, sent twice: the second answer says whether cached prompt tokens are reported."""
    try:
        await client.send(_REPEATED, max_tokens=2, planned_tokens=200, seed=0)
        again = await client.send(_REPEATED, max_tokens=2, planned_tokens=200, seed=0)
    except EndpointError as exc:
        return Check(
            name="completions + cached tokens",
            status="failed",
            found=f"{exc.kind.value}: {exc.detail}",
            advice="use --mode chat",
        ), None
    if again.cached_tokens is None:
        return Check(
            name="completions + cached tokens",
            status="missing",
            found="completions work; cached prompt tokens are not reported",
            advice=_advice(engine).cached_tokens_advice,
        ), again.prompt_tokens
    return Check(
        name="completions + cached tokens",
        status="ok",
        found=f"completions work; a repeated {again.prompt_tokens}-token prompt: {again.cached_tokens} cached",
    ), again.prompt_tokens


async def _chat(client: EndpointClient) -> Check:
    fit = await chat_fit(client)
    advice = {
        "failed": "no chat template (a base model?): use --mode completions",
        "missing": "a base model (or no chat template): use --mode completions",
        "n/a": "no answer to judge: try again, or with a longer --timeout",
    }.get(fit.status, "")
    return Check(name="chat", status=fit.status, found=fit.found, advice=advice)


async def _styles(
    config: EndpointConfig, modes: list[Mode], counter: TokenCounter
) -> tuple[list[AnswerStyle], list[Check]]:
    """One short needle prompt per working mode: how the model answers, and the budget that fits it."""
    styles: list[AnswerStyle] = []
    checks: list[Check] = []
    for mode in modes:
        name = f"answer style ({mode})"
        async with EndpointClient(config.model_copy(update={"mode": mode})) as client:
            try:
                style = await answer_style(client, mode, counter)
            except (EndpointError, UserError) as exc:
                checks.append(Check(name=name, status="failed", found=str(exc)[:300]))
                continue
        styles.append(style)
        checks.append(_style_check(name, style))
    return styles, checks


def _style_check(name: str, style: AnswerStyle) -> Check:
    reasons = (
        f"reasons ({style.reasoning_tokens} tokens): give --reasoning-tokens N" if style.reasons else "no reasoning"
    )
    if style.tokens_before_answer is None:
        return Check(
            name=name,
            status="missing",
            found=f"the needle's value was not in the answer {style.text!r}; {reasons}",
            advice="this mode may not suit the model",
        )
    fits = style.recommended_answer_tokens <= style.family_budget
    found = (
        f"{style.tokens_before_answer} tokens before the answer, {style.completion_tokens} in all; {reasons}; "
        f"recommended --answer-tokens {style.recommended_answer_tokens} (this mode's default: "
        f"{style.family_budget})"
    )
    return Check(
        name=name,
        status="ok",
        found=found,
        advice="" if fits else f"pass --answer-tokens {style.recommended_answer_tokens}",
    )


def _metrics(endpoint: str, engine: str, api_key_env: str, policy: RetryPolicy) -> Check:
    from ctxprobe.runners.metrics import scrape_metrics

    try:
        found = scrape_metrics(endpoint, engine, api_key_env=api_key_env, policy=policy)
    except UserError as exc:
        return Check(name="metrics", status="failed", found=str(exc), advice=_advice(engine).metrics_advice)
    if not found:
        return Check(
            name="metrics",
            status="missing",
            found="no /metrics ctxprobe can read",
            advice=_advice(engine).metrics_advice,
        )
    return Check(name="metrics", status="ok", found="/metrics: " + ", ".join(sorted(found)))


def _advice(engine: str) -> type[EngineAdapter] | EngineAdapter:
    """The engine's adapter (its flags that turn on what ctxprobe reads), or the base's empty advice."""
    return registered().get(engine, EngineAdapter)


def render_doctor(report: DoctorReport) -> str:
    width = max(len(c.name) for c in report.checks)
    lines = [f"ctxprobe doctor {report.endpoint}"]
    for check in report.checks:
        lines.append(f"  {check.name:<{width}}  {check.status:<7}  {check.found}")
        if check.advice and check.status != "ok":
            lines.append(f"  {'':<{width}}  {'':<7}  -> {check.advice}")
    if report.recommended_mode:
        lines.append(f"  mode: --mode {report.recommended_mode} fits this endpoint")
    lines += [f"  {line}" for line in render_lint(report.lint)]
    failed = [c.name for c in report.checks if c.status == "failed"]
    if failed:
        lines.append(f"  failed: {', '.join(failed)}")
    return "\n".join(lines)


def failed_checks(report: DoctorReport) -> list[Check]:
    """The checks that failed (a missing feature is not a failure): the doctor exits 1 when there are any."""
    return [c for c in report.checks if c.status == "failed"]
