"""Which engine serves an endpoint, its version, context length and model, for the run manifest.

Recognised from the calls of ENGINES.md: `GET /v1/models` (`owned_by`, `max_model_len`, `meta.n_ctx_train`),
vLLM `GET /version`, SGLang `GET /server_info`, llama-server `GET /props`, llama-cpp-python's
`POST /extras/tokenize/count`. llama-cpp-python states neither its context length nor its version: a caller
that knows them (the embedded launcher) passes them in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ctxprobe.runners.http_json import DEFAULT_API_KEY_ENV, Unreachable, api_root, request_json
from ctxprobe.tasks.errors import UserError

EngineName = Literal["vllm", "sglang", "llama-server", "llama-cpp-python", "unknown"]
KNOWN_ENGINES: tuple[EngineName, ...] = ("vllm", "sglang", "llama-server", "llama-cpp-python")
# What each engine writes into /v1/models `owned_by` (from their sources); confirmed by its own call below.
_OWNED_BY: dict[str, EngineName] = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llama-server",
                                    "me": "llama-cpp-python"}


class EngineInfo(BaseModel):
    """What the endpoint says about itself. `context_source` names the call the length came from."""

    model_config = ConfigDict(frozen=True)

    engine: EngineName
    version: str | None = None
    context_length: int | None = None
    context_source: str | None = None
    model: str | None = None
    base_url: str | None = None


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class _Prober:
    def __init__(self, root: str, timeout_s: float, api_key_env: str) -> None:
        self.root, self.timeout_s, self.api_key_env = root, timeout_s, api_key_env

    def get(self, path: str) -> Any:
        """The JSON body of a 200 answer, else None."""
        return self.call("GET", path, None)

    def call(self, method: str, path: str, payload: Any) -> Any:
        try:
            status, body = request_json(method, self.root + path, payload, timeout_s=self.timeout_s,
                                        api_key_env=self.api_key_env)
        except Unreachable as err:
            raise UserError(f"endpoint {self.root} is unreachable: {err}") from None
        if status in (401, 403):
            raise UserError(f"endpoint {self.root} refused the API key (HTTP {status} on {path}); "
                            f"set it in the configured environment variable")
        return body if status == 200 and isinstance(body, Mapping) else None

    def detect(self, owned_by: str | None) -> tuple[EngineName, Any]:
        """(engine, the body of its identifying call) — the `owned_by` hint first, then each call in turn."""
        hinted = _OWNED_BY.get(owned_by or "")
        order = [hinted] if hinted else []
        order += [e for e in ("llama-server", "sglang", "vllm", "llama-cpp-python") if e != hinted]
        for engine in order:
            body = self.identify(engine)
            if body is not None:
                return engine, body
        return "unknown", None

    def identify(self, engine: EngineName) -> Any:
        if engine == "llama-server":
            body = self.get("/props")
            return body if _dig(body, "default_generation_settings") is not None else None
        if engine == "sglang":
            body = self.get("/server_info")
            return body if _dig(body, "version") is not None else None
        if engine == "vllm":
            body = self.get("/version")
            return body if _dig(body, "version") is not None else None
        body = self.call("POST", "/extras/tokenize/count", {"input": ""})
        return body if _dig(body, "count") is not None else None


def probe_engine(
    base_url: str,
    *,
    model: str | None = None,
    n_ctx: int | None = None,
    version: str | None = None,
    timeout_s: float = 10.0,
    api_key_env: str = DEFAULT_API_KEY_ENV,
) -> EngineInfo:
    """Identify the engine at `base_url`. `n_ctx`/`version` are used where the engine states none
    (llama-cpp-python). Raises `UserError` when the endpoint does not answer."""
    root = api_root(base_url)
    prober = _Prober(root, timeout_s, api_key_env)
    cards = _dig(prober.get("/v1/models"), "data")
    cards = [c for c in cards if isinstance(c, Mapping)] if isinstance(cards, list) else []
    card = next((c for c in cards if c.get("id") == model), cards[0] if cards else {})
    engine, ident = prober.detect(card.get("owned_by") if isinstance(card.get("owned_by"), str) else None)

    context_length: int | None = None
    source: str | None = None
    found_version: str | None = None
    if engine in ("vllm", "sglang"):
        context_length = _positive_int(card.get("max_model_len"))
        source = "GET /v1/models max_model_len" if context_length else None
        found_version = _dig(ident, "version")
    elif engine == "llama-server":
        context_length = _positive_int(_dig(ident, "default_generation_settings", "n_ctx"))
        source = "GET /props default_generation_settings.n_ctx (per slot)" if context_length else None
        found_version = _dig(ident, "build_info")
    if context_length is None and n_ctx is not None:
        context_length, source = n_ctx, "launcher n_ctx"
    return EngineInfo(
        engine=engine,
        version=str(found_version) if found_version is not None else version,
        context_length=context_length,
        context_source=source,
        model=str(card["id"]) if card.get("id") is not None else model,
        base_url=root,
    )
