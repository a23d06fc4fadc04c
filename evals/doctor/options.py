"""The options of `ctxprobe doctor`, declared once for the API and the command line: the client settings'
own fields (model, key variable, timeout) and what the doctor adds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.runners.settings import ClientSettings
from ctxprobe.tasks.same_field import same_field

_CLIENT = ClientSettings.model_fields


class DoctorOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    endpoint: str = Field(description="the endpoint's base URL, e.g. http://gpu-node:8000")
    model: str | None = same_field(ClientSettings, "model")
    api_key_env: str = same_field(ClientSettings, "api_key_env")
    timeout: float = Field(
        _CLIENT["timeout"].default,
        gt=0,
        le=7 * 86400,
        allow_inf_nan=False,
        description="how long each probe may wait for an answer, seconds (the run's --timeout)",
    )
    config: str | None = Field(
        None,
        description="the model's config.json, model folder or GGUF: lint the deployment "
        "against it (default: the model path the engine states, where it is on this machine)",
    )
    max_length: int | None = Field(
        None,
        ge=1,
        description="the longest prompt you mean to run, in tokens: lint the "
        "slot context and the trained context against it",
    )
    no_context_check: bool = Field(
        False, description="skip the one prompt near the stated context length (a long prefill on a long context)"
    )
