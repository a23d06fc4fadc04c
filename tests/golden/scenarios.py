"""Golden runs: what the command line prints and writes for a fixed set of scenarios, normalised, so that a
change to the code's structure can be shown to change no behaviour (records, ids, prompts, CLI outputs).

Each scenario runs `ctxprobe` in-process against the tests' fake engine (tests/runners/fake_engine.py), whose
answers are a fixed function of the prompt: a dry run, an independent run, a nested run, `compare` of two runs,
a paired run (`run --against`), `show`, `prompt`, `tasks` and `--help` of every subcommand. What varies from one
execution to the next is normalised away: the temporary folder, the fake engine's port, run folder names,
timestamps and durations, and byte sizes of files that hold them. Prompts are kept by their sha256 (with their
length), records and manifests as sorted JSON less their timing fields.

    python -m tests.golden.scenarios OUT_DIR      # write every scenario's normalised output under OUT_DIR
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import FakeEngine

NEEDLE = re.compile(r"special magic numbers? for (\S+) is: (\d+)\.")
ASKED = re.compile(r"special magic numbers? for (\S+) mentioned")
SUBCOMMANDS = (
    "run",
    "show",
    "check",
    "tasks",
    "prompt",
    "limit",
    "plan",
    "compare",
    "history",
    "report",
    "export",
    "import-lm-eval",
    "doctor",
)
# fields that hold times, durations, hosts or paths: their values change every execution
VOLATILE_KEY = re.compile(
    r"(^|_)(at|time|times|seconds|elapsed|latency|duration|started|finished|created|updated|"
    r"pid|host|hostname|wall|ttft|rate|throughput|eta|s)$|_s$|_ms$|timings|"
    r"^(run_dir|dir|path|url|urls|base_urls|endpoint|started_at|finished_at|command|argv)$"
)


def _prompt_text(body: dict[str, Any]) -> str:
    return str(body.get("prompt") or " ".join(str(m.get("content", "")) for m in body.get("messages", [])))


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def baseline_answer(body: dict[str, Any]) -> str:
    """The asked needle's value, but a wrong number on one prompt in five (chosen by the prompt's hash)."""
    text = _prompt_text(body)
    asked, values = ASKED.search(text), dict(NEEDLE.findall(text))
    if not asked or asked.group(1) not in values:
        return "I could not find it."
    return "1234567." if _digest(text) % 5 == 0 else f"{values[asked.group(1)]}."


def candidate_answer(body: dict[str, Any]) -> str:
    """As the baseline, and wrong on another one prompt in four."""
    text = _prompt_text(body)
    return "7654321." if _digest(text) % 4 == 1 else baseline_answer(body)


@contextlib.contextmanager
def _captured() -> Iterator[io.StringIO]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        yield out


def _call(args: list[str]) -> str:
    with _captured() as out:
        try:
            code = main(args)
        except SystemExit as e:  # argparse's --help and usage errors
            code = e.code if isinstance(e.code, int) else 1
    return f"$ ctxprobe {' '.join(args)}\n{out.getvalue()}[exit {code}]\n"


class Normaliser:
    """Replaces what changes between executions (the folder, the port, run names, times) with placeholders."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.urls: list[str] = []

    def text(self, text: str) -> str:
        text = text.replace(str(self.root.resolve()), "<TMP>").replace(str(self.root), "<TMP>")
        for i, url in enumerate(self.urls):
            text = text.replace(url, f"<URL{i}>")
        text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<PORT>", text)
        text = re.sub(r"\b\d{8}-\d{6}(-\d+)?-", "<RUN>-", text)
        text = re.sub(r"\b20\d\d-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?", "<DATE>", text)
        text = re.sub(r"\b\d+(\.\d+)?\s?(s|ms|min|h)\b(?![a-z])", "<DUR>", text)
        text = re.sub(r"\d+(\.\d+)? (tok/s|samples/s|tokens/s)", "<RATE>", text)
        text = re.sub(r"\b\d{1,2}:\d\d(:\d\d)?\b", "<CLOCK>", text)
        # the dry run's prefill probes are timed: their fit moves with the machine's load
        text = re.sub(r"(?m)^(prefill probes: |expected prefill time).*$", r"\1<TIMED>", text)
        return text

    def value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<VOLATILE>" if VOLATILE_KEY.search(k) else self.value(v)) for k, v in sorted(value.items())}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def json_text(self, raw: str) -> str:
        return json.dumps(self.value(json.loads(raw)), sort_keys=True, ensure_ascii=False)


def _records(path: Path, norm: Normaliser) -> str:
    """samples.jsonl, one line a record, sorted by sample id, prompts as their digest."""
    lines = []
    for raw in path.read_text().splitlines():
        if not raw.strip():
            continue
        record = json.loads(raw)
        _digest_prompts(record)
        lines.append(json.dumps(norm.value(record), sort_keys=True, ensure_ascii=False))
    return "\n".join(sorted(lines)) + "\n"


def _digest_prompts(value: Any) -> None:
    if isinstance(value, dict):
        for k in list(value):
            if k in ("prompt", "text", "content", "haystack") and isinstance(value[k], str) and len(value[k]) > 200:
                value[k] = f"<{len(value[k])} chars sha256 {hashlib.sha256(value[k].encode()).hexdigest()[:16]}>"
            else:
                _digest_prompts(value[k])
    elif isinstance(value, list):
        for v in value:
            _digest_prompts(v)


def folder(path: Path, norm: Normaliser) -> str:
    """Every file of a run, compare or limit folder: JSON and JSONL normalised, CSV and text as text; binary
    files (images, HTML with embedded images) by their name only."""
    out = []
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = norm.text(str(f.relative_to(path)))
        if f.suffix == ".jsonl":
            body = _records(f, norm)
        elif f.suffix == ".json":
            body = norm.json_text(f.read_text()) + "\n"
        elif f.suffix in (".csv", ".md", ".txt", ".xml"):
            body = norm.text(f.read_text())
            if f.suffix == ".csv":
                body = _csv_without_volatile(body)
        else:
            body = "<binary or page: not compared>\n"
        out.append(f"--- {rel}\n{body}")
    return "".join(out)


def _csv_without_volatile(text: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return text
    keep = [i for i, name in enumerate(rows[0]) if not VOLATILE_KEY.search(name)]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([row[i] for i in keep if i < len(row)])
    return buf.getvalue()


def _only_dir(path: Path) -> Path:
    (one,) = [p for p in path.iterdir() if p.is_dir()]
    return one


GRID = ["--family", "niah", "--lengths", "1k,2k", "--depths", "0,50,100"]
COMMON = ["--quiet", "--token-counter", "estimate"]


def scenarios(root: Path) -> dict[str, str]:
    """Every scenario's normalised output, by name."""
    norm = Normaliser(root)
    out: dict[str, str] = {}
    old_columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps --help to the terminal's width
    try:
        out["help"] = "".join(_call([*([sub] if sub else []), "--help"]) for sub in ("", *SUBCOMMANDS))
        out["tasks"] = _call(["tasks"])
        with (
            FakeEngine("vllm", context_length=8192, answer=baseline_answer) as base_engine,
            FakeEngine("vllm", context_length=8192, answer=candidate_answer) as cand_engine,
        ):
            norm.urls = [base_engine.url, cand_engine.url]
            out["dry_run"] = _call(
                [
                    "run",
                    "--endpoint",
                    base_engine.url,
                    *GRID,
                    "--samples",
                    "2",
                    "--dry-run",
                    "--token-counter",
                    "estimate",
                ]
            )
            runs: dict[str, Path] = {}
            for name, engine, extra in (
                ("base", base_engine, []),
                ("cand", cand_engine, []),
                ("nested", base_engine, ["--layout", "nested", "--samples", "3"]),
                ("nested_cand", cand_engine, ["--layout", "nested", "--samples", "3"]),
            ):
                where = root / name
                text = _call(
                    [
                        "run",
                        "--endpoint",
                        engine.url,
                        *GRID,
                        *(extra or ["--samples", "4"]),
                        *COMMON,
                        "--label",
                        name,
                        "--results-dir",
                        str(where),
                    ]
                )
                runs[name] = _only_dir(where)
                out[f"run_{name}"] = text + folder(runs[name], norm)
            out["show"] = _call(["show", str(runs["base"])])
            first = min(
                json.loads(line)["sample"]["sample_id"]
                for line in (runs["base"] / "samples.jsonl").read_text().splitlines()
                if line.strip()
            )
            out["prompt"] = _call(["prompt", str(runs["base"]), first, "--sha256"])
            for name, (a, b) in (("compare", ("base", "cand")), ("compare_nested", ("nested", "nested_cand"))):
                where = root / name
                text = _call(
                    ["compare", str(runs[a]), str(runs[b]), "--fail-if-drop", "0.05", "--results-dir", str(where)]
                )
                out[name] = text + folder(_only_dir(where), norm)
            where = root / "paired"
            text = _call(
                [
                    "run",
                    "--endpoint",
                    cand_engine.url,
                    "--against",
                    str(runs["base"]),
                    "--fail-if-drop",
                    "0.1",
                    *COMMON,
                    "--label",
                    "paired",
                    "--results-dir",
                    str(where),
                ]
            )
            out["paired"] = text + folder(_only_dir(where), norm)
    finally:
        if old_columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old_columns
    return {name: norm.text(text) for name, text in out.items()}


def write(root: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in scenarios(root).items():
        (dest / f"{name}.txt").write_text(text)


if __name__ == "__main__":  # pragma: no cover - a maintainer's command
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp), Path(sys.argv[1]))
