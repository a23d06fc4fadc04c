"""`ctxprobe export --format lm-eval`: a task directory that `lm_eval run --include_path DIR` runs as
it is. One task per family x parameters x length (`ctxprobe_niah_single_32768`), one group per suite,
one JSONL data file per task holding the exact prompts, and a `utils.py` that finds the data beside
itself and scores with ctxprobe's scorer. Generation matches `ctxprobe run`: temperature 0, no stop
sequence, the sample's `max_tokens`.

An absent needle's sample (`tasks/absent.py`) has no value to expect: its doc's target is an abstention
the scorer credits (`ABSTAINED`), `absent` is true and `scoring` says what counts, so a reader of lm-eval's
logs sees why a value scored 0; the score is ctxprobe's own verdict (`process_results`), never a match
against the target."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ctxprobe.evals.lmeval.source import ExportSource
from ctxprobe.evals.records.safe_write import writing
from ctxprobe.tasks.answers.absence import ABSENT, ABSTAINED
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.variant import ALWAYS_SHOWN, variant_params

DATA_DIR = "data"
UTILS = '''"""lm-eval helpers of this ctxprobe export (ctxprobe must be installed: it scores the answers)."""

from pathlib import Path

from ctxprobe.evals.lmeval.task_utils import load_data, process_results  # noqa: F401

HERE = Path(__file__).resolve().parent


def load(data_file, **metadata):
    """lm-eval's custom_dataset: this task's data file, found beside this utils.py."""
    return load_data(HERE / data_file)
'''


@dataclass(frozen=True)
class LmEvalExport:
    dir: Path
    group: str
    tasks: list[str]
    samples: int
    modes: list[str] = field(default_factory=list)

    def commands(
        self, base_url: str = "http://127.0.0.1:8080", model: str = "MODEL", output: str = "lm-eval-out"
    ) -> dict[str, str]:
        """The `lm_eval` command lines to run this export: completions (base models) and chat."""
        root = base_url.rstrip("/").removesuffix("/v1")
        common = f"lm_eval run --include_path {self.dir} --tasks {self.group}"
        tail = f"--log_samples --output_path {output}"
        return {
            "completions": f"{common} --model local-completions --model_args model={model},base_url={root}"
            f"/v1/completions,tokenizer_backend=None,tokenized_requests=False {tail}",
            "chat": f"{common} --model local-chat-completions --model_args model={model},base_url={root}"
            f"/v1/chat/completions,tokenizer_backend=None,tokenized_requests=False --apply_chat_template {tail}",
        }


def task_name(sample: Sample) -> str:
    """`ctxprobe_<family>_<non-default params>_<length>` (plus `_chat` for chat-mode samples): a name,
    never parsed back (each doc carries its typed recipe)."""
    recipe = sample.recipe
    parts = [recipe.family]
    for key, value in variant_params(recipe.params, recipe.family).items():
        parts.append(str(value) if key in ALWAYS_SHOWN else f"{key}{value}")
    parts.append(str(recipe.context_tokens))
    if recipe.mode == "chat":
        parts.append("chat")
    return "ctxprobe_" + re.sub(r"[^a-z0-9]+", "_", "_".join(parts).lower()).strip("_")


ABSENT_SCORING = (
    "absent needle: correct when the reply says the text does not hold the asked key and gives "
    "no value of its kind; a value is wrong (hallucinated); the target is one reply that counts"
)
PRESENT_SCORING = "ctxprobe's scorer on the answer read from the reply; the target lists the expected answers"


def doc_row(sample: Sample) -> dict[str, object]:
    recipe = sample.recipe
    absent = sample.expected.kind == ABSENT
    return {
        "sample_id": sample.sample_id,
        "prompt": sample.prompt,
        "prompt_sha256": sample.prompt_sha256,
        "target": ABSTAINED if absent else " | ".join(sample.expected.answers),
        "answers": sample.expected.answers,
        "absent": absent,
        "scoring": ABSENT_SCORING if absent else PRESENT_SCORING,
        "family": recipe.family,
        "context_tokens": recipe.context_tokens,
        "depth": recipe.depth,
        "planned_tokens": sample.planned_tokens,
        "mode": recipe.mode,
        "max_tokens": sample.max_tokens,
        "sample_json": sample.model_dump_json(),
    }


def write_lm_eval_tasks(source: ExportSource, out_dir: str | Path) -> LmEvalExport:
    """Write the task directory for `source`'s samples into `out_dir` (new or empty)."""
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"export folder {out} exists and is not empty")
    with writing(out):
        return _write_tasks(source, out)


def _write_tasks(source: ExportSource, out: Path) -> LmEvalExport:
    by_task = _tasks(source.samples)
    (out / DATA_DIR).mkdir(parents=True)
    (out / "utils.py").write_text(UTILS, encoding="utf-8")
    for name, samples in by_task.items():
        data_file = f"{DATA_DIR}/{name}.jsonl"
        with (out / data_file).open("w", encoding="utf-8") as fh:
            for sample in samples:
                fh.write(json.dumps(doc_row(sample), ensure_ascii=False) + "\n")
        _write_yaml(out / f"{name}.yaml", _task_config(name, data_file, samples))
    group = "ctxprobe_" + re.sub(r"[^a-z0-9]+", "_", source.name.lower()).strip("_")
    if group in by_task:
        group += "_suite"
    _write_yaml(
        out / f"{group}.yaml",
        {
            "group": group,
            "task": sorted(by_task),
            "aggregate_metric_list": [
                {"metric": m, "aggregation": "mean", "weight_by_size": True} for m in ("exact", "partial")
            ],
            "metadata": {"version": 1.0},
        },
    )
    modes: list[str] = sorted({str(s.recipe.mode) for s in source.samples})
    return LmEvalExport(dir=out, group=group, tasks=sorted(by_task), samples=len(source.samples), modes=modes)


def _tasks(samples: list[Sample]) -> dict[str, list[Sample]]:
    """Samples by task name; a name whose samples want different answer budgets (lm-eval sets
    `max_gen_toks` per task) is split by budget, `_t<max_tokens>`."""
    by_key: dict[tuple[str, int], list[Sample]] = defaultdict(list)
    for sample in samples:
        by_key[(task_name(sample), sample.max_tokens)].append(sample)
    budgets: dict[str, int] = defaultdict(int)
    for name, _ in by_key:
        budgets[name] += 1
    return {(name if budgets[name] == 1 else f"{name}_t{tokens}"): group for (name, tokens), group in by_key.items()}


def _task_config(name: str, data_file: str, samples: list[Sample]) -> dict[str, object]:
    return {
        "task": name,
        "dataset_path": "json",  # unused: custom_dataset loads the data; lm-eval wants the key
        "custom_dataset": "!function utils.load",
        "dataset_kwargs": {"data_file": data_file},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_text": "{{prompt}}",
        "doc_to_target": "{{target}}",
        "process_results": "!function utils.process_results",
        "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in ("exact", "partial")],
        # as `ctxprobe run` sends them: greedy, no stop sequence, the sample's answer budget
        "generation_kwargs": {
            "until": [],
            "max_gen_toks": samples[0].max_tokens,
            "do_sample": False,
            "temperature": 0.0,
        },
        "repeats": 1,
        "metadata": {"version": 1.0},
    }


def _write_yaml(path: Path, data: object) -> None:
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
    # lm-eval's `!function` tag is written bare (yaml.safe_dump would quote it as a string)
    text = re.sub(r"'(!function [\w.]+)'", r"\1", text)
    path.write_text(text, encoding="utf-8")
