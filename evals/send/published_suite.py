"""A published dataset given on the command line (`--mrcr hf:PATH`) for the suite's tasks of its family: each
such task that names no dataset reads it, and a suite without one gets one task of the family for it."""

from __future__ import annotations

from typing import Any

from ctxprobe.tasks.errors import UserError


def with_published_dataset(data: dict[str, Any], family: str, dataset: str | None) -> dict[str, Any]:
    """`data` (a suite's fields) with `dataset` as the `dataset` parameter of its `family` tasks that have none."""
    if not dataset:
        return data
    if not dataset.startswith("hf:"):
        raise UserError(f"--{family} {dataset!r}: use hf:PATH (a local .parquet file or a folder of them)")
    tasks = list(data["tasks"])
    if not any(task["family"] == family for task in tasks):
        tasks.append({"family": family, "params": {}})
    tasks = [{**task, "params": {**(task.get("params") or {}), "dataset": dataset}}
             if task["family"] == family and not (task.get("params") or {}).get("dataset") else task for task in tasks]
    return {**data, "tasks": tasks}
