"""What a model's own files say about the context it was trained for: its positions, its rope scaling and its
attention layers, each fact with where it was read.

Two sources: a Hugging Face `config.json` (`--config`, or the model folder an engine serves) and a GGUF's
header (the embedded engine's model; read by tasks/gguf_vocab.py, never the tensors).

- positions: `max_position_embeddings` (else the other names engines read it under); a GGUF's
  `<arch>.context_length`.
- rope scaling: `rope_scaling` (transformers 4) or `rope_parameters` (transformers 5; per layer type in some
  models: the full-attention layers' entry is taken), its type (`rope_type`, legacy `type`), `factor`,
  `original_max_position_embeddings` (or the config's own top-level one), and every key as written; a GGUF's
  `<arch>.rope.scaling.type`, `.factor`, `.original_context_length`.
- attention layers: how many are sliding-window, where the config says per layer: `layer_types`;
  `use_sliding_window` false (Qwen2-style: none); `use_sliding_window` true with `max_window_layers` (layers from
  that index on slide); a GGUF's `<arch>.attention.sliding_window_pattern` array. Otherwise unknown (None):
  Gemma's GGUFs state only the window, llama.cpp knows the pattern per architecture.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.runners.engines.base import Stated, positive_int
from ctxprobe.tasks.errors import UserError, read_user_text

__all__ = [
    "ModelFacts",
    "RopeScaling",
    "load_config",
    "model_facts_from_config",
    "model_facts_from_gguf",
    "read_model_facts",
    "served_model_facts",
]

# Where engines read a model's positions, in the order vLLM tries them (vllm/config/model.py,
# `_get_and_verify_max_len`'s possible keys); `max_position_embeddings` first.
POSITION_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)


@dataclass(frozen=True)
class RopeScaling:
    """A model's rope scaling as written: its type (None when it names none), factor, the original (pre-scaling)
    length, the key it sits under and every key it holds."""

    kind: str | None
    factor: float | None
    original: int | None
    field: str  # rope_scaling | rope_parameters | rope_parameters.<layer type> | <arch>.rope.scaling
    keys: tuple[str, ...]
    legacy_type: bool = False  # `type` rather than `rope_type`

    @property
    def scales(self) -> bool:
        """Whether it changes positions at all (the `default` type and a type of `none` do not)."""
        return self.kind not in ("default", "none")


@dataclass(frozen=True)
class ModelFacts:
    """What the model's files state; a fact they do not state is None."""

    where: str  # the file read
    model_type: str | None = None  # config.json `model_type`, a GGUF's `general.architecture`
    positions: Stated[int] | None = None
    rope: Stated[RopeScaling] | None = None
    sliding_window: Stated[int] | None = None
    sliding_layers: Stated[int] | None = None  # how many layers are sliding-window attention
    layers: int | None = None


def read_model_facts(path: Path, overrides: Stated[dict[str, Any]] | None = None) -> ModelFacts:
    """The facts of a `config.json`, a model folder holding one, or a GGUF file, with the config keys an engine
    states it overrides (SGLang's `json_model_override_args`) in place of the file's. Bad input is a
    `UserError`."""
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise UserError(f"model config not found: {path} (give a config.json, a model folder or a GGUF file)")
    with path.open("rb") as f:
        magic = f.read(4)
    if magic == b"GGUF":
        from ctxprobe.tasks.gguf_vocab import read_metadata

        return model_facts_from_gguf(read_metadata(path), str(path))
    return model_facts_from_config(load_config(path), str(path), overrides)


def load_config(path: Path) -> dict[str, Any]:
    """The parsed config.json (a directory is taken to hold one); bad input is one `UserError`."""
    if path.is_dir():
        path = path / "config.json"
    text = read_user_text(path, f"config file {path}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} holds a JSON {type(data).__name__}, not an object")
    return data


def served_model_facts(
    config: str | Path | None, served_path: Stated[str] | None, overrides: Stated[dict[str, Any]] | None = None
) -> ModelFacts | None:
    """The model's facts from `config` where given (bad input: `UserError`), else from the model folder or GGUF
    the engine states it loaded, where that path is on this machine (a launched engine's, a shared disk's);
    None where neither is."""
    if config:
        return read_model_facts(Path(config), overrides)
    if served_path is None or not Path(served_path.value).exists():
        return None
    try:
        return read_model_facts(Path(served_path.value), overrides)
    except (UserError, OSError):  # a folder without a config, a file that is no model: nothing to read
        return None


def model_facts_from_config(
    config: Mapping[str, Any], where: str, overrides: Stated[dict[str, Any]] | None = None
) -> ModelFacts:
    """A Hugging Face config's facts. A multimodal config's language model (`text_config`) is what serves
    text: its keys win over the top level's; keys the engine overrides win over both, and are said to be
    read where the engine stated them."""
    text = config.get("text_config")
    merged = {**config, **text} if isinstance(text, Mapping) else dict(config)
    by_engine: dict[str, str] = {}
    if overrides is not None:
        merged.update(overrides.value)
        by_engine = {key: overrides.source for key in overrides.value}

    def source(key: str) -> str:
        """Where `key` was read: the config file, or the engine that overrides it."""
        engine = by_engine.get(key.split(".")[0])
        return f"{engine} {key}" if engine else f"config.json ({where}) {key}"

    positions = next(((key, n) for key in POSITION_KEYS if (n := positive_int(merged.get(key))) is not None), None)
    window = positive_int(merged.get("sliding_window"))
    layers = positive_int(merged.get("num_hidden_layers"))
    model_type = merged.get("model_type")
    return ModelFacts(
        where=where,
        model_type=model_type if isinstance(model_type, str) else None,
        positions=Stated(positions[1], source(positions[0])) if positions else None,
        rope=_config_rope(merged, source),
        sliding_window=Stated(window, source("sliding_window")) if window else None,
        sliding_layers=_sliding_layers(merged, layers, source),
        layers=layers,
    )


def _config_rope(config: Mapping[str, Any], source: Callable[[str], str]) -> Stated[RopeScaling] | None:
    for field in ("rope_parameters", "rope_scaling"):
        value = config.get(field)
        if not isinstance(value, Mapping) or not value:
            continue
        nested = [k for k, v in value.items() if isinstance(v, Mapping)]
        if nested and len(nested) == len(value):  # per layer type: the full-attention layers' entry
            key = "full_attention" if "full_attention" in value else nested[0]
            value, field = value[key], f"{field}.{key}"
        kind = value.get("rope_type", value.get("type"))
        original = positive_int(value.get("original_max_position_embeddings"))
        if original is None:  # Phi-3 and others keep it at the top level, where transformers reads it too
            original = positive_int(config.get("original_max_position_embeddings"))
        factor = value.get("factor")
        rope = RopeScaling(
            kind=str(kind) if kind is not None else None,
            factor=float(factor) if isinstance(factor, (int, float)) and not isinstance(factor, bool) else None,
            original=original,
            field=field,
            keys=tuple(str(k) for k in value),
            legacy_type="rope_type" not in value and "type" in value,
        )
        if rope.kind == "default" and rope.factor is None:
            return None  # transformers 5 writes `{"rope_type": "default", "rope_theta": …}`: no scaling
        return Stated(rope, source(field))
    return None


def _sliding_layers(config: Mapping[str, Any], layers: int | None, source: Callable[[str], str]) -> Stated[int] | None:
    types = config.get("layer_types")
    if isinstance(types, list) and types and all(isinstance(t, str) for t in types):
        return Stated(sum(t == "sliding_attention" for t in types), source("layer_types"))
    use = config.get("use_sliding_window")
    if use is False:
        return Stated(0, f"{source('use_sliding_window')} false")
    window_layers = config.get("max_window_layers")
    if use is True and layers and isinstance(window_layers, int) and not isinstance(window_layers, bool):
        return Stated(
            max(0, layers - window_layers),
            f"{source('use_sliding_window')} true, max_window_layers {window_layers} of {layers} layers",
        )
    return None


def model_facts_from_gguf(meta: Mapping[str, Any], where: str) -> ModelFacts:
    """A GGUF header's facts (llama.cpp's key names, `<arch>.…`)."""
    arch = meta.get("general.architecture")
    arch = arch if isinstance(arch, str) else ""
    at = f"GGUF ({where})"
    context = positive_int(meta.get(f"{arch}.context_length"))
    window = positive_int(meta.get(f"{arch}.attention.sliding_window"))
    layers = positive_int(meta.get(f"{arch}.block_count"))
    prefix = f"{arch}.rope.scaling."
    scaling = {k[len(prefix) :]: v for k, v in meta.items() if k.startswith(prefix)}
    rope = None
    if scaling:
        factor = scaling.get("factor")
        rope = Stated(
            RopeScaling(
                kind=str(scaling["type"]) if "type" in scaling else None,
                factor=float(factor) if isinstance(factor, (int, float)) else None,
                original=positive_int(scaling.get("original_context_length")),
                field=f"{arch}.rope.scaling",
                keys=tuple(scaling),
            ),
            f"{at} {prefix}*",
        )
        if not rope.value.scales and rope.value.factor in (None, 1.0):
            rope = None
    pattern = meta.get(f"{arch}.attention.sliding_window_pattern")
    sliding = None
    if pattern is not None and not isinstance(pattern, (int, float, str)) and len(pattern):
        sliding = Stated(int(sum(bool(v) for v in pattern)), f"{at} {arch}.attention.sliding_window_pattern")
    return ModelFacts(
        where=where,
        model_type=arch or None,
        positions=Stated(context, f"{at} {arch}.context_length") if context else None,
        rope=rope,
        sliding_window=Stated(window, f"{at} {arch}.attention.sliding_window") if window else None,
        sliding_layers=sliding,
        layers=layers,
    )
