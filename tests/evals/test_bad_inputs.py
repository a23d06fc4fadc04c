"""A table of bad inputs, each of which must end at once in one line on stderr and exit code 2: no
traceback, no hang (each case has seconds, not the minutes a billion-token length or a 1e-7 depth step
used to take), no request sent to the endpoint, no run folder left behind."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from tests.evals.compare.synthetic import all_right, write_run
from tests.runners.fake_engine import FakeEngine

SECONDS = 30  # a case that takes longer has hung


@pytest.fixture(scope="module")
def engine() -> Iterator[FakeEngine]:
    with FakeEngine("vllm", answer="The number is 1234567.") as fake:
        yield fake


def _file(tmp: Path, name: str, data: str | bytes) -> str:
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


def _suite(tmp: Path, body: str) -> list[str]:
    return ["--suite", _file(tmp, "suite.yaml", body)]


NEEDLE = (
    '{"id": "a", "needle": "The key is under the mat.", "question": "Where is the key?", "answers": ["under the mat"]}'
)


def _needle(tmp: Path, **fields: object) -> str:
    """A needle file of one item, `fields` changed (None: left out)."""
    import json

    item = {**json.loads(NEEDLE), **fields}
    return _file(tmp, "n.jsonl", json.dumps({k: v for k, v in item.items() if v is not None}) + "\n")


GOOD_SUITE = "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: niah}]\n"


def _run_dir(tmp: Path, manifest: bytes | str | None, samples: bytes | None = None) -> str:
    run = tmp / "a-run"
    run.mkdir(exist_ok=True)
    if manifest is not None:
        _file(run, "manifest.json", manifest)
    if samples is not None:
        _file(run, "samples.jsonl", samples)
    return str(run)


def _folder(tmp: Path, name: str, files: dict[str, str | bytes]) -> str:
    folder = tmp / name
    folder.mkdir()
    for file, data in files.items():
        _file(folder, file, data)
    return str(folder)


def _fifo(tmp: Path, name: str) -> str:
    import os

    os.mkfifo(tmp / name)
    return str(tmp / name)


def _link(tmp: Path, name: str, target: str) -> str:
    (tmp / name).symlink_to(target)
    return str(tmp / name)


def _recipe(tmp: Path, haystack: str, params: dict[str, object] | None = None, family: str = "niah") -> str:
    import json

    return _file(
        tmp,
        "recipe.json",
        json.dumps({"family": family, "params": params or {}, "haystack": haystack, "context_tokens": 1024}),
    )


def _linked_dir(tmp: Path) -> list[str]:
    """`prompt` of a dir: haystack in the allowed folder, one of whose files is a link to a file outside it."""
    hay = _folder(tmp, "hay", {"essay.txt": "Plain prose of the haystack. " * 400})
    _link(Path(hay), "notes.txt", "/etc/passwd")
    return ["prompt", _recipe(tmp, "dir:" + hay), "--allow-path", hay]


def _against(tmp: Path, flag: str, target: str) -> list[str]:
    """A paired run against a finished baseline, `flag` given `target` (the counter the baseline's)."""
    base = write_run(tmp / "baseline", "a", all_right())
    return ["--against", str(base), "--fail-if-drop", "0.05", "--token-counter", "estimate", flag, target]


def _compare(tmp: Path) -> list[str]:
    a, b = write_run(tmp / "runs" / "a", "a", all_right()), write_run(tmp / "runs" / "b", "b", all_right())
    return ["compare", str(a), str(b), "--results-dir", str(tmp / "r")]


Case = Callable[[Path], list[str]]
RUN: dict[str, Case] = {  # `run` flags, sent with --endpoint FAKE --results-dir R (see _argv)
    # lengths
    "length 1e9 tokens": lambda t: ["--family", "niah", "--lengths", "1000000000"],
    "length 17M": lambda t: ["--family", "niah", "--lengths", "17M"],
    "length 1e9 written 1e9": lambda t: ["--family", "niah", "--lengths", "1e9"],
    "length 0": lambda t: ["--family", "niah", "--lengths", "0"],
    "length negative": lambda t: ["--family", "niah", "--lengths=-4k"],
    "length words": lambda t: ["--family", "niah", "--lengths", "four"],
    "length only a comma": lambda t: ["--family", "niah", "--lengths", ","],
    "length nan": lambda t: ["--family", "niah", "--lengths", "nan"],
    "length inf": lambda t: ["--family", "niah", "--lengths", "inf"],
    "length 20 digits": lambda t: ["--family", "niah", "--lengths", "99999999999999999999"],
    "length two dots": lambda t: ["--family", "niah", "--lengths", "1.5.2k"],
    "length unit only": lambda t: ["--family", "niah", "--lengths", "k"],
    "length too small for the task": lambda t: ["--family", "niah", "--lengths", "16"],
    "length 1e9 in a suite's task": lambda t: _suite(
        t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: niah, lengths: [1000000000]}]\n"
    ),
    # depths
    "depth step 1e-7": lambda t: ["--family", "niah", "--depths", "0:100:1e-7"],
    "depth stop nan": lambda t: ["--family", "niah", "--depths", "0:nan:1"],
    "depth start nan": lambda t: ["--family", "niah", "--depths", "nan:100:1"],
    # a grid value given twice: one sample would be sent and recorded twice
    "depths 50,50": lambda t: ["--family", "niah", "--depths", "50,50"],
    "depths 50,50.0": lambda t: ["--family", "niah", "--depths", "50,50.0"],
    "depth range rounding to one depth": lambda t: ["--family", "niah", "--depths", "0:0.00001:0.0000001"],
    "lengths 1k,1k": lambda t: ["--family", "niah", "--lengths", "1k,1k", "--depths", "50"],
    "lengths 1k,1024": lambda t: ["--family", "niah", "--lengths", "1k,1024", "--depths", "50"],
    "suite lengths [1k, 1024]": lambda t: _suite(
        t, "name: s\nlengths: [1k, 1024]\ndepths: [50]\ntasks: [{family: niah}]\n"
    ),
    "suite depths [50, 50]": lambda t: _suite(t, "name: s\nlengths: [1k]\ndepths: [50, 50]\ntasks: [{family: niah}]\n"),
    "suite task lengths twice": lambda t: _suite(
        t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: niah, lengths: [2k, 2048]}]\n"
    ),
    # a length that is not a whole number of tokens
    "suite lengths [1024.7]": lambda t: _suite(
        t, "name: s\nlengths: [1024.7]\ndepths: [50]\ntasks: [{family: niah}]\n"
    ),
    "length 1024.7": lambda t: ["--family", "niah", "--lengths", "1024.7"],
    "length 1.3k": lambda t: ["--family", "niah", "--lengths", "1.3k"],
    # prefill rates no server has: a deadline that never ends, or only the base
    "prefill rate 1e-300": lambda t: ["--family", "niah", "--prefill-rate", "1e-300"],
    "prefill rate 0.001": lambda t: ["--family", "niah", "--prefill-rate", "0.001"],
    "prefill rate 0": lambda t: ["--family", "niah", "--prefill-rate", "0"],
    "prefill rate negative": lambda t: ["--family", "niah", "--prefill-rate=-5000"],
    "prefill rate 1e12": lambda t: ["--family", "niah", "--prefill-rate", "1e12"],
    "prefill rate 0.001 in a dry run": lambda t: ["--family", "niah", "--prefill-rate", "0.001", "--dry-run"],
    # a session header name no router reads
    "session header 10,000 characters": lambda t: ["--family", "niah", "--session-header", "X" * 10_000],
    "session header 129 characters": lambda t: ["--family", "niah", "--session-header", "X" * 129],
    # a results folder where no folder can be made: exit 2 now, not 4 when the run starts
    "results dir /proc/self": lambda t: ["--family", "niah", "--results-dir", "/proc/self"],
    "results dir under /proc/self": lambda t: ["--family", "niah", "--results-dir", "/proc/self/ctxprobe-results"],
    "depth step nan": lambda t: ["--family", "niah", "--depths", "0:100:nan"],
    "depth stop inf": lambda t: ["--family", "niah", "--depths", "0:inf:1"],
    "depth only a comma": lambda t: ["--family", "niah", "--depths", ","],
    "depth empty": lambda t: ["--family", "niah", "--depths", " "],
    "depth 101": lambda t: ["--family", "niah", "--depths", "101"],
    "depth negative": lambda t: ["--family", "niah", "--depths", "-1"],
    "depth nan": lambda t: ["--family", "niah", "--depths", "nan"],
    "depth inf": lambda t: ["--family", "niah", "--depths", "inf"],
    "depth step 0": lambda t: ["--family", "niah", "--depths", "0:100:0"],
    "depth step negative": lambda t: ["--family", "niah", "--depths", "0:100:-10"],
    "depth range backwards": lambda t: ["--family", "niah", "--depths", "100:0:10"],
    "depth range two parts": lambda t: ["--family", "niah", "--depths", "0:100"],
    "depth range four parts": lambda t: ["--family", "niah", "--depths", "0:100:10:5"],
    "depth range words": lambda t: ["--family", "niah", "--depths", "a:b:c"],
    "depth words": lambda t: ["--family", "niah", "--depths", "deep,shallow"],
    "depth range past 100": lambda t: ["--family", "niah", "--depths", "50:150:10"],
    "depth step 0.01": lambda t: ["--family", "niah", "--depths", "0:100:0.01"],
    # seeds, samples, suite size
    "seed negative": lambda t: ["--family", "niah", "--seed", "-1"],
    "seed 2^32": lambda t: ["--family", "niah", "--seed", "4294967296"],
    "seed 1e3": lambda t: ["--family", "niah", "--seed", "1e3"],
    "seed words": lambda t: ["--family", "niah", "--seed", "tomorrow"],
    "samples 0": lambda t: ["--family", "niah", "--samples", "0"],
    "samples negative": lambda t: ["--family", "niah", "--samples", "-3"],
    "samples 200000": lambda t: ["--family", "niah", "--samples", "200000", "--lengths", "1k", "--depths", "50"],
    "suite of 1,010,000 samples": lambda t: [
        "--family",
        "niah",
        "--lengths",
        "1k,2k",
        "--depths",
        "0:100:0.1",
        "--samples",
        "505",
    ],
    "suite file of 1,010,000 samples": lambda t: _suite(
        t, "name: big\nsamples: 1010\nlengths: [1k]\ndepths: 0:100:0.1\ntasks: [{family: niah}]\n"
    ),
    # timeouts and other numbers
    "timeout inf": lambda t: ["--family", "niah", "--timeout", "inf"],
    "timeout nan": lambda t: ["--family", "niah", "--timeout", "nan"],
    "timeout 0": lambda t: ["--family", "niah", "--timeout", "0"],
    "timeout negative": lambda t: ["--family", "niah", "--timeout", "-5"],
    "timeout a year": lambda t: ["--family", "niah", "--timeout", "31536000"],
    "timeout words": lambda t: ["--family", "niah", "--timeout", "soon"],
    "timeout per 1k inf": lambda t: ["--family", "niah", "--timeout-per-1k", "inf"],
    "timeout per 1k negative": lambda t: ["--family", "niah", "--timeout-per-1k", "-1"],
    "concurrency 0": lambda t: ["--family", "niah", "--concurrency", "0"],
    "concurrency a million": lambda t: ["--family", "niah", "--concurrency", "1000000"],
    "concurrency words": lambda t: ["--family", "niah", "--concurrency", "many"],
    "retries negative": lambda t: ["--family", "niah", "--retries", "-1"],
    "retries 1000": lambda t: ["--family", "niah", "--retries", "1000"],
    "label 300 characters": lambda t: ["--family", "niah", "--label", "x" * 300],
    # endpoints (replacing the good one)
    "endpoint ipv6 unclosed": lambda t: ["--family", "niah", "--endpoint", "http://[::1"],
    "endpoint no colon": lambda t: ["--family", "niah", "--endpoint", "http//gpu-node:8000"],
    "endpoint ftp": lambda t: ["--family", "niah", "--endpoint", "ftp://gpu-node:8000"],
    "endpoint without scheme": lambda t: ["--family", "niah", "--endpoint", "gpu-node:8000"],
    "endpoint without host": lambda t: ["--family", "niah", "--endpoint", "http://"],
    "endpoint port too big": lambda t: ["--family", "niah", "--endpoint", "http://gpu-node:99999"],
    "endpoint port words": lambda t: ["--family", "niah", "--endpoint", "http://gpu-node:http"],
    "endpoint port 0": lambda t: ["--family", "niah", "--endpoint", "http://gpu-node:0"],
    "endpoint empty": lambda t: ["--family", "niah", "--endpoint", ""],
    "endpoint spaces": lambda t: ["--family", "niah", "--endpoint", "not a url"],
    # token counters
    "counter unknown kind": lambda t: ["--family", "niah", "--token-counter", "magic"],
    "counter local without path": lambda t: ["--family", "niah", "--token-counter", "local:"],
    "counter missing gguf": lambda t: ["--family", "niah", "--token-counter", "local:/no/such.gguf"],
    "counter gguf of garbage": lambda t: [
        "--family",
        "niah",
        "--token-counter",
        "local:" + _file(t, "bad.gguf", b"not a gguf at all"),
    ],
    "counter empty gguf": lambda t: ["--family", "niah", "--token-counter", "local:" + _file(t, "empty.gguf", b"")],
    "counter gguf header only": lambda t: [
        "--family",
        "niah",
        "--token-counter",
        "local:" + _file(t, "head.gguf", b"GGUF\x03\x00\x00\x00"),
    ],
    "counter text file as tokenizer": lambda t: [
        "--family",
        "niah",
        "--token-counter",
        "local:" + _file(t, "notes.txt", "hello"),
    ],
    "counter binary file as tokenizer": lambda t: [
        "--family",
        "niah",
        "--token-counter",
        "local:" + _file(t, "blob.bin", b"\x00\xff\xfe" * 100),
    ],
    "counter json that is no tokenizer": lambda t: [
        "--family",
        "niah",
        "--token-counter",
        "local:" + _file(t, "tokenizer.json", '{"a": 1}'),
    ],
    "counter folder without tokenizer": lambda t: ["--family", "niah", "--token-counter", f"local:{t}"],
    "counter estimate 0": lambda t: ["--family", "niah", "--token-counter", "estimate:0"],
    "counter estimate negative": lambda t: ["--family", "niah", "--token-counter", "estimate:-2"],
    "counter estimate words": lambda t: ["--family", "niah", "--token-counter", "estimate:four"],
    # what to run
    "family unknown": lambda t: ["--family", "nosuch"],
    "params unknown value": lambda t: ["--family", "niah", "--params", "variant=nosuch"],
    "params unknown name": lambda t: ["--family", "niah", "--params", "colour=red"],
    "params without =": lambda t: ["--family", "niah", "--params", "variant"],
    "params without family": lambda t: ["--params", "variant=single"],
    "suite and family": lambda t: ["--suite", "quick", "--family", "niah"],
    "suite unknown": lambda t: ["--suite", "weekly"],
    "suite file missing": lambda t: ["--suite", "/no/such/suite.yaml"],
    "haystack unknown": lambda t: ["--family", "niah", "--haystack", "poetry"],
    "haystack file missing": lambda t: ["--family", "niah", "--haystack", "file:/no/such.txt"],
    "haystack dir missing": lambda t: ["--family", "niah", "--haystack", "dir:/no/such/folder"],
    "template unknown": lambda t: ["--family", "niah", "--templates", "fancy"],
    "mode unknown": lambda t: ["--family", "niah", "--mode", "instruct"],
    "order unknown": lambda t: ["--family", "niah", "--order", "random"],
    "unknown flag": lambda t: ["--family", "niah", "--frobnicate"],
    # suite files
    "suite lengths []": lambda t: _suite(t, "name: s\nlengths: []\ndepths: [50]\ntasks: [{family: niah}]\n"),
    "suite depths []": lambda t: _suite(t, "name: s\nlengths: [1k]\ndepths: []\ntasks: [{family: niah}]\n"),
    "suite task lengths []": lambda t: _suite(
        t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: niah, lengths: []}]\n"
    ),
    "suite task depths []": lambda t: _suite(
        t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: niah, depths: []}]\n"
    ),
    "suite tasks []": lambda t: _suite(t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: []\n"),
    "suite depths .nan": lambda t: _suite(t, "name: s\nlengths: [1k]\ndepths: [.nan]\ntasks: [{family: niah}]\n"),
    "suite depths nan range": lambda t: _suite(
        t, "name: s\nlengths: [1k]\ndepths: '0:nan:1'\ntasks: [{family: niah}]\n"
    ),
    "suite depths a mapping": lambda t: _suite(t, "name: s\nlengths: [1k]\ndepths: {a: 1}\ntasks: [{family: niah}]\n"),
    "suite lengths a number": lambda t: _suite(t, "name: s\nlengths: 5\ndepths: [50]\ntasks: [{family: niah}]\n"),
    "suite seed negative": lambda t: _suite(t, GOOD_SUITE + "seed: -1\n"),
    "suite samples 0": lambda t: _suite(t, GOOD_SUITE + "samples: 0\n"),
    "suite unknown key": lambda t: _suite(t, GOOD_SUITE + "colour: red\n"),
    "suite without name": lambda t: _suite(t, "lengths: [1k]\ndepths: [50]\ntasks: [{family: niah}]\n"),
    "suite not a mapping": lambda t: _suite(t, "- a\n- b\n"),
    "suite invalid yaml": lambda t: _suite(t, "name: [s\n"),
    "suite binary": lambda t: ["--suite", _file(t, "suite.yaml", b"\xff\xfe\x00\x01" * 50)],
    "suite empty": lambda t: _suite(t, ""),
    "suite unknown family": lambda t: _suite(t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: nope}]\n"),
    # needle files
    "needles missing file": lambda t: ["--needles", "/no/such/needles.jsonl"],
    "needles a folder": lambda t: ["--needles", str(t)],
    "needles empty": lambda t: ["--needles", _file(t, "n.jsonl", "")],
    "needles blank lines": lambda t: ["--needles", _file(t, "n.jsonl", "\n\n  \n")],
    "needles not utf-8": lambda t: ["--needles", _file(t, "n.jsonl", b'\xff\xfe{"needle": 1}\n')],
    "needles invalid json": lambda t: ["--needles", _file(t, "n.jsonl", NEEDLE + '\n{"needle": \n')],
    "needles a list of numbers": lambda t: ["--needles", _file(t, "n.json", "[1, 2]")],
    "needles no question": lambda t: ["--needles", _needle(t, question=None)],
    "needles empty question": lambda t: ["--needles", _needle(t, question="  ")],
    "needles no needle": lambda t: ["--needles", _needle(t, needle=None)],
    "needles needle and needles": lambda t: ["--needles", _needle(t, needles=["b."])],
    "needles empty needle": lambda t: ["--needles", _needle(t, needle=" ")],
    "needles empty needles list": lambda t: ["--needles", _needle(t, needle=None, needles=[])],
    "needles no answers": lambda t: ["--needles", _needle(t, answers=None)],
    "needles empty answers": lambda t: ["--needles", _needle(t, answers=[])],
    "needles empty answer": lambda t: ["--needles", _needle(t, answers=[""])],
    "needles bad kind": lambda t: ["--needles", _needle(t, kind="fuzzy")],
    "needles number kind not a number": lambda t: ["--needles", _needle(t, kind="number")],
    "needles unknown field": lambda t: ["--needles", _needle(t, answr="x")],
    "needles duplicate id": lambda t: ["--needles", _file(t, "n.jsonl", NEEDLE + "\n" + NEEDLE + "\n")],
    "needles zero max tokens": lambda t: ["--needles", _needle(t, max_tokens=0)],
    "needles too long for the length": lambda t: [
        "--needles",
        _needle(t, needle="A long fact. " * 400 + "The key is under the mat."),
        "--lengths",
        "1k",
    ],
    "needles nested on a one-cell grid": lambda t: [
        "--needles",
        _needle(t),
        "--lengths",
        "1k",
        "--depths",
        "50",
        "--layout",
        "nested",
    ],
    "nested suite with a task past its chain's capacity": lambda t: _suite(
        t,
        "name: s\nlayout: nested\nlengths: [1k, 2k, 4k]\ndepths: [0, 50, 100]\n"
        "tasks: [{family: niah}, {family: multihop, params: {kind: kinship}}]\n",
    ),
    "nested latent past its chain's capacity": lambda t: [
        "--family",
        "latent",
        "--params",
        "kind=element",
        "--lengths",
        "1k",
        "--depths",
        "0:100:2",
        "--layout",
        "nested",
    ],
    "needles a NUL in the needle": lambda t: ["--needles", _needle(t, needle="The key is under the mat.\u0000")],
    "needles a control character in the question": lambda t: ["--needles", _needle(t, question="Where\u001b[2J?")],
    "needles an answer the needle never states": lambda t: ["--needles", _needle(t, answers=["in the drawer"])],
    "needles a set member the needle never states": lambda t: [
        "--needles",
        _needle(t, needle="The garden grows tulips and roses.", answers=["tulips", "lilies"], kind="set"),
    ],
    "needles a number the needle never states": lambda t: [
        "--needles",
        _needle(t, needle="The vault code is 4417.", answers=["4471"], kind="number"),
    ],
    "needles suite task without items": lambda t: _suite(
        t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: needles}]\n"
    ),
    "needles suite file missing": lambda t: _suite(
        t, "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: needles, params: {file: /no/n.jsonl}}]\n"
    ),
    "judge endpoint not a url": lambda t: ["--needles", _needle(t), "--judge-endpoint", "judge-host:8000"],
    "judge endpoint bad port": lambda t: ["--needles", _needle(t), "--judge-endpoint", "http://h:99999"],
    # resume
    "resume missing folder": lambda t: ["--resume", "/no/such/run"],
    "resume folder without manifest": lambda t: ["--resume", _run_dir(t, None)],
    "resume manifest {}": lambda t: ["--resume", _run_dir(t, "{}")],
    "resume manifest a list": lambda t: ["--resume", _run_dir(t, "[1]")],
    "resume manifest binary": lambda t: ["--resume", _run_dir(t, b"\xff\xfe\x00garbage")],
    "resume manifest torn": lambda t: ["--resume", _run_dir(t, '{"schema_version": 2, "suite": {"na')],
    # where results go
    "results dir under a file": lambda t: ["--family", "niah", "--results-dir", _file(t, "plain", "x") + "/runs"],
    # foreign --include modules: whatever they raise, or exit(), is one line naming the module
    "include raises": lambda t: ["--family", "niah", "--include", _file(t, "raises.py", "raise ValueError('boom')\n")],
    "include recurses": lambda t: [
        "--family",
        "niah",
        "--include",
        _file(t, "recurses.py", "def f():\n    return f()\n\nf()\n"),
    ],
    "include exit(0)": lambda t: ["--family", "niah", "--include", _file(t, "exits.py", "exit(0)\n")],
    "include sys.exit(0)": lambda t: [
        "--family",
        "niah",
        "--include",
        _file(t, "sysexit.py", "import sys\nsys.exit(0)\n"),
    ],
    "include KeyError in a folder": lambda t: [
        "--family",
        "niah",
        "--include",
        _folder(t, "mods", {"a.py": "X = 1\n", "b.py": "{}['missing']\n"}),
    ],
    # qa and mrcr data files
    "qa empty parquet": lambda t: ["--family", "qa", "--qa", "hf:" + _file(t, "e.parquet", b"")],
    "qa torn parquet": lambda t: ["--family", "qa", "--qa", "hf:" + _file(t, "b.parquet", b"PAR1garbagePAR1")],
    "qa fifo parquet": lambda t: ["--family", "qa", "--qa", "hf:" + _fifo(t, "q.parquet")],
    "qa fifo json": lambda t: ["--family", "qa", "--qa", "hf:" + _fifo(t, "q.json")],
    "qa folder of an empty parquet": lambda t: ["--family", "qa", "--qa", "hf:" + _folder(t, "qa", {"x.parquet": b""})],
    "qa jsonl of numbers": lambda t: ["--family", "qa", "--qa", "hf:" + _file(t, "q.jsonl", "1\n2\n")],
    "mrcr fifo parquet": lambda t: ["--mrcr", "hf:" + _fifo(t, "m.parquet")],
    "mrcr torn parquet": lambda t: ["--mrcr", "hf:" + _file(t, "m.parquet", b"PAR1\x00\x01PAR1")],
    # results folders the filesystem refuses
    "results dir name 300 characters": lambda t: ["--family", "niah", "--results-dir", str(t / ("x" * 300))],
    "results dir path past PATH_MAX": lambda t: [
        "--family",
        "niah",
        "--results-dir",
        str(t / "/".join(["y" * 250] * 20)),
    ],
    # binary haystacks that decode as UTF-8
    "haystack file of NUL bytes": lambda t: [
        "--family",
        "niah",
        "--haystack",
        "file:" + _file(t, "nul.txt", b"\x00" * 4000),
    ],
    "haystack file of control bytes": lambda t: [
        "--family",
        "niah",
        "--haystack",
        "file:" + _file(t, "ctl.txt", bytes(range(1, 9)) * 500),
    ],
    "haystack dir of a binary .txt": lambda t: [
        "--family",
        "niah",
        "--haystack",
        "dir:" + _folder(t, "hay", {"a.txt": b"\x00\x01" * 2000}),
    ],
    # duplicate keys
    "params key twice": lambda t: ["--family", "niah", "--params", "variant=single,variant=multikey"],
    "params mapping key twice": lambda t: ["--family", "niah", "--params", "variant={a: 1, a: 2}"],
    "params value bad yaml": lambda t: ["--family", "niah", "--params", "variant=[single"],
    "suite key twice": lambda t: _suite(
        t, "name: s\nlengths: [1k]\nlengths: [128k]\ndepths: [50]\ntasks: [{family: niah}]\n"
    ),
    "suite task key twice": lambda t: _suite(
        t,
        "name: s\nlengths: [1k]\ndepths: [50]\ntasks: [{family: niah, params: {variant: single, variant: multikey}}]\n",
    ),
    # GPU fit numbers, checked where given (a dry run without --config never reads them)
    "util 2": lambda t: [
        "--family",
        "niah",
        "--dry-run",
        "--prefill-rate",
        "1000",
        "--gpus",
        "1",
        "--gpu-mem",
        "80GB",
        "--util",
        "2",
        "--weights",
        "1GB",
    ],
    "util nan": lambda t: ["--family", "niah", "--dry-run", "--prefill-rate", "1000", "--util", "nan"],
    "util 2 without dry run": lambda t: ["--family", "niah", "--util", "2"],
    "gpu mem abcGB": lambda t: [
        "--family",
        "niah",
        "--dry-run",
        "--prefill-rate",
        "1000",
        "--gpus",
        "1",
        "--gpu-mem",
        "abcGB",
        "--weights",
        "1GB",
    ],
    "gpu mem 0GB": lambda t: ["--family", "niah", "--dry-run", "--prefill-rate", "1000", "--gpu-mem", "0GB"],
    "weights words": lambda t: ["--family", "niah", "--dry-run", "--prefill-rate", "1000", "--weights", "heavy"],
    # the gate's flags without a baseline, and its outputs checked before the run
    "undecided without against": lambda t: ["--family", "niah", "--undecided", "pass"],
    "undecided exit without against": lambda t: ["--family", "niah", "--undecided", "exit"],
    "counter bogus": lambda t: ["--family", "niah", "--token-counter", "bogus"],
    "junit is a folder": lambda t: _against(t, "--junit", str(t)),
    "summary md is a folder": lambda t: _against(t, "--summary-md", str(t)),
    "junit under a file": lambda t: _against(t, "--junit", _file(t, "plain", "x") + "/gate.xml"),
    "summary md is a fifo": lambda t: _against(t, "--summary-md", _fifo(t, "gate.md")),
    # dry run
    "dry run length 1e9": lambda t: ["--family", "niah", "--lengths", "1000000000", "--dry-run"],
    "dry run depth step 1e-7": lambda t: ["--family", "niah", "--depths", "0:100:1e-7", "--dry-run"],
    "dry run prefill rate inf": lambda t: ["--family", "niah", "--dry-run", "--prefill-rate", "inf"],
    "dry run prefill rate 0": lambda t: ["--family", "niah", "--dry-run", "--prefill-rate", "0"],
    "dry run gpus 0": lambda t: ["--family", "niah", "--dry-run", "--prefill-rate", "1000", "--gpus", "0"],
    "dry run config missing": lambda t: [
        "--family",
        "niah",
        "--dry-run",
        "--prefill-rate",
        "1000",
        "--config",
        "/no/config.json",
        "--gpus",
        "1",
        "--gpu-mem",
        "80GB",
        "--weights",
        "1GB",
    ],
}

OTHER: dict[str, Case] = {  # whole command lines
    "limit min above max": lambda t: ["limit", "--min-length", "64k", "--max-length", "4k"],
    "limit min length 0": lambda t: ["limit", "--min-length", "0"],
    "limit max length 1e9": lambda t: ["limit", "--max-length", "1000000000"],
    "limit advertised words": lambda t: ["limit", "--advertised", "huge"],
    "limit min-accuracy 2": lambda t: ["limit", "--min-accuracy", "2"],
    "limit confidence 0.3": lambda t: ["limit", "--confidence", "0.3"],
    "limit ratio 1": lambda t: ["limit", "--ratio", "1"],
    "limit endpoint ipv6 unclosed": lambda t: ["limit", "--endpoint", "http://[::1"],
    "limit timeout inf": lambda t: ["limit", "--timeout", "inf"],
    "limit label 300 characters": lambda t: ["limit", "--label", "y" * 300],
    "doctor ipv6 unclosed": lambda t: ["doctor", "http://[::1"],
    "doctor not a url": lambda t: ["doctor", "gpu-node"],
    "doctor ftp": lambda t: ["doctor", "ftp://gpu-node:21"],
    "report output is a folder": lambda t: ["report", str(write_run(t / "run", "a", all_right())), "-o", str(t)],
    "report missing folder": lambda t: ["report", "/no/such/run"],
    "report of a file": lambda t: ["report", _file(t, "x.txt", "x")],
    "import-lm-eval binary file": lambda t: [
        "import-lm-eval",
        _file(t, "samples_x_2026.jsonl", b"\x89PNG\r\n\x1a\n\xff" * 20),
        "--results-dir",
        str(t / "r"),
    ],
    "import-lm-eval missing": lambda t: ["import-lm-eval", "/no/such/out", "--results-dir", str(t / "r")],
    "import-lm-eval json not a log": lambda t: [
        "import-lm-eval",
        _file(t, "samples_x_2026.jsonl", '{"a": 1}\n'),
        "--results-dir",
        str(t / "r"),
    ],
    "import-lm-eval doc id words": lambda t: [
        "import-lm-eval",
        _file(
            t,
            "samples_x_2026.jsonl",
            '{"doc_id": "x", "doc": {}, "arguments": {"gen_args_0": {"arg_0": "p"}}, '
            '"resps": [["a"]], "prompt_hash": "h"}\n',
        ),
        "--results-dir",
        str(t / "r"),
    ],
    "import-lm-eval empty folder": lambda t: ["import-lm-eval", str(t), "--results-dir", str(t / "r")],
    "compare missing": lambda t: ["compare", "/no/a", "/no/b"],
    "compare alpha 2": lambda t: [
        "compare",
        str(write_run(t / "a", "a", all_right())),
        str(write_run(t / "b", "b", all_right())),
        "--alpha",
        "2",
    ],
    "compare margin 1.5": lambda t: [
        "compare",
        str(write_run(t / "a", "a", all_right())),
        str(write_run(t / "b", "b", all_right())),
        "--fail-if-drop",
        "1.5",
    ],
    "compare margin negative": lambda t: [
        "compare",
        str(write_run(t / "a", "a", all_right())),
        str(write_run(t / "b", "b", all_right())),
        "--fail-if-drop",
        "-0.1",
    ],
    "history missing": lambda t: ["history", "/no/such/results"],
    "history alpha 0": lambda t: ["history", str(t), "--alpha", "0"],
    "history of a file": lambda t: ["history", _file(t, "x.txt", "x")],
    "history with no runs": lambda t: ["history", str(t)],
    "show missing": lambda t: ["show", "/no/such/run"],
    "show a file": lambda t: ["show", _file(t, "x.txt", "x")],
    "show manifest binary": lambda t: ["show", _run_dir(t, b"\x00\xff" * 10)],
    "show manifest not a run": lambda t: ["show", _run_dir(t, '{"status": "finished"}')],
    "check missing": lambda t: ["check", "/no/such/run"],
    "prompt missing run": lambda t: ["prompt", "/no/such/run", "abc"],
    "prompt unknown sample": lambda t: ["prompt", str(write_run(t / "run", "a", all_right())), "nosuchid"],
    "prompt recipe length 1e9": lambda t: [
        "prompt",
        _file(t, "r.json", '{"family": "niah", "context_tokens": 1000000000}'),
    ],
    "export length 1e9": lambda t: ["export", "quick", str(t / "out"), "--lengths", "1000000000"],
    "export unknown suite": lambda t: ["export", "weekly", str(t / "out")],
    "export unknown format": lambda t: ["export", "quick", str(t / "out"), "--format", "csv"],
    "export base url ftp": lambda t: [
        "export",
        "quick",
        str(t / "r" / "out"),
        "--token-counter",
        "estimate",
        "--base-url",
        "ftp://x",
    ],
    "export base url without scheme": lambda t: [
        "export",
        "quick",
        str(t / "r" / "out"),
        "--token-counter",
        "estimate",
        "--base-url",
        "gpu-node:8000",
    ],
    "prompt file:/etc/passwd": lambda t: ["prompt", _recipe(t, "file:/etc/passwd")],
    "prompt dir:/etc": lambda t: ["prompt", _recipe(t, "dir:/etc")],
    "prompt file outside the allowed folder": lambda t: [
        "prompt",
        _recipe(t, "file:/etc/passwd"),
        "--allow-path",
        str(t),
    ],
    "prompt dir: haystack holding a link out of the allowed folder": lambda t: _linked_dir(t),
    "prompt link out of the allowed folder": lambda t: [
        "prompt",
        _recipe(t, "file:" + _link(t, "hay.txt", "/etc/passwd")),
        "--allow-path",
        str(t),
    ],
    "prompt hf: dataset outside": lambda t: [
        "prompt",
        _recipe(t, "prose", params={"dataset": "hf:/etc/passwd"}, family="qa"),
    ],
    "prompt allow path not a folder": lambda t: ["prompt", _recipe(t, "prose"), "--allow-path", "/no/such/folder"],
    "prompt token counter bogus": lambda t: ["prompt", _recipe(t, "prose"), "--token-counter", "bogus"],
    "compare junit is a folder": lambda t: [*_compare(t), "--fail-if-drop", "0.05", "--junit", str(t)],
    "compare summary md is a folder": lambda t: [*_compare(t), "--fail-if-drop", "0.05", "--summary-md", str(t)],
    "compare junit under a file": lambda t: [*_compare(t), "--junit", _file(t, "plain", "x") + "/gate.xml"],
    "compare results dir name 300 characters": lambda t: [*_compare(t)[:3], "--results-dir", str(t / ("c" * 300))],
    "limit results dir name 300 characters": lambda t: ["limit", "--results-dir", str(t / ("l" * 300))],
    "plan util 2": lambda t: ["plan", _file(t, "config.json", "{}"), "--util", "2"],
    "plan util nan": lambda t: ["plan", _file(t, "config.json", "{}"), "--util", "nan"],
    "plan gpu mem abcGB": lambda t: ["plan", _file(t, "config.json", "{}"), "--gpu-mem", "abcGB"],
    "plan missing config": lambda t: ["plan", "/no/config.json"],
    "plan binary config": lambda t: ["plan", _file(t, "config.json", b"\xff\xfe\x00")],
    "plan gpus 0": lambda t: ["plan", _file(t, "config.json", "{}"), "--gpus", "0"],
}


class Hung(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise Hung(f"no answer in {SECONDS} s")


def _argv(name: str, tmp: Path, url: str) -> list[str]:
    if name in RUN:
        flags = RUN[name](tmp)
        endpoint = [] if "--endpoint" in flags or "--resume" in flags else ["--endpoint", url]
        results = [] if "--results-dir" in flags or "--resume" in flags else ["--results-dir", str(tmp / "r")]
        return ["run", *flags, *endpoint, *results, "--quiet"]
    return OTHER[name](tmp)


@pytest.mark.parametrize("name", sorted(RUN) + sorted(OTHER))
def test_bad_input_ends_in_one_line_exit_2_and_leaves_nothing(
    name: str, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(name, tmp_path, engine.url)
    sent = len(engine.completion_calls())
    capsys.readouterr()
    before = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS)
    try:
        with pytest.raises(SystemExit) if _argparse_error(argv) else _no_exit() as ended:
            code = main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    code = ended.value.code if ended is not None and hasattr(ended, "value") else code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and "error" in err[0], err
    assert len(engine.completion_calls()) == sent  # nothing sent
    results = tmp_path / "r"
    assert not results.exists() or not any(results.iterdir()), "a run folder was left behind"


@pytest.mark.parametrize(
    "body",
    ["while True:\n    pass\n", "import time\ntime.sleep(3600)\n", "import threading\nthreading.Event().wait()\n"],
)
def test_an_include_that_never_finishes_importing_ends_at_its_deadline(
    body: str, tmp_path: Path, engine: FakeEngine, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from ctxprobe.tasks import family_index

    monkeypatch.setattr(family_index, "INCLUDE_DEADLINE_S", 1.0)
    module = _file(tmp_path, "hangs.py", body)
    sent = len(engine.completion_calls())
    capsys.readouterr()
    started = time.monotonic()
    code = main(
        [
            "run",
            "--include",
            module,
            "--family",
            "niah",
            "--endpoint",
            engine.url,
            "--results-dir",
            str(tmp_path / "r"),
            "--quiet",
        ]
    )
    took = time.monotonic() - started
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert module in err[0] and "still importing after 1 s" in err[0], err
    assert took < 1.0 + SECONDS / 3
    assert len(engine.completion_calls()) == sent and not (tmp_path / "r").exists()


REFUSED_GATES: dict[str, Case] = {  # the gate refuses to judge: one line, exit 5 (GateRefused), no folder
    "compare metric p_answer without probabilities": lambda t: [*_compare(t), "--metric", "p_answer"],
    "compare metric p_answer gate without probabilities": lambda t: [
        *_compare(t),
        "--metric",
        "p_answer",
        "--fail-if-drop",
        "0.05",
    ],
    "compare metric kl without log-probabilities": lambda t: [*_compare(t), "--metric", "kl"],
}


@pytest.mark.parametrize("name", sorted(REFUSED_GATES))
def test_a_gate_that_cannot_judge_ends_in_one_line_exit_5_and_leaves_nothing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = main(REFUSED_GATES[name](tmp_path))
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert code == 5, err
    assert len(err) == 1 and "error" in err[0] and "cannot judge" in err[0], err
    assert "rows that differ" not in out.out  # no table that reads as "no difference"
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_a_prompt_recipe_reads_a_file_inside_an_allowed_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control of the prompt cases: the same recipe builds once its folder is allowed (and not before)."""
    hay = tmp_path / "hay"
    hay.mkdir()
    (hay / "essay.txt").write_text("The quick brown fox jumps over the lazy dog. " * 400)
    recipe = _recipe(tmp_path, f"file:{hay / 'essay.txt'}")
    capsys.readouterr()
    assert main(["prompt", recipe]) == 2
    assert "--allow-path" in capsys.readouterr().err
    assert main(["prompt", recipe, "--allow-path", str(hay)]) == 0
    assert "quick brown fox" in capsys.readouterr().out
    (hay / "more.txt").symlink_to(hay / "essay.txt")  # a link that stays inside the folder is read
    assert main(["prompt", _recipe(tmp_path, f"dir:{hay}"), "--allow-path", str(hay)]) == 0
    assert "quick brown fox" in capsys.readouterr().out


def test_the_table_holds_more_than_the_attacks_110_inputs() -> None:
    assert len(RUN) + len(OTHER) > 110


def _finite(text: str) -> float:
    """A number flag's value as argparse takes it: NaN and infinities refused like words."""
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(text)
    return value


def _argparse_error(argv: list[str]) -> bool:
    """Cases argparse itself refuses (a flag's type or choices): it exits 2 with one line."""
    typed = {
        "--seed": int,
        "--samples": int,
        "--concurrency": int,
        "--retries": int,
        "--timeout": _finite,
        "--timeout-per-1k": _finite,
        "--threshold": _finite,
        "--min-accuracy": _finite,
        "--confidence": _finite,
        "--ratio": _finite,
        "--alpha": _finite,
        "--fail-if-drop": _finite,
        "--gpus": int,
        "--prefill-rate": _finite,
    }
    for flag, kind in typed.items():
        if flag in argv:
            try:
                kind(argv[argv.index(flag) + 1])
            except ValueError:
                return True
    choices = {
        "--mode": ("completions", "chat"),
        "--order": ("cache-aware", "as-listed"),
        "--format": ("lm-eval", "hf"),
    }
    if any(flag in argv and argv[argv.index(flag) + 1] not in ok for flag, ok in choices.items()):
        return True
    if any(isinstance(a, str) and not a.strip() for a in argv):  # an empty value: the parser refuses it
        return True
    return "--frobnicate" in argv


class _no_exit:
    value = None

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False
