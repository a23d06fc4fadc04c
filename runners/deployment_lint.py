"""The deployment lint: what an endpoint states (runners/engine_facts.py) held against the model's own config
(runners/model_facts.py) and the suite's lengths, one line per finding, each naming its facts and where they
were read. `ctxprobe doctor --config` prints them; a run prints them at its start and keeps them in its
manifest.

A misconfigured deployment loses recall at long context in ways a run would report as the model's: positions
past what the model was trained for, a rope scaling the engine does not apply, a sliding window applied to
full-attention layers, prompts cut from the start. The rules (sources in docs/ENGINES.md, "Deployment lint"):

- `served_over_positions`: the served context above the model's positions with no rope scaling, or above
  factor × the original length (the scaled range as vLLM derives it, `_get_and_verify_max_len`).
- `rope_without_type`, `rope_keys_unread`: a rope scaling that names no type (read as `default`: the factor
  is not applied), or keys its type does not read (transformers 5's per-type validation, which vLLM calls).
- `rope_factor_without_original`: a YaRN, llama3 or LongRoPE factor without its original length (engines
  take `max_position_embeddings` as the original).
- `sliding_window_unused`: a `sliding_window` declared while no layer is sliding-window attention (an
  engine that applies it anyway attends only to the window, vLLM #49795), where the window is below what is
  served or run.
- `slot_context_below_prompt`: llama-server's context per slot below the suite's longest prompt.
- `context_shift_on`: llama-server's context shift (drops the oldest tokens once a slot fills).
- `trained_below_suite`: the model's trained context below the suite's longest length.

None refuses a run. Each is a stated fact, not a measured one (an engine may override a config it was
given), and none makes a run's record untrue: a prompt over the slot is rejected and recorded as too long,
never scored; a length past the trained context is a legitimate question (extrapolation) the grid answers
per cell; and the engine ctxprobe starts never turns context shift on. The lines say what a verdict rests on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ctxprobe.runners.engine_facts import EngineFacts
from ctxprobe.runners.engines.base import Stated
from ctxprobe.runners.model_facts import ModelFacts
from ctxprobe.runners.response import LintLine

__all__ = ["RULES", "Deployment", "LintLine", "lint_deployment", "render_lint", "scaled_positions"]


@dataclass(frozen=True)
class Deployment:
    """What the lint reads: the endpoint's facts, the model's (None where no config was read), and the
    suite's longest prompt (tokens a request needs: prompt and answer room) and longest context length."""

    engine: EngineFacts
    model: ModelFacts | None = None
    longest_prompt: int | None = None
    longest_length: int | None = None


def _line(rule: str, message: str, *facts: Stated[Any] | None) -> LintLine:
    return LintLine(rule=rule, message=message, sources=[f.source for f in facts if f is not None])


# What each rope type reads, by transformers 5.25 (`modeling_rope_utils`, `_validate_<type>_rope_parameters`:
# required and optional keys), which vLLM calls on load (`vllm/transformers_utils/config.py`,
# `patch_rope_parameters`); every type also reads `rope_type` (or the legacy `type`, mapped to it), `rope_theta`
# and `partial_rotary_factor`, and vLLM reads `mrope_section`/`mrope_interleaved` (multimodal rope) beside any.
_ALWAYS_READ = {"rope_type", "type", "rope_theta", "partial_rotary_factor", "mrope_section", "mrope_interleaved"}
ROPE_KEYS: dict[str, set[str]] = {
    "default": set(),
    "linear": {"factor"},
    "dynamic": {"factor"},
    "yarn": {
        "factor",
        "original_max_position_embeddings",
        "attention_factor",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
        "truncate",
    },
    "longrope": {"short_factor", "long_factor", "original_max_position_embeddings", "attention_factor", "factor"},
    "llama3": {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"},
}
_WITH_ORIGINAL = ("yarn", "llama3", "longrope", "su")  # types whose scaled range starts from an original length


def scaled_positions(model: ModelFacts) -> Stated[int] | None:
    """The positions the model's config supports, rope scaling included, as vLLM derives them
    (`_get_and_verify_max_len`): YaRN: factor × the original length; linear and dynamic: factor × the
    positions (Gemma 3's positions already count the factor); llama3 and LongRoPE: the positions (their config
    states the scaled length). A rope scaling that names no type scales nothing."""
    positions, rope = model.positions, model.rope
    if positions is None:
        return None
    if rope is None or not rope.value.scales or rope.value.factor is None or rope.value.kind is None:
        return positions
    scaling, factor = rope.value, rope.value.factor
    if scaling.kind == "yarn":
        base = scaling.original or positions.value
        return Stated(
            int(base * factor), f"{rope.source}: factor {factor:g} × {'original ' if scaling.original else ''}{base:,}"
        )
    if scaling.kind in ("linear", "dynamic") and not (model.model_type or "").startswith("gemma3"):
        return Stated(int(positions.value * factor), f"{positions.source} × {rope.source} factor {factor:g}")
    return positions


def _trained(d: Deployment) -> Stated[int] | None:
    """The model's trained context: its config's (scaling included), else what the engine states."""
    return scaled_positions(d.model) if d.model is not None and d.model.positions else d.engine.trained_context


def served_over_positions(d: Deployment) -> Iterator[LintLine]:
    served, trained = d.engine.served_context, _trained(d)
    if served is None or trained is None or served.value <= trained.value:
        return
    rope = d.model.rope if d.model is not None else None
    if rope is None or not rope.value.scales:
        yield _line(
            "served_over_positions",
            f"the served context {served.value:,} ({served.source}) is above the "
            f"model's {trained.value:,} positions ({trained.source}) with no rope scaling: positions past "
            f"{trained.value:,} were never trained",
            served,
            trained,
        )
    else:
        yield _line(
            "served_over_positions",
            f"the served context {served.value:,} ({served.source}) is above the "
            f"scaled range {trained.value:,} ({trained.source}): positions past it are beyond what the "
            "scaling was trained for",
            served,
            trained,
        )


def rope_without_type(d: Deployment) -> Iterator[LintLine]:
    rope = d.model.rope if d.model is not None else None
    if rope is not None and rope.value.kind is None and rope.value.factor not in (None, 1.0):
        yield _line(
            "rope_without_type",
            f"the rope scaling ({rope.source}) names no type (`rope_type`): "
            f"transformers and vLLM read it as `default`, and its factor {rope.value.factor:g} is not applied",
            rope,
        )


def rope_keys_unread(d: Deployment) -> Iterator[LintLine]:
    rope = d.model.rope if d.model is not None else None
    if rope is None or rope.value.field.endswith(".rope.scaling") or rope.value.kind not in ROPE_KEYS:
        return  # a GGUF's keys are llama.cpp's own; a type not in the table is not judged
    unread = [k for k in rope.value.keys if k not in ROPE_KEYS[rope.value.kind] | _ALWAYS_READ]
    if unread:
        yield _line(
            "rope_keys_unread",
            f"the rope scaling ({rope.source}) holds keys its type "
            f"`{rope.value.kind}` does not read: {', '.join(unread)} (transformers 5 and vLLM ignore them)",
            rope,
        )


def rope_factor_without_original(d: Deployment) -> Iterator[LintLine]:
    rope, model = (d.model.rope, d.model) if d.model is not None else (None, None)
    if rope is None or model is None or rope.value.kind not in _WITH_ORIGINAL or rope.value.original is not None:
        return
    positions = f"{model.positions.value:,}" if model.positions else "the model's positions"
    yield _line(
        "rope_factor_without_original",
        f"the rope scaling ({rope.source}) has a factor but no original "
        f"length (`original_max_position_embeddings`): engines take max_position_embeddings ({positions}) "
        "as the original; if that already counts the scaling, the scaled range is overstated",
        rope,
        model.positions,
    )


def sliding_window_unused(d: Deployment) -> Iterator[LintLine]:
    model = d.model
    if model is None or model.sliding_window is None or model.sliding_layers is None or model.sliding_layers.value:
        return
    window = model.sliding_window.value
    served = d.engine.served_context.value if d.engine.served_context else None
    reach = max((n for n in (served, d.longest_length) if n is not None), default=None)
    if reach is not None and window >= reach:
        return  # a window at least as long as anything served or run cuts nothing even where it is applied
    yield _line(
        "sliding_window_unused",
        f"the model declares sliding_window {window:,} "
        f"({model.sliding_window.source}) while no layer is sliding-window attention "
        f"({model.sliding_layers.source}): an engine that applies it anyway (vLLM #49795) attends only to the "
        f"last {window:,} tokens",
        model.sliding_window,
        model.sliding_layers,
    )


def slot_context_below_prompt(d: Deployment) -> Iterator[LintLine]:
    served, slots = d.engine.served_context, d.engine.slots
    if d.engine.engine != "llama-server" or served is None or d.longest_prompt is None:
        return
    if served.value >= d.longest_prompt:
        return
    divided = (
        f"; its n_ctx is divided among {slots.value} slots ({slots.source}): start it with n_ctx "
        f"{slots.value} × {d.longest_prompt:,}"
        if slots is not None and slots.value > 1
        else ""
    )
    yield _line(
        "slot_context_below_prompt",
        f"llama-server's context per slot {served.value:,} ({served.source}) "
        f"is below the suite's longest prompt with its answer room, {d.longest_prompt:,} tokens: those "
        f"prompts are rejected as too long{divided}",
        served,
        slots,
    )


def context_shift_on(d: Deployment) -> Iterator[LintLine]:
    shift = d.engine.context_shift
    if shift is not None and shift.value:
        yield _line(
            "context_shift_on",
            f"context shift is on ({shift.source}): once a slot fills, llama-server "
            "drops the oldest tokens and goes on, so an answer can be read after the start of its prompt "
            "was cut",
            shift,
        )


def trained_below_suite(d: Deployment) -> Iterator[LintLine]:
    trained = _trained(d)
    if trained is None or d.longest_length is None or d.longest_length <= trained.value:
        return
    yield _line(
        "trained_below_suite",
        f"the suite's longest length {d.longest_length:,} is above the model's trained "
        f"context {trained.value:,} ({trained.source}): cells past {trained.value:,} measure positions the "
        "model was not trained for",
        trained,
    )


Rule = Callable[[Deployment], Iterator[LintLine]]
RULES: tuple[Rule, ...] = (
    served_over_positions,
    rope_without_type,
    rope_keys_unread,
    rope_factor_without_original,
    sliding_window_unused,
    slot_context_below_prompt,
    context_shift_on,
    trained_below_suite,
)


def lint_deployment(deployment: Deployment) -> list[LintLine]:
    """Every rule's lines, in the rules' order."""
    return [line for rule in RULES for line in rule(deployment)]


def render_lint(lines: list[LintLine]) -> list[str]:
    """One printed line each."""
    return [f"lint: {line.message}" for line in lines]
