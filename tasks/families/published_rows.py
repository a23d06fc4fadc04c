"""Rows of a published long-context dataset the user keeps locally (`hf:PATH`: a .parquet file, or a folder of
them), read once per file version and checked for the columns a family needs. Nothing is fetched from a hub:
the graphwalk family reads OpenAI's GraphWalks files this way, the mrcr family OpenAI's MRCR files."""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctxprobe.tasks.data_files import parquet_files, parquet_rows
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.dataset_digest import located


def load_rows(spec: str, what: str, columns: tuple[str, ...], digest: str | None = None) -> tuple[dict[str, Any], ...]:
    """The rows at `hf:PATH`, each holding `columns`; `what` names the dataset in errors (`GraphWalks`). With the
    recipe's content `digest`, the file read is one of that content (`dataset_digest.located`)."""
    if not spec.startswith("hf:") or not spec[3:]:
        raise UserError(f"invalid {what} dataset {spec!r}: use hf:PATH (a local .parquet file or a folder of them)")
    path = located(spec, digest, what)
    stat = path.stat()
    rows = _read(str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if not rows:
        raise UserError(f"{what} dataset {spec!r}: no rows")
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise UserError(
            f"{what} dataset {spec!r}: rows need the columns {', '.join(columns)}; missing {', '.join(missing)}"
        )
    return rows


@lru_cache(maxsize=4)
def _read(path: str, size: int, mtime: int) -> tuple[dict[str, Any], ...]:
    root = Path(path)
    return tuple(parquet_rows(parquet_files(root, f"dataset {path}"), f"dataset {path}"))


SEED_SPREAD = 8  # a seed takes one of the 8 longest rows that fit


def shortest_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows ordered by their prompt's length (then text), the order a sized family's sizes walk."""
    return sorted(rows, key=lambda r: (len(r["prompt"]), r["prompt"]))


def row_at(rows: list[dict[str, Any]], size: int, rng: random.Random) -> dict[str, Any]:
    """Row `size - 1 - offset` of shortest-first `rows`, `offset` drawn from the seed (the same at every size):
    the builder's search for the largest size that fits finds the row `offset` places below the longest one."""
    return rows[max(0, min(size, len(rows)) - 1 - rng.randrange(SEED_SPREAD))]


def some_rows(rows: list[dict[str, Any]], spec: str, what: str) -> list[dict[str, Any]]:
    """`rows`, shortest first; none is a one-line error naming what was asked (`what`)."""
    if not rows:
        raise UserError(f"dataset {spec!r} has no rows with {what}")
    return shortest_first(rows)


def with_published_dataset(tasks: list[dict[str, Any]], family: str, dataset: str | None) -> list[dict[str, Any]]:
    """A suite's tasks with `dataset` (given on the command line: `--mrcr hf:PATH`) as the `dataset` parameter of
    its `family` tasks that name none; a suite without one gets one task of the family for it."""
    if not dataset:
        return tasks
    if not dataset.startswith("hf:"):
        raise UserError(f"--{family} {dataset!r}: use hf:PATH (a local .parquet file or a folder of them)")
    tasks = list(tasks)
    if not any(task["family"] == family for task in tasks):
        tasks.append({"family": family, "params": {}})
    return [
        {**task, "params": {**(task.get("params") or {}), "dataset": dataset}}
        if task["family"] == family and not (task.get("params") or {}).get("dataset")
        else task
        for task in tasks
    ]
