"""The options of a run, declared once: the library API takes them as `RunOptions`, the command line
builds the same object from its arguments, and the manifest records them (never a secret: only the NAME
of the variable that holds the API key)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ctxprobe.evals.compare.paired.kl_gate import KL_MARGIN, margin_option, metric_option
from ctxprobe.evals.plan.options import GpuOptions
from ctxprobe.evals.run.send.endpoint_urls import check_endpoint_url
from ctxprobe.evals.compare.sequential.cells import StopOptions
from ctxprobe.runners.endpoint_config import PREFILL_RATE_MAX, PREFILL_RATE_MIN
from ctxprobe.runners.launchers import DEFAULT_LAUNCHER, launchers
from ctxprobe.runners.launchers.llama_cpp import EmbeddedSettings
from ctxprobe.runners.settings import ClientSettings, LogprobSettings
from ctxprobe.tasks.errors import UserError, validated  # noqa: F401  (the options and their check, from one import)
from ctxprobe.tasks.exit_codes import UNDECIDED_HELP, Undecided
from ctxprobe.tasks.sample import Mode


def _engine_help() -> str:
    named = [f"{found.name} ({found.summary})" for found in launchers()]
    listed = f"{', '.join(named[:-1])} or {named[-1]}" if len(named) > 1 else named[0]
    return f"the engine ctxprobe starts when no --endpoint is given: {listed}"


# The engines ctxprobe can start, their names known once the launchers are (built-in and entry points').
LAUNCHERS = tuple(launchers())
EngineName = Literal[tuple(found.name for found in LAUNCHERS)]  # type: ignore[valid-type]


class EndpointOptions(ClientSettings, *(found.settings for found in LAUNCHERS)):  # type: ignore[misc]
    """Where prompts go and how: a remote endpoint, or an engine ctxprobe starts when `endpoints` is empty
    (`engine`: the embedded llama.cpp one by default, vLLM with `engine="vllm"`, or any registered launcher,
    runners/launchers/). The client's settings and each launcher's are runners' own models, composed here
    and passed on as given: a launcher's fields are options of every run with no edit to evals/."""

    endpoints: list[str] = Field(default_factory=list, description="OpenAI-compatible base URLs; several are replicas of one deployment")
    engine: EngineName = Field(DEFAULT_LAUNCHER, description=_engine_help())  # type: ignore[valid-type]
    mode: Mode | None = Field(None, description="completions (base models, answer prefix) or chat; default: the suite's, else chat for remote endpoints and completions for the embedded engine")
    concurrency: int | None = Field(None, ge=1, le=4096, description="requests in flight (default: the server's slots for llama-server, else 4)")
    token_counter: str | None = Field(None, description="estimate[:CHARS] | local:PATH_OR_ID | server[:URL] (default: the engine's own tokenizer)")

    @field_validator("endpoints")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        return [check_endpoint_url(u) for u in urls]


EMBEDDED_FIELDS = frozenset(EmbeddedSettings.model_fields)  # the embedded engine's options


class SuiteOptions(BaseModel):
    """What to run: a suite by name or file, or one family inline; the other fields override it."""

    model_config = ConfigDict(extra="forbid")

    suite: str | None = Field(None, description="built-in suite name (quick, nightly) or a YAML file (default: quick)")
    include: list[str] = Field(default_factory=list, description="a Python module, or a folder of modules, "
                               "declaring task families and answer kinds of your own (repeatable)")
    family: str | None = Field(None, description="an inline suite of one family instead of a suite")
    params: str | None = Field(None, description="family parameters, e.g. variant=multikey,distractors=8")
    lengths: str | None = Field(None, description="context lengths, e.g. 1k,2k,4k or 32k,128k,1m")
    depths: str | None = Field(None, description="depths in percent, e.g. 0,50,100 or 0:100:10")
    samples: int | None = Field(None, ge=1, description="samples per (task, length, depth) cell")
    haystack: str | None = Field(None, description="prose | prose:zh | code | legal | noise | file:PATH | dir:PATH | hf:NAME_OR_PARQUET[:split[:column]]")
    seed: int | None = Field(None, description="base seed")
    templates: str | None = Field(None, description="run each task under these prompt layouts with identical "
                                  "needles, e.g. ctxprobe,ruler (template sensitivity)")
    question_positions: str | None = Field(None, description="run each task with its question at these positions "
                                           "with identical needles, e.g. end,start (template sensitivity)")
    layout: Literal["independent", "nested"] | None = Field(
        None, description="independent: a prompt of its own per (length, depth, seed); nested: per task and seed one "
        "haystack stream holding every cell's needle, each length its first tokens, so one prefill of the longest "
        "context serves every length and depth (default: the suite's)")
    facts: str | None = Field(None, description="facts held at once by the suite's capacity tasks, e.g. 1,4,16,64 "
                              "(a grid axis like --lengths; cells whose facts do not fit a length are left out)")
    qa: str | None = Field(None, description="the datasets of the suite's qa tasks: hf:PATH[,hf:PATH], local "
                           "parquet or JSON files with SQuAD or HotpotQA fields (qa tasks without one are left out)")
    needles: str | None = Field(None, description="a needle file (JSONL: needle, question, answers, kind per line): "
                                "one needles task per item (added to the suite's tasks; alone: a suite of those tasks)")
    mrcr: str | None = Field(None, description="OpenAI's MRCR parquet, kept locally (hf:PATH): the suite's mrcr "
                             "tasks read it instead of generated conversations (alone: a suite of mrcr tasks)")



# What overrides a named suite: every field of `SuiteOptions` but the suite and the inline family's own.
SUITE_OVERRIDES = tuple(name for name in SuiteOptions.model_fields if name not in ("suite", "family", "params"))

class AgainstOptions(BaseModel):
    """A paired sequential run against a finished baseline run."""

    model_config = ConfigDict(extra="forbid")

    against: str | None = Field(None, description="a baseline run folder: send its samples in rounds and stop each "
                                "family once its paired difference is decided (FAIL, PASS, UNDECIDED)")
    fail_if_drop: float | None = Field(None, ge=0, lt=1, description="with --against: the drop (e.g. 0.05) a row "
                                       "FAILs beyond and PASSes within")
    metric: str = metric_option("with --against: ", ", against --kl-margin; or a metric registered beside them, `evals.compare.metrics`")
    kl_margin: float = margin_option("with --against --metric kl")
    baseline_endpoint: list[str] = Field(
        default_factory=list, description="with --against and --max-samples: the baseline's endpoint, sent the "
        "samples the baseline run lacks in lockstep with the candidate (kept in the run's baseline-extension/)")
    undecided: Undecided = Field("exit", description=f"with --against: {UNDECIDED_HELP}")
    junit: str | None = Field(None, description="with --against: write the gate's rows as JUnit XML (failed / "
                              "passed / skipped when undecided)")
    summary_md: str | None = Field(None, description="with --against: write the gate's verdicts as a markdown "
                                   "table (also appended to $GITHUB_STEP_SUMMARY when set)")


    @field_validator("baseline_endpoint")
    @classmethod
    def _baseline_urls(cls, urls: list[str]) -> list[str]:
        return [check_endpoint_url(u) for u in urls]



class JudgeOptions(BaseModel):
    """The optional LLM judge of a needle file's answers: a second opinion beside the exact score."""

    model_config = ConfigDict(extra="forbid")

    judge_endpoint: str | None = Field(None, description="an OpenAI-compatible endpoint whose model judges each "
                                       "scored needles-file answer against its accepted answers (judge.jsonl; "
                                       "the report shows where it disagrees with the exact score)")
    judge_model: str | None = Field(None, description="with --judge-endpoint: the model to ask (default: the first "
                                    "the endpoint lists)")

    @field_validator("judge_endpoint")
    @classmethod
    def _judge_url(cls, url: str | None) -> str | None:
        return None if url is None else check_endpoint_url(url)


class _RunOptions(SuiteOptions, EndpointOptions, StopOptions, AgainstOptions, JudgeOptions,
                  LogprobSettings):

    order: Literal["cache-aware", "as-listed"] = Field(
        "cache-aware", description="cache-aware: prompts sharing a prefix one after another, deepest needle first "
        "(fewer prefill tokens with a prefix cache); as-listed: the suite's order")
    answer_tokens: int | None = Field(
        None, ge=1, description="tokens each answer may take (default: the family's budget in completions mode, "
        "plus 64 in chat mode, where a model answers in a sentence); a raised budget resends truncated samples on resume")
    reasoning_tokens: int | None = Field(
        None, ge=0, description="tokens a reasoning model may think before answering, added to the answer budget "
        "and sent as the engine's reasoning cap (default: 0, or 1024 when the endpoint's model reasons)")
    label: str = Field("", max_length=200, description="a name for this build, e.g. q4km-llamacpp or fp8-vllm")
    results_dir: str = Field("results", description="where run folders are made")
    resume: str | None = Field(None, description="continue this run folder: keep finished samples, send the rest")
    allow_errors: bool = Field(False, description="exit 0 even when samples ended in errors")
    quiet: bool = Field(False, description="no live progress line")
    no_report: bool = Field(False, description="do not write report.html into the run folder at the end")
    cache_check: str | None = Field(
        None, description="the cache-path control: send a seeded share of the requests served from the prefix "
        "cache again with a cold prefill and compare the answers (an engine fault exits 7): auto (at least one "
        "check per length, within 3 percent of the computed prefill where it can), off, or a share in (0, 1] of the "
        "servable requests (default: auto for nested runs, off for independent ones)")

    @field_validator("cache_check", mode="before")
    @classmethod
    def _cache_check(cls, value: object) -> str | None:
        from ctxprobe.evals.run.cache_check import parse_cache_check

        return parse_cache_check(None if value is None else str(value))

    @model_validator(mode="after")
    def _needs_a_baseline(self) -> _RunOptions:
        """The gate's flags gate nothing without a baseline: refused rather than ignored."""
        if self.against is None and self.resume is None:  # a resumed run keeps its own baseline
            given = [flag for flag, value in (("--fail-if-drop", self.fail_if_drop), ("--junit", self.junit),
                                              ("--summary-md", self.summary_md),
                                              (f"--undecided {self.undecided}", "undecided" in self.model_fields_set),
                                              ("--baseline-endpoint", self.baseline_endpoint),
                                              (f"--metric {self.metric}", self.metric != "correct"),
                                              ("--kl-margin", self.kl_margin != KL_MARGIN)) if value]
            if given:
                raise UserError(f"{', '.join(given)} need{'s' if len(given) == 1 else ''} --against BASELINE_RUN "
                                "(the run to pair with); `ctxprobe compare` gates two finished runs")
        return self


class DryRunOptions(GpuOptions):
    """`--dry-run`: what the run would cost, without running it."""

    model_config = ConfigDict(extra="forbid")

    dry_run: bool = Field(False, description="print samples, prompt tokens, prefix-cache share, prefill time and "
                          "memory fit, and send nothing (at most one short probe to measure the prefill rate)")
    prefill_rate: float | None = Field(None, ge=PREFILL_RATE_MIN, le=PREFILL_RATE_MAX, allow_inf_nan=False,
                                       description=f"prefill tokens per second, {PREFILL_RATE_MIN:,.0f} to "
                                       f"{PREFILL_RATE_MAX:,.0f} (default: measured with one short request); on a "
                                       "run, the rate each request's deadline assumes until the run has measured its own")
    probe_up_to: str | None = Field(None, description="--dry-run: time the prefill up to this length (e.g. 32k; "
                                    "default 4k), at most the longest the engine serves and the suite sends: a "
                                    "longer probe costs its prefill but extrapolates less")
    config: str | None = Field(None, description="the model's config.json: KV/state memory per sequence (with "
                               "--gpus, --gpu-mem and --weights: the sequences that fit); a run lints the deployment "
                               "against it (default: the model path the engine states, where it is on this machine)")


class RunOptions(_RunOptions, DryRunOptions):
    """Everything `ctxprobe.run` (and `ctxprobe.estimate`) take."""


def _check_launcher_fields() -> None:
    """A launcher's settings field must be a name the run does not use already: the two would be one flag
    and one manifest field with two meanings (the run's would win without a word)."""
    theirs = {c for found in LAUNCHERS for c in found.settings.__mro__}
    declared = {name for c in RunOptions.__mro__ if c not in theirs for name in vars(c).get("__annotations__", {})}
    for found in LAUNCHERS:
        taken = declared & set(found.settings.model_fields)
        if taken:
            raise ValueError(f"launcher {found.name!r} declares {', '.join(sorted(taken))}, a run's own option")


_check_launcher_fields()
