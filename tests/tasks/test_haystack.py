"""Haystacks: deterministic, separator-first units; generated kinds look right; user text splits and cycles."""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.haystack import Haystack, known_kinds, make_haystack
from ctxprobe.tasks.haystack.code_kind import CodeHaystack
from ctxprobe.tasks.haystack.legal import LegalHaystack
from ctxprobe.tasks.haystack.noise import SENTENCES
from ctxprobe.tasks.haystack.prose import ProseHaystack
from ctxprobe.tasks.haystack.user_text import MAX_UNIT_CHARS, parse_hf, split_units

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ("prose", "code", "legal", "noise")

_HASHES = """
import hashlib
from ctxprobe.tasks.haystack import make_haystack
for kind in ("prose", "code", "legal", "noise"):
    print(kind, hashlib.sha256("".join(make_haystack(kind).units(0, 5000)).encode()).hexdigest())
"""


def _one_line_user_error(excinfo: pytest.ExceptionInfo[UserError]) -> str:
    message = str(excinfo.value)
    assert message and "\n" not in message
    return message


def _hashes_in_subprocess(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _HASHES], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_registry_lists_kinds() -> None:
    assert set(known_kinds()) >= {"prose", "code", "legal", "noise", "file", "dir", "hf"}
    for kind in GENERATED:
        haystack = make_haystack(kind)
        assert isinstance(haystack, Haystack)
        assert haystack.spec == kind
        assert re.fullmatch(r"[0-9a-f]{64}", haystack.fingerprint)
    assert len({make_haystack(k).fingerprint for k in GENERATED}) == len(GENERATED)


def test_unknown_kind_lists_known_kinds() -> None:
    with pytest.raises(UserError) as excinfo:
        make_haystack("poetry")
    message = _one_line_user_error(excinfo)
    assert "poetry" in message
    assert all(kind in message for kind in known_kinds())


def test_generated_kind_rejects_argument() -> None:
    with pytest.raises(UserError) as excinfo:
        make_haystack("prose:fancy")
    _one_line_user_error(excinfo)


def test_same_text_in_separate_processes() -> None:
    first = _hashes_in_subprocess("1")
    second = _hashes_in_subprocess("2")
    assert first == second
    here = "".join(
        f"{kind} {hashlib.sha256(''.join(make_haystack(kind).units(0, 5000)).encode()).hexdigest()}\n"
        for kind in GENERATED
    )
    assert first == here


@pytest.mark.parametrize("kind", GENERATED)
def test_random_access_matches_sequential(kind: str) -> None:
    whole = make_haystack(kind).units(0, 2100)
    fresh = {"prose": ProseHaystack, "code": CodeHaystack, "legal": LegalHaystack}.get(kind)
    later = fresh() if fresh else make_haystack(kind)  # a new instance: nothing cached
    assert later.units(1500, 2100) == whole[1500:]
    assert later.units(0, 7) == whole[:7]
    assert later.units(300, 300) == []
    assert len(later.units(40_000, 41_000)) == 1000


@pytest.mark.parametrize("kind", GENERATED)
def test_units_start_with_separator_and_end_clean(kind: str) -> None:
    haystack = make_haystack(kind)
    for unit in haystack.units(0, 3000) + haystack.units(100_000, 101_000):
        assert unit[0] in " \n", repr(unit)
        assert unit == unit.rstrip(), repr(unit)
        assert unit.strip(), repr(unit)


def test_prose_is_varied_and_digit_free() -> None:
    units = make_haystack("prose").units(0, 2000)
    sentences = [u.strip() for u in units]
    assert len(set(sentences)) > 0.9 * len(sentences)
    text = "".join(units)
    assert not re.search(r"\d", text)
    assert len(set(text.split())) > 400
    assert all(s[0].isupper() and s[-1] == "." for s in sentences)
    paragraphs = text.strip("\n").split("\n\n")
    counts = [len(re.findall(r"\.(?: |$)", p)) for p in paragraphs]
    assert min(counts) >= 3 and max(counts) <= 8
    assert all(u.startswith("\n\n") or (u.startswith(" ") and not u.startswith("  ")) for u in units)


def test_code_modules_parse() -> None:
    haystack = CodeHaystack()
    size = haystack.block_units
    modules = ["".join(haystack.units(b * size, (b + 1) * size)) for b in (0, 1, 2, 57)]
    for module in modules:
        tree = ast.parse(module)
        assert any(isinstance(node, ast.FunctionDef) for node in ast.walk(tree))
    ast.parse("".join(haystack.units(0, 3 * size)))
    assert not re.search(r"\d{5,}", "".join(modules))
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}", "".join(modules))


def test_code_needles_keep_modules_valid() -> None:
    haystack = CodeHaystack()
    units = haystack.units(0, haystack.block_units)
    needle = haystack.wrap_needle("The special magic number is 4821937.")
    assert needle == "\n# The special magic number is 4821937."
    for at in (0, 1, 17, 100, 201, len(units)):
        ast.parse("".join([*units[:at], needle, *units[at:]]))


def test_code_units_are_lines() -> None:
    for unit in make_haystack("code").units(0, 2000):
        assert unit.startswith("\n")
        assert unit.strip("\n").count("\n") == 0  # blank lines only ever lead a unit


def test_legal_has_numbered_articles_and_clauses() -> None:
    haystack = LegalHaystack()
    units = haystack.units(0, 3 * haystack.block_units)
    headings = [int(m.group(1)) for u in units if (m := re.fullmatch(r"\n\nArticle (\d+)\. [A-Z][\w ]+", u))]
    assert headings == list(range(1, len(headings) + 1)) and len(headings) == 24
    clauses = [u for u in units if re.match(r"\n\n\d+\.\d+ [A-Z]", u)]
    assert len(clauses) > 100
    text = "".join(units)
    assert "Clause" not in text and "the Supplier" in text and "the Customer" in text
    assert not re.search(r"\d{5,}", text)
    far = "".join(haystack.units(10_000_000, 10_000_300))
    assert all(int(n) <= 9999 for n in re.findall(r"Article (\d+)", far))


def test_noise_repeats_five_sentences() -> None:
    units = make_haystack("noise").units(3, 23)
    assert units == [SENTENCES[(3 + i) % 5] for i in range(20)]
    assert SENTENCES[0] == " The grass is green."


def test_wrap_needle_forms() -> None:
    for kind in ("prose", "legal", "noise"):
        assert make_haystack(kind).wrap_needle("A needle.") == " A needle."


def test_split_units_at_sentence_boundaries() -> None:
    text = 'Title\n\nOne here. Two? Three! "Four." Five e.g. five.\nSix.\n    Seven.\r\n\r\n\n  Eight.  '
    units = split_units(text)
    assert units == [
        "\n\nTitle",
        "\n\nOne here.",
        " Two?",
        " Three!",
        ' "Four."',
        " Five e.g. five.",
        "\nSix.",
        "\n    Seven.",
        "\n\n  Eight.",
    ]


def test_split_units_cuts_long_sentences() -> None:
    sentence = " ".join(["word"] * 2000) + "."
    units = split_units(sentence)
    assert len(units) > 1 and all(len(u) <= MAX_UNIT_CHARS + 2 for u in units)
    assert "".join(units) == "\n\n" + sentence


def test_file_haystack_splits_and_cycles(tmp_path: Path) -> None:
    path = tmp_path / "essay.txt"
    path.write_text("First one. Second one.\n\nThird one? Fourth!\n", encoding="utf-8")
    haystack = make_haystack(f"file:{path}")
    assert haystack.spec == f"file:{path}"
    assert haystack.units(0, 4) == ["\n\nFirst one.", " Second one.", "\n\nThird one?", " Fourth!"]
    assert haystack.units(4, 8) == haystack.units(0, 4)
    assert haystack.units(3, 6) == [" Fourth!", "\n\nFirst one.", " Second one."]
    assert len(haystack.units(1, 1002)) == 1001
    copy = tmp_path / "copy.txt"
    copy.write_bytes(path.read_bytes())
    assert make_haystack(f"file:{copy}").fingerprint == haystack.fingerprint
    copy.write_text("Something else.", encoding="utf-8")
    assert make_haystack(f"file:{copy}").fingerprint != haystack.fingerprint


def test_dir_haystack_orders_files(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.md").write_text("Second file.", encoding="utf-8")
    (tmp_path / "a.txt").write_text("First file. Still first.", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "skip.py").write_text("Not text.", encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.txt").write_text("Hidden.", encoding="utf-8")
    haystack = make_haystack(f"dir:{tmp_path}")
    assert haystack.units(0, 4) == ["\n\nFirst file.", " Still first.", "\n\nSecond file.", "\n\nFirst file."]


def test_user_text_errors_name_the_path(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n\n", encoding="utf-8")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 au lait.".encode("latin-1"))
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "notes.rst").write_text("Not picked.", encoding="utf-8")
    for spec, path in [
        (f"file:{tmp_path / 'missing.txt'}", tmp_path / "missing.txt"),
        (f"file:{empty}", empty),
        (f"file:{latin}", latin),
        (f"dir:{tmp_path / 'nope'}", tmp_path / "nope"),
        (f"dir:{bare}", bare),
    ]:
        with pytest.raises(UserError) as excinfo:
            make_haystack(spec)
        assert str(path) in _one_line_user_error(excinfo)
    for spec in ("file:", "dir:", "hf:", "hf:a:b:c:d", "hf:name::text"):
        with pytest.raises(UserError) as excinfo:
            make_haystack(spec)
        _one_line_user_error(excinfo)


def test_parse_hf_defaults() -> None:
    assert parse_hf("wikitext") == ("wikitext", "train", "text")
    assert parse_hf("org/set:validation") == ("org/set", "validation", "text")
    assert parse_hf("org/set:test:body") == ("org/set", "test", "body")


def test_hf_haystack_with_a_local_dataset(monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    calls: list[tuple[str, str]] = []

    def fake_load(name: str, split: str) -> object:
        calls.append((name, split))
        if name == "nobody/nothing":
            raise datasets.exceptions.DatasetNotFoundError(f"Dataset '{name}' doesn't exist on the Hub\nmore")
        return datasets.Dataset.from_dict(
            {"text": ["Alpha one. Beta two.", None, "Gamma three."], "body": ["Delta four.", "Epsilon.", ""]}
        )

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    haystack = make_haystack("hf:org/set")
    assert calls == [("org/set", "train")]
    assert haystack.spec == "hf:org/set:train:text"
    assert haystack.units(0, 4) == ["\n\nAlpha one.", " Beta two.", "\n\nGamma three.", "\n\nAlpha one."]
    other = make_haystack("hf:org/set:test:body")
    assert other.units(0, 3) == ["\n\nDelta four.", "\n\nEpsilon.", "\n\nDelta four."]
    assert other.fingerprint != haystack.fingerprint
    for spec, fragment in [("hf:org/set:train:title", "title"), ("hf:nobody/nothing", "doesn't exist")]:
        with pytest.raises(UserError) as excinfo:
            make_haystack(spec)
        assert fragment in _one_line_user_error(excinfo)
