"""The doctor's checks: each asks the endpoint one thing, with the API key, and says what it found and,
where something is missing, the engine flag that turns it on (each engine adapter's advice, from
docs/ENGINES.md). Nothing here sends more
than a few tokens."""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel

from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.runners.engines import EngineAdapter, known_engines
from ctxprobe.runners.engines.base import registered
from ctxprobe.runners.probe import EngineInfo, probe_engine
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.tasks.errors import UserError

Status = Literal["ok", "missing", "failed", "n/a"]

CHAT_WORD = "ready"
PROBE_PROMPT = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."


class Check(BaseModel):
    name: str
    status: Status
    found: str
    advice: str = ""


class DoctorReport(BaseModel):
    endpoint: str
    engine: EngineInfo
    checks: list[Check]
    recommended_mode: Literal["chat", "completions"] | None = None


def doctor(endpoint: str, *, api_key_env: str = DEFAULT_API_KEY_ENV, model: str | None = None,
           timeout_s: float = 60.0) -> DoctorReport:
    """Ask the endpoint what it exposes. Raises `UserError` when it does not answer at all."""
    info = probe_engine(endpoint, model=model, api_key_env=api_key_env)
    name = info.engine
    checks = [Check(name="engine", status="ok" if name != "unknown" else "missing",
                    found=f"{name} {info.version or '(version not stated)'}; model {info.model or '?'}",
                    advice="" if name != "unknown" else f"not a known engine ({', '.join(known_engines())}): "
                    "ctxprobe runs, but counts tokens with --token-counter local:… or estimate"),
              Check(name="context length", status="ok" if info.context_length else "missing",
                    found=f"{info.context_length:,} tokens ({info.context_source})" if info.context_length
                    else "not stated", advice="" if info.context_length else "ctxprobe limit measures it"),
              _tokenize(endpoint, name, api_key_env)]
    config = EndpointConfig(base_urls=(endpoint,), model=model or info.model, api_key_env=api_key_env,
                            mode="completions", concurrency=1, timeout=timeout_s, retries=1)
    completions, chat = asyncio.run(_generation_checks(config, name))
    checks += [completions, chat, _metrics(endpoint, name, api_key_env)]
    mode: Literal["chat", "completions"] | None = None
    if chat.status == "ok":
        mode = "chat"
    elif completions.status != "failed":  # completions answered (cached tokens may be unreported)
        mode = "completions"
    return DoctorReport(endpoint=endpoint, engine=info, checks=checks, recommended_mode=mode)


def _tokenize(endpoint: str, engine: str, api_key_env: str) -> Check:
    from ctxprobe.runners.tokenize import server_token_counter

    try:
        counter = server_token_counter(endpoint, api_key_env=api_key_env)
        n = counter.count_many([PROBE_PROMPT])[0]
    except UserError as exc:
        return Check(name="tokenize", status="missing", found=str(exc),
                     advice="count with --token-counter local:PATH (the model's GGUF or tokenizer.json) or estimate")
    return Check(name="tokenize", status="ok", found=f"the engine's own tokenizer ({engine}): exact prompt lengths "
                 f"({n} tokens for the probe sentence)")


async def _generation_checks(config: EndpointConfig, engine: str) -> tuple[Check, Check]:
    async with EndpointClient(config) as plain, EndpointClient(config.model_copy(update={"mode": "chat"})) as chat:
        completions = await _completions(plain, engine)
        return completions, await _chat(chat)


async def _completions(client: EndpointClient, engine: str) -> Check:
    """Completions, sent twice: the second answer says whether cached prompt tokens are reported."""
    prompt = " ".join([PROBE_PROMPT] * 8)
    try:
        await client.send(prompt, max_tokens=2, planned_tokens=200, seed=0)
        again = await client.send(prompt, max_tokens=2, planned_tokens=200, seed=0)
    except EndpointError as exc:
        return Check(name="completions + cached tokens", status="failed", found=f"{exc.kind.value}: {exc.detail}",
                     advice="use --mode chat")
    if again.cached_tokens is None:
        return Check(name="completions + cached tokens", status="missing",
                     found="completions work; cached prompt tokens are not reported",
                     advice=_advice(engine).cached_tokens_advice)
    return Check(name="completions + cached tokens", status="ok",
                 found=f"completions work; a repeated {again.prompt_tokens}-token prompt: {again.cached_tokens} cached")


async def _chat(client: EndpointClient) -> Check:
    try:
        reply = await client.send(f"Reply with the single word: {CHAT_WORD}.", max_tokens=64, planned_tokens=50, seed=0)
    except EndpointError as exc:
        return Check(name="chat", status="failed", found=f"{exc.kind.value}: {exc.detail}"[:300],
                     advice="no chat template (a base model?): use --mode completions")
    reasoning = "with a reasoning field" if reply.reasoning else "no reasoning text"
    answered = reply.text.strip()[:60]
    said = answered.lower()
    echoed = "reply with" in said or "<|im_" in said  # a base model continues the template's text
    if CHAT_WORD not in said or echoed:  # an instruction-following model says the word; a base model rambles
        return Check(name="chat", status="missing", found=f"chat answered {answered!r}, not the word it was asked for "
                     f"({reasoning})", advice="a base model (or no chat template): use --mode completions")
    return Check(name="chat", status="ok", found=f"chat works ({reasoning}); answered {answered!r}")


def _metrics(endpoint: str, engine: str, api_key_env: str) -> Check:
    from ctxprobe.runners.metrics import scrape_metrics

    try:
        found = scrape_metrics(endpoint, engine, api_key_env=api_key_env)
    except UserError as exc:
        return Check(name="metrics", status="failed", found=str(exc), advice=_advice(engine).metrics_advice)
    if not found:
        return Check(name="metrics", status="missing", found="no /metrics ctxprobe can read",
                     advice=_advice(engine).metrics_advice)
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
    return "\n".join(lines)
