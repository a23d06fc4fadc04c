"""Haystacks from the user's own text: `file:PATH`, `dir:PATH` and `hf:NAME[:split[:column]]` (NAME a hub
dataset, or a local .parquet file or folder of them).

Text is cut into sentence units so that needles land at sentence boundaries: a paragraph's first unit
starts with "\\n\\n", a later line of the paragraph with "\\n" (plus its indentation), a later sentence of
a line with " ". A request past the end of the text wraps around to its beginning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.haystack.base import Haystack, check_range, fingerprint_of, haystack_kind

SPLITTER_VERSION = "2"  # 2: Chinese and Japanese sentences end at 。！？ too
MAX_UNIT_CHARS = 2000  # longer sentences are cut at a space so that needles still find a place nearby
DIR_SUFFIXES = (".txt", ".md")

_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t]*\n)+")
# a sentence end: . ? or ! (maybe closing quotes or brackets), whitespace, then a capital letter
_SENTENCE_END = re.compile(r"[.?!][\"'\u201d\u2019)\]]*([ \t]+)(?=[\"'\u201c\u2018(\[]?[A-Z\u00c0-\u00de])")
# a CJK sentence end: 。！？ (maybe closing quotes or brackets), then an ideograph or kana at once: no space
# comes between, so the next unit's separator is empty (never before an opening quote or bracket, which a
# tokenizer may join to the `。`)
_CJK_SENTENCE_END = re.compile(
    r"[\u3002\uff01\uff1f][\u201d\u2019\u300d\u300f\uff09)]*(?=[\u3040-\u30ff\u3400-\u9fff])"
)
_CJK_START = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def _cjk_sentences(sentence: str) -> list[str]:
    """`sentence` cut after each CJK sentence end."""
    cuts = [m.end() for m in _CJK_SENTENCE_END.finditer(sentence)]
    return [sentence[a:b] for a, b in zip([0, *cuts], [*cuts, len(sentence)])]


def _cut_long(sentence: str) -> list[str]:
    """Pieces of at most MAX_UNIT_CHARS where a space allows; pieces after the first lose that space."""
    pieces: list[str] = []
    while len(sentence) > MAX_UNIT_CHARS:
        cut = sentence.rfind(" ", 1, MAX_UNIT_CHARS)
        if cut <= 0:
            cut = sentence.find(" ", MAX_UNIT_CHARS)
        head = sentence[:cut].rstrip() if cut > 0 else ""
        if not head:
            break
        pieces.append(head)
        sentence = sentence[cut + 1 :]
    pieces.append(sentence)
    return pieces


def split_units(text: str) -> list[str]:
    """Sentence units of `text`, each beginning with its separator and without trailing whitespace."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    units: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        sep = "\n\n"
        for line in paragraph.split("\n"):
            line = line.rstrip()
            body = line.lstrip(" \t")
            if not body:
                continue
            indent = line[: len(line) - len(body)]
            start = 0
            sentences: list[str] = []
            for match in _SENTENCE_END.finditer(body):
                sentences.append(body[start : match.start(1)])
                start = match.end(1)
            sentences.append(body[start:])
            for i, sentence in enumerate(sentences):
                for k, cjk in enumerate(_cjk_sentences(sentence)):
                    for j, piece in enumerate(_cut_long(cjk)):
                        units.append(sep + indent + piece if i == j == k == 0 else ("" if k and not j else " ") + piece)
                        sep = "\n"
    return units


class TextHaystack:
    """Units from a finite text, cycling past its end. Documents are split as they are first needed."""

    def __init__(self, spec: str, fingerprint: str, units: list[str], documents: Iterable[str] = ()) -> None:
        self.spec = spec
        self.fingerprint = fingerprint
        self._units = units
        self._documents: Iterator[str] | None = iter(documents)
        self._extend_to(1)
        if not self._units:
            raise UserError(f"haystack {spec!r} has no text")

    def _extend_to(self, n: int) -> None:
        while self._documents is not None and len(self._units) < n:
            document = next(self._documents, None)
            if document is None:
                self._documents = None
            else:
                self._units.extend(split_units(document))

    def units(self, start: int, stop: int) -> list[str]:
        check_range(start, stop)
        self._extend_to(stop)
        total = len(self._units)
        if stop <= total:
            return self._units[start:stop]
        out: list[str] = []
        i = start
        while i < stop:
            lo = i % total
            take = min(total - lo, stop - i)
            out.extend(self._units[lo : lo + take])
            i += take
        return out

    def wrap_needle(self, sentence: str) -> str:
        """A sentence after a space; a Chinese or Japanese one with none, as such text is written."""
        sentence = sentence.strip()
        return sentence if _CJK_START.match(sentence) else " " + sentence

    def __repr__(self) -> str:
        return f"TextHaystack(spec={self.spec!r})"


# Control characters no text file holds in number (tab, line feeds, vertical tab, form feed, carriage return
# and escape are left out: text has them)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
MAX_CONTROL_SHARE = 0.01  # more control characters than this, in a file without NUL bytes: binary data


def _decode(path: Path, data: bytes) -> str:
    """`data` as text: UTF-8 with no NUL byte and almost no control characters. A binary file that happens to
    decode (a file of NUL bytes, a dump) would otherwise be a haystack of noise with no word said."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"haystack file {path} is not UTF-8 text (bad byte at offset {error.start})"
        raise UserError(message) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise UserError(f"haystack file {path} is binary, not text (a NUL byte at offset {nul})")
    controls = len(_CONTROL.findall(text))
    if controls > MAX_CONTROL_SHARE * len(text):
        raise UserError(
            f"haystack file {path} is binary, not text ({controls} control characters in {len(text)} characters)"
        )
    return text


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise UserError(f"cannot read haystack file {path}: {error.strerror}") from None


_SPLIT_CACHE: dict[str, list[str]] = {}  # fingerprint -> split units of a file or dir source
_SPLIT_CACHE_SIZE = 16


def _cached(spec: str, fingerprint: str, texts: list[str]) -> TextHaystack:
    units = _SPLIT_CACHE.get(fingerprint)
    if units is None:
        units = [unit for text in texts for unit in split_units(text)]
        if len(_SPLIT_CACHE) >= _SPLIT_CACHE_SIZE:
            del _SPLIT_CACHE[next(iter(_SPLIT_CACHE))]
        _SPLIT_CACHE[fingerprint] = units
    return TextHaystack(spec, fingerprint, units)


@haystack_kind("file")
def make_file(arg: str | None) -> Haystack:
    if not arg:
        raise UserError("haystack 'file:' needs a path, e.g. file:notes/essay.txt")
    path = Path(arg).expanduser()
    if not path.is_file():
        raise UserError(f"haystack file {path} does not exist or is not a file")
    data = _read(path)
    text = _decode(path, data)
    if not text.strip():
        raise UserError(f"haystack file {path} is empty")
    return _cached(f"file:{arg}", fingerprint_of("ctxprobe-haystack", "file", SPLITTER_VERSION, data), [text])


def dir_files(root: Path) -> list[tuple[str, Path]]:
    """The files a `dir:` haystack reads, as (name under `root`, path), in the order it reads them."""
    return sorted(
        (p.relative_to(root).as_posix(), p)
        for p in root.rglob("*")
        if p.suffix.lower() in DIR_SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


@haystack_kind("dir")
def make_dir(arg: str | None) -> Haystack:
    if not arg:
        raise UserError("haystack 'dir:' needs a folder, e.g. dir:notes/")
    root = Path(arg).expanduser()
    if not root.is_dir():
        raise UserError(f"haystack folder {root} does not exist or is not a folder")
    files = dir_files(root)
    parts: list[str | bytes] = ["ctxprobe-haystack", "dir", SPLITTER_VERSION]
    texts: list[str] = []
    for rel, path in files:
        data = _read(path)
        text = _decode(path, data)
        if text.strip():
            parts += [rel, data]
            texts.append(text)
    if not texts:
        raise UserError(f"haystack folder {root} has no non-empty .txt or .md files")
    return _cached(f"dir:{arg}", fingerprint_of(*parts), texts)


def parse_hf(arg: str | None) -> tuple[str, str, str]:
    """`NAME[:split[:column]]` -> (name, split, column), defaulting to split "train" and column "text"."""
    fields = (arg or "").split(":")
    if len(fields) > 3 or not all(fields):
        raise UserError(f"invalid haystack 'hf:{arg or ''}': use hf:NAME[:split[:column]], e.g. hf:wikitext")
    name, split, column = fields + ["train", "text"][len(fields) - 1 :]
    return name, split, column


def _column_texts(dataset: Any, column: str, spec: str) -> Iterator[str]:
    for batch in dataset.iter(batch_size=512):
        for value in batch[column]:
            if value is None:
                continue
            if not isinstance(value, str):
                kind = type(value).__name__
                raise UserError(f"haystack {spec!r}: column {column!r} holds {kind}, not text")
            yield value


def local_parquet(name: str) -> list[Path]:
    """The parquet files of `hf:PATH` when PATH is a local .parquet file or a folder holding some (read
    with no hub access, e.g. a dataset written by `ctxprobe export --format hf`); [] for a hub name."""
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".parquet":
        return [path]
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise UserError(f"haystack 'hf:{name}': the folder holds no .parquet files")
        return files
    return []


@haystack_kind("hf")
def make_hf(arg: str | None) -> Haystack:
    name, split, column = parse_hf(arg)
    spec = f"hf:{name}:{split}:{column}"
    import datasets  # imported here: slow to load, only this kind needs it

    local = local_parquet(name)
    try:
        if local:
            dataset = datasets.load_dataset("parquet", data_files={split: [str(p) for p in local]}, split=split)
        else:
            dataset = datasets.load_dataset(name, split=split)
    except (datasets.exceptions.DatasetsError, OSError, ValueError) as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise UserError(f"haystack {spec!r}: cannot load dataset: {first_line}") from None
    if column not in dataset.column_names:
        known = ", ".join(dataset.column_names)
        raise UserError(f"haystack {spec!r}: no column {column!r}; the columns are {known}")
    # local files are known by their bytes (the datasets cache fingerprint of a path says nothing of its content)
    dataset_fingerprint = (
        fingerprint_of(*(p.read_bytes() for p in local)) if local else str(getattr(dataset, "_fingerprint", ""))
    )
    fingerprint = fingerprint_of("ctxprobe-haystack", "hf", SPLITTER_VERSION, name, split, column, dataset_fingerprint)
    return TextHaystack(spec, fingerprint, [], _column_texts(dataset, column, spec))
