"""The options of `ctxprobe plan`, declared once for the API and the command line (and the GPU fields
reused by `ctxprobe run --dry-run --config`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxprobe.evals.plan.layers import PATTERN_HELP
from ctxprobe.evals.plan.units import parse_fraction, parse_size
from ctxprobe.tasks.errors import UserError

DEFAULT_CONTEXTS = "32k,128k,262144,1m"
CACHE_DTYPES = ("bf16", "fp16", "fp8")
STATE_DTYPES = ("fp32", "bf16", "fp16")


class GpuOptions(BaseModel):
    """The GPUs a model is served on: with all three given, how many sequences of each length fit."""

    model_config = ConfigDict(extra="forbid")

    gpus: int | None = Field(None, ge=1, description="number of GPUs serving the model")
    gpu_mem: str | None = Field(None, description="memory per GPU, e.g. 141GB or 80GiB (GB = 10^9 bytes)")
    util: str = Field("0.9", description="fraction of GPU memory usable")
    weights: str | None = Field(None, description="total weight memory across the GPUs, e.g. 573.8GB")

    # Checked where they are given, whatever reads them later (`run --dry-run` reads them only with --config):
    # `--util 2` or `--gpu-mem abcGB` is one line, never a plan made of it nor a flag ignored without a word.
    @field_validator("gpu_mem")
    @classmethod
    def _gpu_mem(cls, text: str | None) -> str | None:
        if text is not None and parse_size(text, "--gpu-mem") <= 0:
            raise UserError(f"--gpu-mem {text!r}: a GPU holds more than no memory")
        return text

    @field_validator("weights")
    @classmethod
    def _weights(cls, text: str | None) -> str | None:
        if text is not None:
            parse_size(text, "--weights")
        return text

    @field_validator("util")
    @classmethod
    def _util(cls, text: str) -> str:
        parse_fraction(text, "--util")
        return text


DEFAULT_UTIL: str = GpuOptions.model_fields["util"].default


class PlanOptions(GpuOptions):
    config: str = Field(description="the model's config.json (or the directory holding it)")
    contexts: str = Field(
        DEFAULT_CONTEXTS, description="context lengths, comma-separated; k = 1024, m = 1,000,000, M = 2^20"
    )
    cache_dtype: str = Field("bf16", description=f"KV / latent cache dtype: {', '.join(CACHE_DTYPES)}")
    state_dtype: str = Field("fp32", description=f"recurrent state dtype: {', '.join(STATE_DTYPES)}")
    mla_cache: str = Field(
        "absorbed",
        description="absorbed (latent + rope per token, as vLLM/SGLang serve MLA) or expanded (per-head K and V)",
    )
    layer_pattern: str | None = Field(
        None, description=f"override the layout, repeated to the layer count: {PATTERN_HELP}"
    )
    include_mtp: bool = Field(False, description="count the MTP layer(s) as full attention")
    include_conv: bool = Field(False, description="count the short-convolution state in totals and fits")
    weights_from: str | None = Field(
        None, description="instead of --weights: a checkpoint directory, its *.safetensors sizes summed"
    )
