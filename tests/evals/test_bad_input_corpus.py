"""The bad-input corpus, made from the command line itself: for every subcommand, every flag that takes a value
is given an empty value, every number flag NaN, an infinity, a word and an overflow, every choice flag a name it
does not offer, and every file a command reads is given as a missing path, a folder, a link to /dev/zero, a FIFO,
binary bytes and an empty file. Each case must end at once in one line on stderr with exit code 2: no traceback,
no hang, no request sent, no run folder left behind, and neither of the two planted secrets (an API key in the
environment, a password in the endpoint URL) printed anywhere. A control per command shows its base arguments
are good, so each case fails for its one bad value."""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import build_parser
from tests.evals.compare.synthetic import all_right, write_run
from tests.evals.in_process import ends
from tests.runners.fake_engine import FakeEngine
from tests.tiered import tiered

KEY_SECRET = "planted-key-7e1c0a"
URL_SECRET = "planted-password-52b9f4"
KEY_ENV = "CORPUS_PLANTED_KEY"
NUMBER_VALUES = ("nan", "inf", "-inf", "many", "1e999")
NOT_CASES = {"-h", "--help"}
# Flags whose value is not checked where it is parsed, with why (each is covered by a case of its own kind).
UNCHECKED: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def engine() -> Iterator[FakeEngine]:
    with FakeEngine("vllm", answer="The number is 1234567.") as fake:
        yield fake


@pytest.fixture(autouse=True)
def planted_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY_SECRET)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _value_flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.nargs != 0 and not NOT_CASES & set(a.option_strings)]


def _kind(action: argparse.Action) -> str:
    if action.choices:
        return "choice"
    name = getattr(action.type, "__name__", "")
    return {"int": "number", "number": "number"}.get(name, "text")


def _bad_values(action: argparse.Action) -> list[str]:
    kind = _kind(action)
    if kind == "choice":
        return ["", " ", "no-such-choice"]
    if kind == "number":
        return ["", " ", *NUMBER_VALUES]
    return ["", " "]


FLAG_KINDS = {
    (command, action.option_strings[-1]): _kind(action)
    for command, parser in _subparsers().items()
    for action in _value_flags(parser)
}
FLAG_CASES = [
    (command, action.option_strings[-1], value)
    for command, parser in _subparsers().items()
    for action in _value_flags(parser)
    for value in _bad_values(action)
    if (command, action.option_strings[-1]) not in UNCHECKED
]

# Values each flag accepts alone that are out of bounds with the rest of the command or with the served
# endpoint: (command, what is wrong, the flags added to the command's base arguments).
BOUND_CASES = [
    ("limit", "answer room above the largest length", ["--answer-room=99999999"]),
    ("limit", "answer room leaving no prompt within --max-length", ["--answer-room=2000"]),
    ("limit", "answer room leaving no prompt within the served context", ["--max-length=8k", "--answer-room=3500"]),
    (
        "limit-embedded",
        "answer room leaving no prompt within the context the engine would start with",
        ["--answer-room=40000"],
    ),  # refused before the engine is started: the GGUF's trained context is 32K
]

FILE_KINDS = ("missing", "folder", "dev-zero-link", "fifo", "binary", "empty")


def _bad_file(tmp: Path, kind: str, name: str) -> str:
    path = tmp / f"bad-{kind}-{name}"
    if kind == "folder":
        path.mkdir()
    elif kind == "dev-zero-link":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "binary":
        path.write_bytes(b"\x00\xff\xfe" * 64)
    elif kind == "empty":
        path.write_bytes(b"")
    return str(path)


# Every argument that names a file or folder ctxprobe reads: (command, how to put the bad path in its argv).
FILE_ARGS: dict[str, Callable[[dict[str, str], str], list[str]]] = {
    "run --suite": lambda base, p: [*base["run"], "--suite", p],
    "run --needles": lambda base, p: [*base["run"], "--needles", p],
    "run --model-file": lambda base, p: ["run", "--model-file", p, "--family", "niah", "--lengths", "1k"],
    "run --resume": lambda base, p: ["run", "--resume", p],
    "run --against": lambda base, p: [*base["run"], "--against", p],
    "run --config": lambda base, p: [*base["run"], "--config", p, "--dry-run"],
    "run --qa": lambda base, p: [*base["run"], "--qa", p],
    "run --qa hf:": lambda base, p: [*base["run"], "--family", "qa", "--qa", "hf:" + p],
    "run --mrcr hf:": lambda base, p: [*base["run"], "--mrcr", "hf:" + p],
    "run --haystack file:": lambda base, p: [*base["run"], "--haystack", "file:" + p],
    "run --include": lambda base, p: [*base["run"], "--include", p],
    "export --haystack file:": lambda base, p: [*base["export"], "--haystack", "file:" + p],
    "show": lambda base, p: ["show", p],
    "check": lambda base, p: ["check", p],
    "report": lambda base, p: ["report", p, "-o", base["report-out"]],
    "compare baseline": lambda base, p: ["compare", p, base["run-b"]],
    "compare candidate": lambda base, p: ["compare", base["run-a"], p],
    "history": lambda base, p: ["history", p],
    "plan": lambda base, p: ["plan", p],
    "prompt": lambda base, p: ["prompt", p, "abc"],
    "export suite": lambda base, p: ["export", p, base["export-out"]],
    "import-lm-eval": lambda base, p: ["import-lm-eval", p, "--results-dir", base["results"]],
}
# Every file a command writes at its end, named by a flag: refused before the command runs when it is a folder,
# a FIFO, a link (to /dev/zero), or under a file (its folder cannot be made).
OUTPUT_KINDS = ("folder", "fifo", "dev-zero-link", "under-a-file")
OUTPUT_ARGS: dict[str, Callable[[dict[str, str], str], list[str]]] = {
    "run --junit": lambda base, p: [*base["against"], "--junit", p],
    "run --summary-md": lambda base, p: [*base["against"], "--summary-md", p],
    "compare --junit": lambda base, p: [*base["compare"], "--fail-if-drop", "0.05", "--junit", p],
    "compare --summary-md": lambda base, p: [*base["compare"], "--fail-if-drop", "0.05", "--summary-md", p],
    "report -o": lambda base, p: ["report", base["run-a"], "-o", p],
}
OUTPUT_CASES = [(arg, kind) for arg in OUTPUT_ARGS for kind in OUTPUT_KINDS]


def _bad_output(tmp: Path, kind: str, name: str) -> str:
    if kind == "under-a-file":
        plain = tmp / f"plain-{name}"
        plain.write_text("x")
        return str(plain / "out.xml")
    return _bad_file(tmp, kind, name)


# A folder is what some of these read (a run folder, a results folder): for them a folder that holds no run
# is the bad case, and it is the same one-line refusal.
FILE_CASES = [(arg, kind) for arg in FILE_ARGS for kind in FILE_KINDS]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two finished runs the commands read, written once: the store syncs every record to disk, which made
    writing them the most of each of the ~670 cases' time (~0.2 s under load). Each case reads its own copy."""
    root = tmp_path_factory.mktemp("corpus-runs")
    write_run(root / "a", "a", all_right())
    write_run(root / "b", "b", all_right())
    return root


def _bases(tmp: Path, url: str, runs: Path) -> dict[str, list[str]] | dict[str, str]:
    secret_url = url.replace("http://", f"http://user:{URL_SECRET}@")
    shutil.copytree(runs, tmp / "runs")
    run_a, run_b = str(tmp / "runs" / "a"), str(tmp / "runs" / "b")
    config = tmp / "config.json"
    config.write_text(
        '{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, '
        '"num_key_value_heads": 4, "max_position_embeddings": 4096, "vocab_size": 100}'
    )
    results = str(tmp / "r")
    return {
        "run": [
            "run",
            "--endpoint",
            secret_url,
            "--api-key-env",
            KEY_ENV,
            "--family",
            "niah",
            "--lengths",
            "1k",
            "--depths",
            "50",
            "--results-dir",
            results,
            "--quiet",
            "--no-report",
        ],
        "against": [
            "run",
            "--endpoint",
            secret_url,
            "--api-key-env",
            KEY_ENV,
            "--against",
            run_a,
            "--fail-if-drop",
            "0.05",
            "--token-counter",
            "estimate",
            "--results-dir",
            results,
            "--quiet",
            "--no-report",
        ],
        "limit": [
            "limit",
            "--endpoint",
            secret_url,
            "--api-key-env",
            KEY_ENV,
            "--results-dir",
            results,
            "--min-length",
            "1k",
            "--max-length",
            "2k",
        ],
        "limit-embedded": ["limit", "--results-dir", results],
        "doctor": ["doctor", secret_url, "--api-key-env", KEY_ENV, "--no-context-check"],
        "plan": ["plan", str(config)],
        "compare": ["compare", run_a, run_b, "--results-dir", results],
        "history": ["history", str(tmp / "runs")],
        "report": ["report", run_a, "-o", str(tmp / "report.html")],
        "export": ["export", "quick", str(tmp / "exported"), "--token-counter", "estimate"],
        "prompt": ["prompt", run_a, "no-such-id"],
        "check": ["check", run_a],
        "show": ["show", run_a],
        "tasks": ["tasks"],
        "import-lm-eval": ["import-lm-eval", str(tmp / "no-outputs"), "--results-dir", results],
        "run-a": run_a,
        "run-b": run_b,
        "report-out": str(tmp / "out.html"),
        "export-out": str(tmp / "exp"),
        "results": results,
    }  # type: ignore[return-value]


def _check_refused(
    argv: list[str], code: int, out: str, err: str, engine: FakeEngine, sent: int, results: Path
) -> None:
    lines = err.strip().splitlines()
    assert code == 2, (argv, code, lines[-3:])
    assert len(lines) == 1 and "error" in lines[0] and "Traceback" not in err, (argv, lines)
    assert KEY_SECRET not in out + err and URL_SECRET not in out + err, (argv, lines)
    assert len(engine.completion_calls()) == sent, argv  # nothing sent
    assert not results.exists() or not any(results.iterdir()), f"{argv}: a run folder was left behind"


def _with(argv: list[str], flag: str, value: str) -> list[str]:
    """`argv` with `flag` given `value` (the last occurrence of a flag is the one argparse keeps)."""
    return [*argv, f"{flag}={value}"]


# The fast tier keeps each command with each kind of flag, and each bad value, once (tests/tiered.py); the file
# and output cases each bad path kind, and each argument, once.
@pytest.mark.parametrize(
    "command, flag, value",
    tiered(
        FLAG_CASES,
        [f"{c} {f}={v.strip() or repr(v)}" for c, f, v in FLAG_CASES],
        lambda case: [(case[0], FLAG_KINDS[case[:2]]), case[2]],
        unpack=True,
    ),
)
def test_a_bad_flag_value_ends_in_one_line_exit_2(
    command: str,
    flag: str,
    value: str,
    tmp_path: Path,
    runs: Path,
    engine: FakeEngine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bases = _bases(tmp_path, engine.url, runs)
    argv = _with(list(bases[command]), flag, value)
    sent = len(engine.completion_calls())
    code, out, err = ends(argv, capsys)
    _check_refused(argv, code, out, err, engine, sent, tmp_path / "r")


@pytest.mark.parametrize("command, why, flags", BOUND_CASES, ids=[f"{c} {w}" for c, w, _ in BOUND_CASES])
def test_a_value_out_of_bounds_ends_in_one_line_exit_2(
    command: str,
    why: str,
    flags: list[str],
    tmp_path: Path,
    runs: Path,
    engine: FakeEngine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*_bases(tmp_path, engine.url, runs)[command], *flags]
    sent = len(engine.completion_calls())
    code, out, err = ends(argv, capsys)
    _check_refused(argv, code, out, err, engine, sent, tmp_path / "r")
    assert "--answer-room" in err


@pytest.mark.parametrize("arg, kind", tiered(FILE_CASES, [f"{a} {k}" for a, k in FILE_CASES], list, unpack=True))
def test_a_bad_file_ends_in_one_line_exit_2(
    arg: str, kind: str, tmp_path: Path, runs: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    bases = _bases(tmp_path, engine.url, runs)
    argv = FILE_ARGS[arg](bases, _bad_file(tmp_path, kind, arg.replace(" ", "_")))  # type: ignore[arg-type]
    sent = len(engine.completion_calls())
    code, out, err = ends(argv, capsys)
    _check_refused(argv, code, out, err, engine, sent, tmp_path / "r")


@pytest.mark.parametrize("arg, kind", tiered(OUTPUT_CASES, [f"{a} {k}" for a, k in OUTPUT_CASES], list, unpack=True))
def test_a_bad_output_is_refused_before_the_command_runs(
    arg: str, kind: str, tmp_path: Path, runs: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    bases = _bases(tmp_path, engine.url, runs)
    argv = OUTPUT_ARGS[arg](bases, _bad_output(tmp_path, kind, arg.replace(" ", "_")))  # type: ignore[arg-type]
    sent = len(engine.completion_calls())
    code, out, err = ends(argv, capsys)
    _check_refused(argv, code, out, err, engine, sent, tmp_path / "r")


@pytest.mark.parametrize("arg", sorted(OUTPUT_ARGS))
def test_a_good_output_is_written(
    arg: str, tmp_path: Path, runs: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control of the output cases: a file name in a folder yet to be made is written."""
    target = tmp_path / "ci" / "out.file"
    code, _, err = ends(OUTPUT_ARGS[arg](_bases(tmp_path, engine.url, runs), str(target)), capsys)  # type: ignore[arg-type]
    assert code in (0, 1, 6), err.strip().splitlines()[-3:]  # 1 / 6: a gate's FAIL / UNDECIDED, not a refusal
    assert target.is_file() and target.stat().st_size > 0


@pytest.mark.parametrize(
    "command", ["run", "limit", "doctor", "plan", "compare", "history", "report", "export", "check", "show", "tasks"]
)
def test_the_base_arguments_of_each_command_are_good_and_print_no_secret(
    command: str, tmp_path: Path, runs: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: each command's base arguments alone succeed, so every case above fails for its bad value."""
    argv = list(_bases(tmp_path, engine.url, runs)[command])
    code, out, err = ends(argv, capsys)
    assert code == 0, (argv, err.strip().splitlines()[-3:])
    assert KEY_SECRET not in out + err and URL_SECRET not in out + err


def test_the_corpus_holds_over_500_cases() -> None:
    total = len(FLAG_CASES) + len(FILE_CASES) + len(BOUND_CASES) + len(OUTPUT_CASES)
    assert total > 600, total
