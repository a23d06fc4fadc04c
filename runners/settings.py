"""The endpoint and embedded-engine settings, declared once: each option's name, type, default, bounds and
help live in these models, and every layer reads the same object. The run's `EndpointOptions`
(evals/run/send/options.py) is a `ClientSettings` holding the chosen launcher's settings as one part, the
command line's flags and help come from their fields, the manifest records them as given, `EndpointConfig`
(runners/endpoint.py) is a `ClientSettings`, and the embedded server's child process (runners/serve.py)
receives `ServeSettings` as one typed value (its JSON), validated there by the same model.

Each engine ctxprobe starts declares its settings in its launcher (runners/launchers/), which names the
models here that are its own.

`EngineSettings` are what a user gives: `n_ctx` and `parallel` may be left to the run (None); the
launcher resolves them (`context`, `slots`) before it starts the server."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ctxprobe.tasks.errors import UserError

KvCacheType = Literal["f16", "q8_0", "q4_0"]
SwaCache = Literal["full", "window"]
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_SESSION_HEADER = "X-Session-ID"
# RFC 7230's token: the characters an HTTP header name may hold
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# The longest session header name taken. HTTP (RFC 9110's token) bounds no name, but servers and proxies bound
# a header line (nginx 8K by default), and a router reads its key from short names (vllm-router: X-Session-ID,
# X-Correlation-ID and four more, docs/ENGINES.md): a longer name is a slip, sent with every request of a run.
MAX_HEADER_NAME = 128
# headers the client sets itself: a session header by one of these names would replace them
_CLIENT_HEADERS = frozenset(
    {
        "authorization",
        "content-type",
        "content-length",
        "host",
        "connection",
        "transfer-encoding",
        "accept",
        "user-agent",
    }
)
DEFAULT_N_CTX = 8192  # the embedded engine's context per slot when nothing sizes it (a run sizes it to its suite)

S = TypeVar("S", bound=BaseModel)


class ClientSettings(BaseModel):
    """What any endpoint's client takes from the user: the model, the key's variable, deadlines, retries."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="model name (default: the first one GET /v1/models lists)")
    api_key_env: str = Field(
        DEFAULT_API_KEY_ENV,
        description="environment variable holding the API key (its value is never written anywhere)",
    )
    timeout: float = Field(120.0, gt=0, le=7 * 86400, allow_inf_nan=False, description="request timeout base, seconds")
    timeout_per_1k: float = Field(
        2.0,
        ge=0,
        le=86400,
        allow_inf_nan=False,
        description="extra timeout per 1K prompt tokens (long prefills take minutes)",
    )
    retries: int = Field(4, ge=0, le=100, description="retries on 429, 5xx and connection errors")
    session_header: str | None = Field(
        DEFAULT_SESSION_HEADER,
        description="HTTP header every completion, chat and log-probability request "
        "carries with its chain's key (the prompts one prefix cache serves one after another), so a router keeps "
        "a chain on one worker; none: no such header",
    )

    @field_validator("session_header", mode="before")
    @classmethod
    def _header_name(cls, name: object) -> object:
        """`none` (any case) sends no header; anything else must be an HTTP header name the client does not
        set itself, or the run stops in one line before anything is sent."""
        if not isinstance(name, str):
            return name
        if name.lower() == "none":
            return None
        if len(name) > MAX_HEADER_NAME:
            raise UserError(
                f"invalid option --session-header: a {len(name):,}-character name, more than the "
                f"{MAX_HEADER_NAME} taken (a router reads short ones, e.g. the default X-Session-ID); "
                "--session-header none sends none"
            )
        if not _HEADER_NAME.fullmatch(name):
            raise UserError(
                f"invalid option --session-header: {name!r} is not an HTTP header name (letters, digits "
                "and !#$%&'*+-.^_`|~ only); --session-header none sends none"
            )
        if name.lower() in _CLIENT_HEADERS:
            raise UserError(
                f"invalid option --session-header: {name} is a header the client sets itself; name "
                "another (default X-Session-ID), or none"
            )
        return name


DEFAULT_TOP_LOGPROBS = 5
MAX_TOP_LOGPROBS = 20  # vLLM's default --max-logprobs, and OpenAI's top_logprobs limit


class LogprobSettings(BaseModel):
    """Whether a run reads the gold answer's teacher-forced log-probabilities (runners/answer_logprobs.py),
    and how many alternatives per position. None: on where the engine gives them cheaply."""

    model_config = ConfigDict(extra="forbid")

    logprobs: bool | None = Field(
        None,
        description="record the expected answer's teacher-forced "
        "log-probabilities on every sample (p_answer, top-1 agreement, the top-k "
        "alternatives); default on where the engine gives them cheaply (llama-server, "
        "vLLM), else recorded as unavailable",
    )
    top_logprobs: int = Field(
        DEFAULT_TOP_LOGPROBS,
        ge=1,
        le=MAX_TOP_LOGPROBS,
        description="with logprobs: alternatives kept per answer position",
    )


class EngineSettings(BaseModel):
    """How the embedded llama.cpp server is started."""

    model_config = ConfigDict(extra="forbid")

    n_ctx: int | None = Field(
        None, ge=16, description="embedded engine: context per slot, in tokens (default: longest prompt + answer room)"
    )
    parallel: int | None = Field(
        None, ge=1, description="embedded engine: slots, requests served at once, each with its own context (default 1)"
    )
    kv_cache_type: KvCacheType = Field("f16", title="KV cache type", description="embedded engine: KV cache type")
    swa_cache: SwaCache = Field(
        "full",
        title="sliding-window cache",
        description="embedded engine: KV cache of sliding-window layers: full "
        "(a prefix cache reuses any shared prefix) or window (llama-server's default: less memory, reuse only up "
        "to its checkpoints)",
    )
    threads: int | None = Field(
        None,
        ge=1,
        description="embedded engine: CPU threads (default: the cores other processes leave idle, at least 1)",
    )

    @property
    def context(self) -> int:
        """Context per slot, in tokens."""
        return self.n_ctx or DEFAULT_N_CTX

    @property
    def slots(self) -> int:
        return self.parallel or 1


VLLM_PYTHON_ENV = "CTXPROBE_VLLM_PYTHON"  # the python of vLLM's own venv, where --vllm-python is not given


class VllmSettings(BaseModel):
    """How `--engine vllm` starts vLLM's OpenAI server (runners/vllm_engine.py, its launcher
    runners/launchers/vllm.py): the model folder and the options a comparison of two deployments turns on;
    anything else is passed through as it is."""

    model_config = ConfigDict(extra="forbid")

    model_dir: str | None = Field(
        None,
        description="--engine vllm: the model folder to serve (Hugging Face layout: config.json, weights, tokenizer)",
    )
    vllm_python: str | None = Field(
        None,
        description=f"--engine vllm: the python that has vLLM installed (default: "
        f"${VLLM_PYTHON_ENV}, else ctxprobe's own)",
    )
    max_model_len: int | None = Field(
        None, ge=16, description="--engine vllm: context length in tokens (default: the model's own)"
    )
    kv_cache_dtype: str = Field(
        "auto", pattern=r"^[a-z0-9_]+$", description="--engine vllm: KV cache dtype, e.g. auto, fp8, fp8_e4m3, fp8_e5m2"
    )
    enable_prefix_caching: bool = Field(
        False,
        description="--engine vllm: pass --enable-prefix-caching (vLLM's "
        "default is on for most models; this makes it explicit)",
    )
    tensor_parallel_size: int | None = Field(
        None, ge=1, description="--engine vllm: GPUs per replica (tensor parallel)"
    )
    enable_expert_parallel: bool = Field(
        False, description="--engine vllm: expert parallel for MoE layers (its size is tensor x data parallel)"
    )
    vllm_args: str | None = Field(
        None,
        description="--engine vllm: more arguments for vLLM's server, passed as "
        "they are, e.g. --vllm-args='--enforce-eager --gpu-memory-utilization 0.85'",
    )


class ServeSettings(EngineSettings):
    """What the server's child process is started with: the engine settings, resolved, and where it serves."""

    model: str = Field(description="the GGUF file to serve")
    alias: str = Field("model", description="the model name /v1/models lists")
    port: int = Field(ge=1, le=65535, description="loopback port to listen on")
    verbosity: int = Field(2, description="llama.cpp log level: 1 errors, 2 + warnings, 3 + info")


def checked(model: type[S], values: dict[str, Any]) -> S:
    """`model(**values)`, or a `UserError` naming the first bad setting in one line."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise UserError(problem(model, exc)) from None


def problem(model: type[BaseModel], exc: ValidationError) -> str:
    """The first error as a sentence: `n_ctx 8 is too small: at least 16`, `unknown KV cache type 'q2'; ...`."""
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else "settings"
    field = model.model_fields.get(name)
    title = field.title if field is not None and field.title else name
    value, ctx = error.get("input"), error.get("ctx") or {}
    if error["type"] in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        return f"{name} {value} is too small: {'at least' if 'ge' in ctx else 'more than'} {bound}"
    if error["type"] == "literal_error":
        return f"unknown {title} {value!r}; known: {ctx.get('expected', '')}"
    return f"{name}: {error['msg']}"


SETTINGS_FLAG = "--settings"


def to_argv(settings: BaseModel) -> list[str]:
    """The settings as one typed value on a child's command line, `--settings JSON`: what `from_argv` reads back
    (the child validates it with the model that declares it; no flag is written and parsed again)."""
    return [SETTINGS_FLAG, settings.model_dump_json()]


def from_argv(model: type[S], argv: Sequence[str]) -> S:
    """The settings `to_argv` wrote, validated by the model that declares them; a bad one is one line."""
    import argparse

    parser = argparse.ArgumentParser(prog=f"ctxprobe ({model.__name__})", add_help=True)
    parser.add_argument(SETTINGS_FLAG, dest="settings", required=True, help=f"the {model.__name__}, as JSON")
    text = parser.parse_args(list(argv)).settings
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise UserError(problem(model, exc)) from None
