"""Suites: a YAML file naming families x lengths x depths x samples per cell, expanded into recipes.

name: quick
seed: 0
samples: 1            # per (task, length, depth) cell
haystack: prose
mode: completions
lengths: [1k, 2k, 4k]
depths: [0, 50, 100]  # or "0:100:10"
cache_check: off      # the cache-path control: auto, off or a share (`run --cache-check` overrides it)
tasks:
  - family: niah
    params: {variant: single}
  - family: recall
    params: {kind: hex}
    lengths: [1k, 2k]  # any suite-level field may be overridden per task
  - family: capacity
    facts: [1, 4, 16]  # facts held at once: one task per value (a grid axis; see tasks/facts_axis.py)
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from ctxprobe.tasks.absent import ABSENT, asks_absent
from ctxprobe.tasks.cache_check_value import cache_check_value
from ctxprobe.tasks.common_params import QuestionPosition
from ctxprobe.tasks.errors import UserError, first_problem, read_user_text
from ctxprobe.tasks.facts_axis import check_facts_fit, facts_layouts, facts_of, fitting_lengths
from ctxprobe.tasks.lengths import check_depth, check_depth_list, distinct, parse_depths, parse_length, parse_lengths
from ctxprobe.tasks.limits import MAX_SUITE_BYTES, MAX_SUITE_TASKS, check_seed, check_suite_size
from ctxprobe.tasks.nested import draw_cells, nested_recipes
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import Layout, Mode, Recipe, TokenizerIdentity, seed_window
from ctxprobe.tasks.strict_yaml import DuplicateKey, load_yaml


def resolve_mode(flag: Mode | None, *declared: Mode | None, default: Mode) -> Mode:
    """The one place a sample's mode is decided. Precedence: an explicit `--mode` (`flag`) wins; then the
    narrowest declaration (a task's own `mode`, then the suite's); then the endpoint's `default` (chat for a
    remote endpoint, completions for the embedded engine: `evals/run/send/serving.default_mode`)."""
    for mode in (flag, *declared):
        if mode is not None:
            return mode
    return default


def _lengths(value: Any) -> list[int]:
    if isinstance(value, str):
        return parse_lengths(value)
    if not isinstance(value, (list, tuple)) or not value:
        raise UserError(f"no lengths in {value!r}: give at least one, e.g. [4k] or [1k, 2k, 4k]")
    return distinct([parse_length(v) for v in value], value, "length", "tokens")


def _depths(value: Any) -> list[float]:
    if isinstance(value, str):
        return parse_depths(value)
    if not isinstance(value, (list, tuple)):
        raise UserError(f"invalid depths {value!r}: a list like [0, 50, 100] or a range like 0:100:10")
    return check_depth_list([check_depth(float(v)) for v in value], value)


class SuiteTask(BaseModel):
    # Numbers as YAML writes them: `samples: true` is not 1, and NaN is no depth.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    family: str
    params: dict[str, Any] = Field(default_factory=dict)
    lengths: list[int] | None = None
    depths: list[float] | None = None
    samples: int | None = Field(None, ge=1, strict=True)
    haystack: str | None = None
    mode: Mode | None = None
    answer_tokens: int | None = Field(
        None,
        ge=1,
        strict=True,
        description="tokens the answer may take (default: the family's budget, plus a sentence's worth in chat mode)",
    )
    facts: list[StrictInt] | None = Field(
        None,
        min_length=1,
        description="facts held at once, for a family with a `facts` parameter (capacity): one task per value",
    )
    layout: Layout | None = Field(
        None,
        description="independent (a prompt of its own per cell) or nested (one "
        "haystack stream per seed, every length its first tokens: tasks/nested.py)",
    )

    @field_validator("lengths", mode="before")
    @classmethod
    def _parse_lengths(cls, v: Any) -> list[int] | None:
        return None if v is None else _lengths(v)

    @field_validator("depths", mode="before")
    @classmethod
    def _parse_depths(cls, v: Any) -> list[float] | None:
        return None if v is None else _depths(v)


INLINE_PREFIX = "inline-"  # the name of a suite given on the command line (`run --family F`): inline-F


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str
    description: str = ""
    seed: int = Field(0, strict=True)
    samples: int = Field(1, ge=1, strict=True, description="samples per (task, length, depth) cell")
    haystack: str = "prose"
    mode: Mode | None = Field(None, description="completions or chat; unset: the endpoint's default")
    answer_tokens: int | None = Field(
        None, ge=1, strict=True, description="tokens each answer may take (a task's own wins)"
    )
    reasoning_tokens: int | None = Field(
        None, ge=0, strict=True, description="tokens a reasoning model may think, on top of the answer budget"
    )
    lengths: list[int]
    depths: list[float]
    tasks: list[SuiteTask] = Field(min_length=1, max_length=MAX_SUITE_TASKS)
    stop: Literal["fixed", "decided"] | dict[str, Any] | None = Field(
        None,
        description="fixed (every cell gets `samples`) or decided, or a mapping of the stop rule's fields "
        "(stop, threshold, precision, min_samples, max_samples); the run's options override it",
    )
    templates: list[Literal["ctxprobe", "ruler"]] | None = Field(
        None,
        description="run every task that has a `template` parameter under each of these layouts, with "
        "identical needles (template sensitivity)",
    )
    question_positions: list[QuestionPosition] | None = Field(
        None,
        description="run every task with its question at each of these positions (end, start, both), with "
        "identical needles: a layout of template sensitivity",
    )
    paired_gate_share: dict[Literal["correct", "p_answer", "kl"], float] | None = Field(
        None,
        description="the share of the suite's prompt tokens a paired run against a baseline of it (`run "
        "--against`) is expected to send when nothing dropped, per gated metric, as measured by "
        "benchmarks/bench_sequential.py on its model; `--dry-run` prints the tokens it implies",
    )
    layout: Layout = Field(
        "independent",
        description="independent: every (length, depth, seed) cell a prompt of its "
        "own; nested: per task and seed one haystack stream holding a needle for every cell, each "
        "length its first tokens, so one prefill of the longest serves them all (a task's own wins)",
    )
    facts: list[StrictInt] | None = Field(
        None,
        min_length=1,
        description="facts held at once, for every task whose family "
        "has a `facts` parameter (capacity): a grid axis like lengths; a (facts, length) "
        "cell whose facts do not fit the length is left out",
    )
    cache_check: str | None = Field(
        None,
        description="the cache-path control as the suite asks for it: auto, off or a "
        "share in (0, 1] of the servable requests, as `run --cache-check` takes it (the "
        "flag wins); unset: auto for nested runs, off for independent ones",
    )

    @field_validator("lengths", mode="before")
    @classmethod
    def _parse_lengths(cls, v: Any) -> list[int]:
        return _lengths(v)

    @field_validator("seed")
    @classmethod
    def _seed_in_range(cls, v: int) -> int:
        return check_seed(v)

    @field_validator("depths", mode="before")
    @classmethod
    def _parse_depths(cls, v: Any) -> list[float]:
        return _depths(v)

    @field_validator("cache_check", mode="before")
    @classmethod
    def _cache_check(cls, v: Any) -> str | None:
        return cache_check_value(v)

    def recipes(
        self,
        tokenizer: Callable[[Mode], TokenizerIdentity | str],
        mode: Mode | None = None,
        default_mode: Mode = "completions",
        reuse_block: int | None = None,
    ) -> list[Recipe]:
        """Every recipe of the suite, grouped so that prompts sharing a prefix run one after another.
        `tokenizer(mode)` names the tokenizer identity of recipes in that mode (a bare name: no chat template
        size of its own); each task's mode is
        `resolve_mode(mode, task.mode, self.mode, default=default_mode)`. `reuse_block`: the engine's reuse
        unit where it reuses whole blocks only; nested chains cut each length's stream on one
        (`NestedGrid.block`)."""
        out: list[Recipe] = []
        for task, params in self.task_layouts():
            task_mode = resolve_mode(mode, task.mode, self.mode, default=default_mode)
            named = tokenizer(task_mode)
            identity = TokenizerIdentity(named) if isinstance(named, str) else named
            lengths = fitting_lengths(task.family, params, task.lengths or self.lengths)
            depths = task.depths or self.depths
            if self.layout_of(task) == "nested":
                chains = self.chain_grid(task, params)
                out += nested_recipes(
                    Recipe(
                        family=task.family,
                        params=params,
                        haystack=task.haystack or self.haystack,
                        context_tokens=max(chains[0]),
                        mode=task_mode,
                        **identity._asdict(),
                    ),
                    lengths,
                    depths,
                    [self.seed + index for index in range(task.samples or self.samples)],
                    reuse_block,
                    chains,
                )
                continue
            for length in lengths:
                for index in range(task.samples or self.samples):
                    for depth in depths:
                        out.append(
                            Recipe(
                                family=task.family,
                                params=params,
                                haystack=task.haystack or self.haystack,
                                context_tokens=length,
                                depth=depth,
                                seed=self.seed + index,
                                window=seed_window(self.seed + index, length),
                                mode=task_mode,
                                **identity._asdict(),
                            )
                        )
        return out

    def chain_grid(self, task: SuiteTask, params: dict[str, Any]) -> tuple[list[int], list[float]]:
        """The lengths and depths of the chains a nested task is asked in: its own; for a task of absent questions
        (`tasks/absent.py`) with a present twin in the suite (the same family, haystack, mode and parameters but
        `absent`, nested too), the twin's: its questions ride the twin's chains, whose contexts are computed
        already, and its own lengths and depths pick the cells it asks (the nightly's one per chain and length)."""

        def grid(of: SuiteTask, of_params: dict[str, Any]) -> tuple[list[int], list[float]]:
            return fitting_lengths(of.family, of_params, of.lengths or self.lengths), of.depths or self.depths

        if asks_absent(params):
            present = {k: v for k, v in params.items() if k != ABSENT}
            for other, other_params in self.task_layouts():
                if (other.family, other_params, other.haystack or self.haystack, other.mode, self.layout_of(other)) == (
                    task.family,
                    present,
                    task.haystack or self.haystack,
                    task.mode,
                    "nested",
                ):
                    return grid(other, other_params)
        return grid(task, params)

    def layout_of(self, task: SuiteTask) -> Layout:
        """A task's layout: its own, else the suite's."""
        return task.layout or self.layout

    def run_mode(self, flag: Mode | None, default: Mode) -> Mode:
        """The run's mode, as the manifest records it: `resolve_mode` without a task (a task with a mode of
        its own keeps it in its samples)."""
        return resolve_mode(flag, self.mode, default=default)

    def size(self) -> int:
        """How many samples the suite makes (counted from `task_layouts`, not built)."""
        return sum(
            len(fitting_lengths(task.family, params, task.lengths or self.lengths))
            * (task.samples or self.samples)
            * len(task.depths or self.depths)
            for task, params in self.task_layouts()
        )

    def task_layouts(self) -> list[tuple[SuiteTask, dict[str, Any]]]:
        """Each task with its full parameters (defaults included: the record says exactly what ran), once
        per template in `templates` where the family has a `template` parameter, times each question position
        of `question_positions`."""
        out = []
        for task in self.tasks:
            family = get_family(task.family)
            layouts: list[dict[str, str]] = (
                [{"template": t} for t in self.templates or []] if "template" in family.Params.model_fields else []
            )
            if self.question_positions:
                layouts = [
                    {**layout, "question_position": q} for layout in layouts or [{}] for q in self.question_positions
                ]
            # A layout the task has none of (RULER's for a multihop keychain) is left out; the task still
            # runs under the others, or under its own when none fits.
            fitting = [
                params
                for params in (_params_or_none(family, {**task.params, **extra}) for extra in layouts)
                if params is not None
            ]
            for params in fitting or [validate_params(family, task.params).model_dump(mode="json")]:
                out += [(task, p) for p in facts_layouts(family, params, task.facts or self.facts)]
        return out

    def _check_chain(self, task: SuiteTask, params: dict[str, Any]) -> None:
        """A nested task's first chain drawn, without a haystack or a tokenizer: whatever refuses the task by its
        drafts (its grid past what its family holds, the same needle in every cell) refuses it now, before a
        run folder is made or a request sent, not when the chain comes up midway through the run."""
        lengths = fitting_lengths(task.family, params, task.lengths or self.lengths)
        mode = resolve_mode(None, task.mode, self.mode, default="completions")
        chains = self.chain_grid(task, params)
        [first, *_] = nested_recipes(
            Recipe(
                family=task.family,
                params=params,
                haystack=task.haystack or self.haystack,
                context_tokens=max(chains[0]),
                mode=mode,
            ),
            lengths,
            task.depths or self.depths,
            [self.seed],
            chains=chains,
        )
        draw_cells(first)

    def check(self) -> set[str]:
        """Fail fast, before any engine starts: every family, parameter and haystack must be known, and
        each task's shortest length must hold its question and needles (checked with the estimate counter).
        Returns the answer kinds its samples expect (their scorers are checked by the caller)."""
        from ctxprobe.tasks.build import build_sample, haystack

        for task in self.tasks:
            if task.facts and "facts" not in get_family(task.family).Params.model_fields:
                raise UserError(
                    f"suite {self.name}: task {task.family} has no facts parameter: `facts` is for "
                    "families that hold several facts at once (capacity)"
                )
        check_suite_size(self.size(), self.name)
        checked: set[int] = set()
        kinds: set[str] = set()
        for task, params in self.task_layouts():
            lengths = check_facts_fit(task.family, params, task.lengths or self.lengths)
            if self.layout_of(task) == "nested":
                self._check_chain(task, params)
            if id(task) in checked:
                continue
            checked.add(id(task))
            haystack(task.haystack or self.haystack)
            sample = build_sample(
                Recipe(
                    family=task.family,
                    params={**task.params, **facts_of(params)},
                    haystack=task.haystack or self.haystack,
                    context_tokens=min(lengths),
                    depth=50.0,
                    seed=self.seed,
                    mode=resolve_mode(None, task.mode, self.mode, default="completions"),
                )
            )
            kinds.add(sample.expected.kind)
        return kinds


def _params_or_none(family: Any, params: dict[str, Any]) -> dict[str, Any] | None:
    """The full parameters, or None where the family refuses them."""
    try:
        return validate_params(family, params).model_dump(mode="json")
    except UserError:
        return None


def builtin_suites() -> list[str]:
    return sorted(
        p.name.removesuffix(".yaml") for p in files("ctxprobe.tasks.suites").iterdir() if p.name.endswith(".yaml")
    )


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name (`quick`, `nightly`, ...) or a YAML file path. A built-in's bare name is the
    built-in even where the working folder holds something of that name (`./nightly` names the path)."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or (path.exists() and name_or_path not in builtin_suites()):
        if not path.exists():
            raise UserError(f"suite file not found: {name_or_path}")
        text = read_user_text(path, f"suite {name_or_path}", max_bytes=MAX_SUITE_BYTES)
    else:
        if name_or_path not in builtin_suites():
            raise UserError(
                f"unknown suite {name_or_path!r}; built-in: {', '.join(builtin_suites())} (or a .yaml path)"
            )
        text = files("ctxprobe.tasks.suites").joinpath(f"{name_or_path}.yaml").read_text(encoding="utf-8")
    try:
        data = load_yaml(text)
    except DuplicateKey as exc:
        raise UserError(f"malformed suite {name_or_path}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise UserError(f"malformed suite {name_or_path}: invalid YAML{where}") from None
    if not isinstance(data, dict):
        raise UserError(f"malformed suite {name_or_path}: expected a mapping with name, lengths, depths, tasks")
    return parse_suite(data, f"malformed suite {name_or_path}")


def parse_suite(data: dict[str, Any], problem: str) -> Suite:
    """Validate suite data; a problem is one line: `<problem>: <where>: <what>`."""
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        where, msg, _ = first_problem(exc)
        raise UserError(f"{problem}: {where}: {msg.removeprefix('Value error, ')}") from None
