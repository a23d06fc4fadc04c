"""Reading lm-eval's output folders: `samples_<task>_<time>.jsonl` (one line per doc: `doc`, `arguments`,
`resps`, `prompt_hash`, one key per metric) and the `results_<time>.json` beside it (model and its
arguments)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.tasks.errors import UserError

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")


@dataclass(frozen=True)
class LoggedDoc:
    """One line of a sample log: the doc, what was sent (`arg_0`), what came back."""

    task: str
    path: Path
    doc_id: int
    doc: dict[str, Any]
    sent: str  # arguments.gen_args_0.arg_0: the prompt, or a chat template's JSON messages
    gen_kwargs: dict[str, Any]
    output: str  # the raw response, before lm-eval's filters
    prompt_hash: str
    metrics: dict[str, Any]  # the row's metric values by name


@dataclass(frozen=True)
class LogRun:
    """What the results file beside a sample log says about the run."""

    model: str | None
    model_args: dict[str, Any]
    lm_eval_version: str | None


def sample_logs(paths: Sequence[str | Path]) -> list[Path]:
    """Every `samples_*.jsonl` under the given folders (or the files themselves), in a stable order."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(p for p in sorted(path.rglob("samples_*.jsonl")) if _SAMPLES.match(p.name))
        else:
            raise UserError(f"no such lm-eval output: {path}")
    if not found:
        raise UserError(
            f"no lm-eval sample logs (samples_<task>_<time>.jsonl) under {', '.join(map(str, paths))}: "
            "run lm_eval with --log_samples --output_path OUT"
        )
    return list(dict.fromkeys(found))


def read_log(path: Path) -> Iterator[LoggedDoc]:
    match = _SAMPLES.match(path.name)
    task = match["task"] if match else path.stem
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise UserError(f"{path}:{number}: not UTF-8 text; lm-eval sample logs are JSON lines") from None
            try:
                row = json.loads(line)
                args = row["arguments"]["gen_args_0"]
                metrics = {name: row[name] for name in row.get("metrics", []) if name in row}
                yield LoggedDoc(
                    task=task,
                    path=path,
                    doc_id=int(row["doc_id"]),
                    doc=row["doc"],
                    sent=args["arg_0"],
                    gen_kwargs=args.get("arg_1") or {},
                    output=_first_response(row["resps"]),
                    prompt_hash=row["prompt_hash"],
                    metrics=metrics,
                )
            except (json.JSONDecodeError, KeyError, TypeError, IndexError, ValueError) as exc:
                raise UserError(
                    f"{path}:{number}: not an lm-eval sample log line ({type(exc).__name__}: {exc})"
                ) from None


def log_run(path: Path) -> LogRun:
    """The results file written with a sample log (same timestamp), if there is one."""
    match = _SAMPLES.match(path.name)
    results = path.with_name(f"results_{match['time']}.json") if match else None
    if results is None or not results.is_file():
        return LogRun(model=None, model_args={}, lm_eval_version=None)
    data = json.loads(results.read_text(encoding="utf-8"))
    config = data.get("config") or {}
    args = config.get("model_args") or {}
    if isinstance(args, str):
        args = dict(item.split("=", 1) for item in args.split(",") if "=" in item)
    return LogRun(model=config.get("model"), model_args=args, lm_eval_version=data.get("lm_eval_version"))


def _first_response(resps: Any) -> str:
    first = resps[0]
    text = first[0] if isinstance(first, list) else first
    return text if isinstance(text, str) else str(text)
