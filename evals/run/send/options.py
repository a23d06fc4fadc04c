"""The options of a run, declared once: the library API takes them as `RunOptions`, the command line
builds the same object from its arguments, and the manifest records them (never a secret: only the NAME
of the variable that holds the API key)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, field_validator, model_validator
from pydantic.fields import FieldInfo

from ctxprobe.evals.compare.paired.kl_gate import KL_MARGIN, margin_option, metric_option
from ctxprobe.evals.compare.sequential.cells import StopOptions
from ctxprobe.evals.plan.options import GpuOptions
from ctxprobe.evals.run.send.endpoint_urls import check_endpoint_url
from ctxprobe.runners.endpoint_config import PREFILL_RATE_MAX, PREFILL_RATE_MIN
from ctxprobe.runners.launchers import DEFAULT_LAUNCHER, launcher_for, launchers
from ctxprobe.runners.launchers.llama_cpp import EmbeddedSettings
from ctxprobe.runners.settings import ClientSettings, LogprobSettings
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.errors import validated as checked_options
from ctxprobe.tasks.exit_codes import UNDECIDED_HELP, Undecided
from ctxprobe.tasks.sample import Mode


def _engine_help() -> str:
    named = [f"{found.name} ({found.summary})" for found in launchers()]
    listed = f"{', '.join(named[:-1])} or {named[-1]}" if len(named) > 1 else named[0]
    return f"the engine ctxprobe starts when no --endpoint is given: {listed}"


# The engines ctxprobe can start, their names known once the launchers are (built-in and entry points').
LAUNCHERS = tuple(launchers())
LAUNCHER_NAMES = tuple(found.name for found in LAUNCHERS)
EngineName = Literal[LAUNCHER_NAMES]  # type: ignore[valid-type]  # the launchers found at import, a Literal made at run time
LAUNCHER_FIELDS = frozenset(name for found in LAUNCHERS for name in found.settings.model_fields)


class EndpointOptions(ClientSettings):
    """Where prompts go and how: a remote endpoint, or an engine ctxprobe starts when `endpoints` is empty
    (`engine`: the embedded llama.cpp one by default, vLLM with `engine="vllm"`, or any registered launcher,
    runners/launchers/), started with `launcher`, the chosen launcher's own settings model as one part. A
    launcher's fields are given by their flat names too (`n_ctx=8192`, `--n-ctx 8192`): those of the launcher
    `engine` names go into its part; another launcher's are not this run's engine and are left out, as a flag
    of an engine not started always was."""

    endpoints: list[str] = Field(
        default_factory=list, description="OpenAI-compatible base URLs; several are replicas of one deployment"
    )
    engine: EngineName = Field(DEFAULT_LAUNCHER, description=_engine_help())
    mode: Mode | None = Field(
        None,
        description="completions (base models, answer prefix) or chat; default: the suite's, else chat for remote endpoints and completions for the embedded engine",
    )
    concurrency: int | None = Field(
        None, ge=1, le=4096, description="requests in flight (default: the server's slots for llama-server, else 4)"
    )
    token_counter: str | None = Field(
        None, description="estimate[:CHARS] | local:PATH_OR_ID | server[:URL] (default: the engine's own tokenizer)"
    )
    launcher: SerializeAsAny[BaseModel] = Field(
        default_factory=lambda: launcher_for(DEFAULT_LAUNCHER).settings(),
        description="the settings of the engine `engine` names",
    )

    @field_validator("endpoints")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        return [check_endpoint_url(u) for u in urls]

    @model_validator(mode="before")
    @classmethod
    def _launcher_part(cls, values: Any) -> Any:
        """The launcher's fields given by their flat names, into the chosen launcher's settings (checked there)."""
        if not isinstance(values, dict):
            return values
        rest = {k: v for k, v in values.items() if k not in LAUNCHER_FIELDS}
        engine = rest.get("engine", DEFAULT_LAUNCHER)
        if engine not in LAUNCHER_NAMES:
            return rest  # the unknown --engine is the error, one line naming the known ones
        model = launcher_for(engine).settings
        given = rest.get("launcher")
        if isinstance(given, BaseModel) and not isinstance(given, model):
            raise UserError(
                f"launcher settings {type(given).__name__} given for --engine {engine}, which takes {model.__name__}"
            )
        flat = {k: v for k, v in values.items() if k in model.model_fields}
        if isinstance(given, BaseModel) and not flat:
            return rest
        held = given.model_dump(exclude_unset=True) if isinstance(given, BaseModel) else dict(given or {})
        rest["launcher"] = validated(model, {**held, **flat})
        return rest

    @classmethod
    def flat_fields(cls) -> dict[str, FieldInfo]:
        """Every option by its flat name (a flag's, the manifest's): the model's own, then every launcher's."""
        own = {k: v for k, v in cls.model_fields.items() if k != "launcher"}
        return {**own, **{k: v for found in LAUNCHERS for k, v in found.settings.model_fields.items()}}

    def flat(self) -> dict[str, Any]:
        """The options by their flat names, as the manifest records them: every launcher's settings, the
        chosen one's as given and the others' at their defaults."""
        own = self.model_dump(mode="json", exclude={"launcher"})
        others = {
            k: v for found in LAUNCHERS for k, v in found.settings.model_construct().model_dump(mode="json").items()
        }
        return {**own, **others, **self.launcher.model_dump(mode="json")}

    def given(self) -> set[str]:
        """The flat names given (not left to their defaults)."""
        return (self.model_fields_set - {"launcher"}) | self.launcher.model_fields_set


EMBEDDED_FIELDS = frozenset(EmbeddedSettings.model_fields)  # the embedded engine's options


class SuiteOptions(BaseModel):
    """What to run: a suite by name or file, or one family inline; the other fields override it."""

    model_config = ConfigDict(extra="forbid")

    suite: str | None = Field(None, description="built-in suite name (quick, nightly) or a YAML file (default: quick)")
    include: list[str] = Field(
        default_factory=list,
        description="a Python module, or a folder of modules, "
        "declaring task families and answer kinds of your own (repeatable)",
    )
    family: str | None = Field(None, description="an inline suite of one family instead of a suite")
    params: str | None = Field(None, description="family parameters, e.g. variant=multikey,distractors=8")
    lengths: str | None = Field(None, description="context lengths, e.g. 1k,2k,4k or 32k,128k,1m")
    depths: str | None = Field(None, description="depths in percent, e.g. 0,50,100 or 0:100:10")
    samples: int | None = Field(None, ge=1, description="samples per (task, length, depth) cell")
    haystack: str | None = Field(
        None,
        description="prose | prose:zh | code | legal | noise | file:PATH | dir:PATH | hf:NAME_OR_PARQUET[:split[:column]]",
    )
    seed: int | None = Field(None, description="base seed")
    templates: str | None = Field(
        None,
        description="run each task under these prompt layouts with identical "
        "needles, e.g. ctxprobe,ruler (template sensitivity)",
    )
    question_positions: str | None = Field(
        None,
        description="run each task with its question at these positions "
        "with identical needles, e.g. end,start (template sensitivity)",
    )
    layout: Literal["independent", "nested"] | None = Field(
        None,
        description="independent: a prompt of its own per (length, depth, seed); nested: per task and seed one "
        "haystack stream holding every cell's needle, each length its first tokens, so one prefill of the longest "
        "context serves every length and depth (default: the suite's)",
    )
    facts: str | None = Field(
        None,
        description="facts held at once by the suite's capacity tasks, e.g. 1,4,16,64 "
        "(a grid axis like --lengths; cells whose facts do not fit a length are left out)",
    )
    qa: str | None = Field(
        None,
        description="the datasets of the suite's qa tasks: hf:PATH[,hf:PATH], local "
        "parquet or JSON files with SQuAD or HotpotQA fields (qa tasks without one are left out)",
    )
    needles: str | None = Field(
        None,
        description="a needle file (JSONL: needle, question, answers, kind per line): "
        "one needles task per item (added to the suite's tasks; alone: a suite of those tasks)",
    )
    mrcr: str | None = Field(
        None,
        description="OpenAI's MRCR parquet, kept locally (hf:PATH): the suite's mrcr "
        "tasks read it instead of generated conversations (alone: a suite of mrcr tasks)",
    )


# What overrides a named suite: every field of `SuiteOptions` but the suite and the inline family's own.
SUITE_OVERRIDES = tuple(name for name in SuiteOptions.model_fields if name not in ("suite", "family", "params"))


class AgainstOptions(BaseModel):
    """A paired sequential run against a finished baseline run."""

    model_config = ConfigDict(extra="forbid")

    against: str | None = Field(
        None,
        description="a baseline run folder: send its samples in rounds and stop each "
        "family once its paired difference is decided (FAIL, PASS, UNDECIDED)",
    )
    fail_if_drop: float | None = Field(
        None, ge=0, lt=1, description="with --against: the drop (e.g. 0.05) a row FAILs beyond and PASSes within"
    )
    metric: str = metric_option(
        "with --against: ", ", against --kl-margin; or a metric registered beside them, `evals.compare.metrics`"
    )
    kl_margin: float = margin_option("with --against --metric kl")
    baseline_endpoint: list[str] = Field(
        default_factory=list,
        description="with --against and --max-samples: the baseline's endpoint, sent the "
        "samples the baseline run lacks in lockstep with the candidate (kept in the run's baseline-extension/)",
    )
    undecided: Undecided = Field("exit", description=f"with --against: {UNDECIDED_HELP}")
    junit: str | None = Field(
        None,
        description="with --against: write the gate's rows as JUnit XML (failed / passed / skipped when undecided)",
    )
    summary_md: str | None = Field(
        None,
        description="with --against: write the gate's verdicts as a markdown "
        "table (also appended to $GITHUB_STEP_SUMMARY when set)",
    )

    @field_validator("baseline_endpoint")
    @classmethod
    def _baseline_urls(cls, urls: list[str]) -> list[str]:
        return [check_endpoint_url(u) for u in urls]


class JudgeOptions(BaseModel):
    """The optional LLM judge of a needle file's answers: a second opinion beside the exact score."""

    model_config = ConfigDict(extra="forbid")

    judge_endpoint: str | None = Field(
        None,
        description="an OpenAI-compatible endpoint whose model judges each "
        "scored needles-file answer against its accepted answers (judge.jsonl; "
        "the report shows where it disagrees with the exact score)",
    )
    judge_model: str | None = Field(
        None, description="with --judge-endpoint: the model to ask (default: the first the endpoint lists)"
    )

    @field_validator("judge_endpoint")
    @classmethod
    def _judge_url(cls, url: str | None) -> str | None:
        return None if url is None else check_endpoint_url(url)


class DryRunOptions(GpuOptions):
    """`--dry-run`: what the run would cost, without running it."""

    model_config = ConfigDict(extra="forbid")

    dry_run: bool = Field(
        False,
        description="print samples, prompt tokens, prefix-cache share, prefill time and "
        "memory fit, and send nothing (at most one short probe to measure the prefill rate)",
    )
    prefill_rate: float | None = Field(
        None,
        ge=PREFILL_RATE_MIN,
        le=PREFILL_RATE_MAX,
        allow_inf_nan=False,
        description=f"prefill tokens per second, {PREFILL_RATE_MIN:,.0f} to "
        f"{PREFILL_RATE_MAX:,.0f} (default: measured with one short request); on a "
        "run, the rate each request's deadline assumes until the run has measured its own",
    )
    probe_up_to: str | None = Field(
        None,
        description="--dry-run: time the prefill up to this length (e.g. 32k; "
        "default 4k), at most the longest the engine serves and the suite sends: a "
        "longer probe costs its prefill but extrapolates less",
    )
    config: str | None = Field(
        None,
        description="the model's config.json: KV/state memory per sequence (with "
        "--gpus, --gpu-mem and --weights: the sequences that fit); a run lints the deployment "
        "against it (default: the model path the engine states, where it is on this machine)",
    )


class OutputOptions(BaseModel):
    """Where the run is written and how it ends: its label and results folder (or the run folder it
    resumes), whether errors pass, the live progress line and report.html."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field("", max_length=200, description="a name for this build, e.g. q4km-llamacpp or fp8-vllm")
    results_dir: str = Field("results", description="where run folders are made")
    resume: str | None = Field(None, description="continue this run folder: keep finished samples, send the rest")
    allow_errors: bool = Field(False, description="exit 0 even when samples ended in errors")
    quiet: bool = Field(False, description="no live progress line")
    no_report: bool = Field(False, description="do not write report.html into the run folder at the end")


class RunOptions(BaseModel):
    """Everything `ctxprobe.run` (and `ctxprobe.estimate`) take: a handful of named parts, each handed to the
    code that uses it (the grid and suite, the endpoint with the chosen launcher's settings, the answers'
    probabilities, the paired gate, the stopping rule, the outputs, the judge, the dry run's cost), and the
    few options of the run itself. Every option may be given by its flat name too (`ctxprobe.run(suite=
    "quick", label="q4km")`, each flag of `ctxprobe run`, the manifest's `options`): `_from_flat` puts it
    into its part, the one place that maps the two."""

    model_config = ConfigDict(extra="forbid")

    grid: SuiteOptions = Field(default_factory=SuiteOptions)
    endpoint: EndpointOptions = Field(default_factory=EndpointOptions)
    probabilities: LogprobSettings = Field(default_factory=LogprobSettings)
    gate: AgainstOptions = Field(default_factory=AgainstOptions)
    stopping: StopOptions = Field(default_factory=StopOptions)
    order: Literal["cache-aware", "as-listed"] = Field(
        "cache-aware",
        description="cache-aware: prompts sharing a prefix one after another, deepest needle first "
        "(fewer prefill tokens with a prefix cache); as-listed: the suite's order",
    )
    answer_tokens: int | None = Field(
        None,
        ge=1,
        description="tokens each answer may take (default: the family's budget in completions mode, "
        "plus 64 in chat mode, where a model answers in a sentence); a raised budget resends truncated samples on resume",
    )
    reasoning_tokens: int | None = Field(
        None,
        ge=0,
        description="tokens a reasoning model may think before answering, added to the answer budget "
        "and sent as the engine's reasoning cap (default: 0, or 1024 when the endpoint's model reasons)",
    )
    outputs: OutputOptions = Field(default_factory=OutputOptions)
    cache_check: str | None = Field(
        None,
        description="the cache-path control: send a seeded share of the requests served from the prefix "
        "cache again with a cold prefill and compare the answers (an engine fault exits 7): auto (at least one "
        "check per length, within 3 percent of the computed prefill where it can), off, or a share in (0, 1] of the "
        "servable requests (default: auto for nested runs, off for independent ones)",
    )
    judge: JudgeOptions = Field(default_factory=JudgeOptions)
    cost: DryRunOptions = Field(default_factory=DryRunOptions)

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, values: Any) -> Any:
        """Options given by their flat names, each into its part (a part given whole is taken as it is, the
        flat names of its fields on top)."""
        if not isinstance(values, dict):
            return values
        out: dict[str, Any] = {}
        flat: dict[str, dict[str, Any]] = {}
        for key, value in values.items():
            part = FLAT_PARTS.get(key)
            if part is None:
                out[key] = value
            else:
                flat.setdefault(part, {})[key] = value
        for part, given in flat.items():
            held = out.get(part)
            out[part] = {
                **(held.model_dump(exclude_unset=True) if isinstance(held, BaseModel) else held or {}),
                **given,
            }
        return out

    @field_validator("cache_check", mode="before")
    @classmethod
    def _cache_check(cls, value: object) -> str | None:
        from ctxprobe.evals.run.cache_check import parse_cache_check

        return parse_cache_check(None if value is None else str(value))

    @model_validator(mode="after")
    def _needs_a_baseline(self) -> RunOptions:
        """The gate's flags gate nothing without a baseline: refused rather than ignored."""
        gate = self.gate
        if gate.against is None and self.outputs.resume is None:  # a resumed run keeps its own baseline
            given = [
                flag
                for flag, value in (
                    ("--fail-if-drop", gate.fail_if_drop),
                    ("--junit", gate.junit),
                    ("--summary-md", gate.summary_md),
                    (f"--undecided {gate.undecided}", "undecided" in gate.model_fields_set),
                    ("--baseline-endpoint", gate.baseline_endpoint),
                    (f"--metric {gate.metric}", gate.metric != "correct"),
                    ("--kl-margin", gate.kl_margin != KL_MARGIN),
                )
                if value
            ]
            if given:
                raise UserError(
                    f"{', '.join(given)} need{'s' if len(given) == 1 else ''} --against BASELINE_RUN "
                    "(the run to pair with); `ctxprobe compare` gates two finished runs"
                )
        return self

    @classmethod
    def flat_fields(cls) -> dict[str, FieldInfo]:
        """Every option by its flat name, in the order `ctxprobe run --help` lists them within a group."""
        fields: dict[str, FieldInfo] = {}
        for name, field in cls.model_fields.items():
            model = PARTS.get(name)
            fields.update({name: field} if model is None else _fields_of(model))
        return fields

    def flat(self) -> dict[str, Any]:
        """The options by their flat names, as the manifest records them (JSON values)."""
        values = self.model_dump(mode="json", exclude=set(PARTS))
        for name in PARTS:
            held = getattr(self, name)
            values.update(held.flat() if isinstance(held, EndpointOptions) else held.model_dump(mode="json"))
        return values

    def given(self) -> set[str]:
        """The flat names given (not left to their defaults)."""
        names = self.model_fields_set - set(PARTS)
        for name in PARTS:
            held = getattr(self, name)
            names |= held.given() if isinstance(held, EndpointOptions) else held.model_fields_set
        return names


def _fields_of(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """A part's options by their flat names (the endpoint's: every launcher's settings too)."""
    return model.flat_fields() if issubclass(model, EndpointOptions) else model.model_fields


# The parts of `RunOptions` and the flat names each holds: the one map between the two.
PARTS: dict[str, type[BaseModel]] = {
    name: field.annotation
    for name, field in RunOptions.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
}
FLAT_PARTS: dict[str, str] = {flat: name for name, model in PARTS.items() for flat in _fields_of(model)}


def _check_names() -> None:
    """A flat name means one option: a launcher's settings field named as a run's option, or a part named as
    one, would be one flag and one manifest field with two meanings (one would win without a word)."""
    every = [flat for model in PARTS.values() for flat in _fields_of(model)]
    every += [name for name in RunOptions.model_fields if name not in PARTS]
    taken = {name for name in every if every.count(name) > 1} | (set(PARTS) & set(every))
    if taken:
        raise ValueError(f"options named twice in RunOptions: {', '.join(sorted(taken))}")


_check_names()


M = TypeVar("M", bound=BaseModel)
# An option inside a part is named by its own flag (`--concurrency`, never `--endpoint.concurrency`).
PART_FLAGS = {f"{part}.{name}": "--" + name.replace("_", "-") for name, part in FLAT_PARTS.items()}


def validated(
    model: type[M], values: dict[str, Any], problem: str = "invalid option", flags: Mapping[str, str] | None = None
) -> M:
    """`model(**values)`, or one line naming the first bad option by its flag (`tasks.errors.validated`)."""
    return checked_options(model, values, problem, flags={**PART_FLAGS, **(flags or {})})
