"""A record read without its needles: what tables, heatmaps, `show`, the report's page and resume need.

A nested run's record holds every needle its prompt holds (80 at 1M tokens: nine tenths of its line), and only
the report's failure examples read them. Reading 3,696 nightly records whole took seconds and a gigabyte;
their outlines (the same line, its `sample.needles` skipped by the parser) take a sixth of the time and a
tenth of the memory. An outline is a `SampleRecord` in every other field; asking it for needles is an
`AttributeError`, never an empty list. `full_records` reads the few whole records a caller picked."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, create_model

from ctxprobe.evals.records.lines import iter_lines, parse_line
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.sample import Sample

__all__ = ["RecordOutline", "SampleOutline"]


OUTLINE_LEAVES_OUT = ("needles", "prompt", "messages")  # the needles; the prompt and messages are never stored

# `tasks.sample.Sample` less OUTLINE_LEAVES_OUT, made from Sample's own fields (a field added there is here too).
_OUTLINED: dict[str, Any] = {
    name: (info.annotation, info) for name, info in Sample.model_fields.items() if name not in OUTLINE_LEAVES_OUT
}
if TYPE_CHECKING:
    SampleOutline = Sample  # what a type checker can know of a model made at import: Sample's fields, less three
else:
    SampleOutline = create_model(
        "SampleOutline", __config__=ConfigDict(frozen=True, extra="ignore"), __module__=__name__, **_OUTLINED
    )


class RecordOutline(SampleRecord):
    """One line of samples.jsonl read as an outline (see the module's docstring)."""

    sample: SampleOutline

    @classmethod
    def skim(cls, raw: bytes) -> bytes:
        """The line with its needles' list emptied before it is parsed: skipping a field still parses it, and the
        needles are nine tenths of a nested line. Every record is written compactly with `needles` just before
        `measures`, and neither a `"` nor a `],"` occurs unescaped inside a JSON string, so the first `],"measures":`
        after `"needles":[` closes the list. A line laid out otherwise (an older writer, a recipe parameter named
        `needles`) is returned as it is, or fails to validate once cut, and is then read whole (`lines.parse_line`)."""
        start = raw.find(_NEEDLES)
        end = raw.find(_NEEDLES_END, start) if start >= 0 else -1
        return raw if end < 0 else raw[: start + len(_NEEDLES)] + raw[end:]


_NEEDLES, _NEEDLES_END = b'"needles":[', b'],"measures":'
_ID = re.compile(rb'"sample_id":\s*"([^"]+)"')


def full_records(path: Path, sample_ids: Iterable[str]) -> dict[str, SampleRecord]:
    """The last whole record of each of `sample_ids` in the samples file at `path` (damaged lines skipped, as
    every reader does); only the lines of those samples are parsed whole."""
    wanted = set(sample_ids)
    out: dict[str, SampleRecord] = {}
    if not wanted or not path.is_file():
        return out
    for _, raw, ended in iter_lines(path):
        found = _ID.search(raw, 0, 400)  # the sample's id is its first field, near the line's start
        if ended and (found is None or found.group(1).decode("utf-8", "replace") in wanted):
            parsed = parse_line(raw)
            if isinstance(parsed, SampleRecord) and parsed.sample.sample_id in wanted:
                out[parsed.sample.sample_id] = parsed
    return out
