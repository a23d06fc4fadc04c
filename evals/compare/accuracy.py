"""Accuracy per cell from sample records: by family x variant x context length x depth, with exact
(Clopper-Pearson) intervals. A cell's `n` counts scored samples only; errored samples (rejected as too long,
timed out, ...) are counted apart in `errors` and `err_<kind>` and never enter the accuracy. Coordinates come
from each record's typed recipe fields. The report's tables and heatmaps and compare's history read these.

A group that pools cells of a nested run (a length over its depths) holds several samples of one chain,
which are not independent: its interval takes the chain as the unit (`evals.compare.clusters`), and the
table gains a `clusters` column (the chains a row pools). A run of the independent layout has every
sample its own cluster: its tables are what they were, column for column.

An absent question (`tasks/absent.py`) is its own condition (its variant says `absent=True`), never pooled
into recall. `absent_beside` sets its accuracy beside the recall of the present question it is asked beside
(same family, haystack and parameters but `absent`), length by length; a run without one has no such columns."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import pandas as pd

from ctxprobe.evals.compare.clusters import cluster_of, clustered_proportion
from ctxprobe.evals.compare.stats import Z95, clopper_pearson
from ctxprobe.evals.records.record import ErrorKind, SampleRecord
from ctxprobe.evals.records.rows import record_row

__all__ = [
    "ABSENT_COLUMNS",
    "ATTRIBUTION_COLUMNS",
    "CELL",
    "CONDITION",
    "ERROR_COLUMNS",
    "absent_beside",
    "absent_shown_beside",
    "accuracy_table",
    "aggregate",
    "context_summary",
    "framed",
    "record_frame",
]

CONDITION = ["family", "variant", "haystack"]
CELL = [*CONDITION, "context_tokens", "depth"]
ERROR_COLUMNS = [f"err_{kind.value}" for kind in ErrorKind]
# What the scored answers named (`Score.attribution`), counted per group: another needle of the prompt, none of
# them, a value where the prompt holds none. Wrong answers not attributed (free text; records before it) are in
# none of them.
ATTRIBUTION_COLUMNS = ["rival", "other", "hallucinated"]
ABSENT_COLUMNS = ["absent_n", "absent_correct", "absent_accuracy", "absent_ci_lo", "absent_ci_hi"]


# The records `framed` holds, and their frame once made.
_FRAMED: ContextVar[list[Any] | None] = ContextVar("framed", default=None)


@contextmanager
def framed(records: list[SampleRecord]) -> Iterator[None]:
    """Within it, `record_frame` of these very records (the same objects, in order) is made once and copied: a run's
    tables, heatmaps, summary files and page each frame the same thousands of records."""
    token = _FRAMED.set([records, None])
    try:
        yield
    finally:
        _FRAMED.reset(token)


def record_frame(records: Iterable[SampleRecord]) -> pd.DataFrame:
    """One row per record: its coordinates, whether it was scored, correct (0/1), partial, what a wrong answer
    named (`ATTRIBUTION_COLUMNS`, and a rival's depth), error kind, its cluster
    (`evals.compare.clusters.cluster_of`: its chain in a nested run, itself in an independent one), and its
    question (present or absent) with the variant of the present question it stands beside."""
    records = list(records)
    held = _FRAMED.get()
    if held is None or len(held[0]) != len(records) or any(a is not b for a, b in zip(held[0], records)):
        return _frame(records)
    if held[1] is None:
        held[1] = _frame(records)
    return held[1].copy()


def _frame(records: list[SampleRecord]) -> pd.DataFrame:
    rows = []
    for rec in records:
        if rec.score is None and rec.error is None:
            raise ValueError(f"record {rec.sample.sample_id} has neither a score nor an error")
        full = record_row(rec)
        scored = full["error"] is None
        row: dict[str, Any] = {key: full[key] for key in CELL}
        row.update(
            depth=float(full["depth"]),
            scored=scored,
            correct=float(full["correct"]) if scored and full["correct"] is not None else math.nan,
            partial=full["partial"] if scored and full["partial"] is not None else math.nan,
        )
        row.update({col: col == f"err_{full['error']}" for col in ERROR_COLUMNS})
        row.update({col: scored and full["attribution"] == col for col in ATTRIBUTION_COLUMNS})
        row["rival_depth"] = full["rival_depth"] if scored and full["attribution"] == "rival" else math.nan
        row["cluster"] = cluster_of(rec)
        row["question"], row["present_variant"] = full["question"], full["present_variant"]
        rows.append(row)
    columns = [
        *CELL,
        "scored",
        "correct",
        "partial",
        *ATTRIBUTION_COLUMNS,
        "rival_depth",
        *ERROR_COLUMNS,
        "cluster",
        "question",
        "present_variant",
    ]
    return pd.DataFrame(rows, columns=columns)


def aggregate(frame: pd.DataFrame, keys: list[str], z: float = Z95) -> pd.DataFrame:
    """n, correct, accuracy, Clopper-Pearson ci_lo/ci_hi, partial_mean, the wrong answers by what they named
    (rival, other, hallucinated) and error counts per group of `keys`.
    Where a group holds several scored samples of one chain (a nested run pooled over cells), its interval is
    the chains' (`clustered_proportion`) and a `clusters` column counts them."""
    spec: dict[str, tuple[str, str]] = {
        "n": ("scored", "sum"),
        "correct": ("correct", "sum"),
        "partial_mean": ("partial", "mean"),
    }
    spec.update({col: (col, "sum") for col in [*ATTRIBUTION_COLUMNS, *ERROR_COLUMNS]})
    out = frame.groupby(keys, sort=True).agg(**spec).reset_index()
    out["n"] = out["n"].astype(int)
    out["correct"] = out["correct"].astype(int)
    out[ATTRIBUTION_COLUMNS] = out[ATTRIBUTION_COLUMNS].astype(int)
    out[ERROR_COLUMNS] = out[ERROR_COLUMNS].astype(int)
    out["errors"] = out[ERROR_COLUMNS].sum(axis=1)
    out["accuracy"] = (out["correct"] / out["n"]).where(out["n"] > 0)
    bounds = [clopper_pearson(int(c), int(n), z) for c, n in zip(out["correct"], out["n"])]
    columns = [
        *keys,
        "n",
        "correct",
        "accuracy",
        "ci_lo",
        "ci_hi",
        "partial_mean",
        *ATTRIBUTION_COLUMNS,
        "errors",
        *ERROR_COLUMNS,
    ]
    nested = "cluster" in frame and not frame["cluster"].astype(str).str.startswith("sample:").all()
    if nested:
        chains = _chains(frame, keys)
        groups = [chains.get(tuple(row), []) for row in out[keys].itertuples(index=False)]
        out["clusters"] = [len(got) for got in groups]
        # a group with one sample per chain (a cell) keeps its exact interval: its samples are independent
        bounds = [
            clustered_proportion([y for y, _ in got], [m for _, m in got], z) if len(got) < int(n) else bound
            for got, n, bound in zip(groups, out["n"], bounds)
        ]
        columns.append("clusters")
    out["ci_lo"] = [lo for lo, _ in bounds]
    out["ci_hi"] = [hi for _, hi in bounds]
    return out[columns]


def _chains(frame: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], list[tuple[int, int]]]:
    """Each group's scored samples per chain: (successes, samples) of every chain that has one."""
    scored = frame[frame["scored"]]
    out: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    per_chain = scored.groupby([*keys, "cluster"], sort=True)["correct"].agg(["sum", "size"])  # one pass, not a loop
    for group, got, size in zip(per_chain.index, per_chain["sum"], per_chain["size"]):
        out.setdefault(tuple(group[:-1]), []).append((int(got), int(size)))
    return out


def accuracy_table(records: Iterable[SampleRecord], z: float = Z95) -> pd.DataFrame:
    """One row per (family, variant, haystack, context_tokens, depth) cell."""
    return aggregate(record_frame(records), CELL, z)


def context_summary(records: Iterable[SampleRecord], z: float = Z95) -> pd.DataFrame:
    """One row per (family, variant, haystack, context_tokens), pooled across depths; where the run asked absent
    questions, their accuracy beside the recall rows they were asked beside (`absent_beside`)."""
    frame = record_frame(records)
    return absent_beside(aggregate(frame, [*CONDITION, "context_tokens"], z), frame, z)


def absent_beside(summary: pd.DataFrame, frame: pd.DataFrame, z: float = Z95) -> pd.DataFrame:
    """`summary` (rows by condition and length) with `ABSENT_COLUMNS` on each present question's row: the absent
    questions asked beside it at that length (n, correct, accuracy, interval), NaN where none was. `summary`
    as it is where the run asked none."""
    absent = frame[frame["question"] == "absent"]
    if absent.empty:
        return summary
    beside = aggregate(absent.assign(variant=absent["present_variant"]), [*CONDITION, "context_tokens"], z)
    beside = beside[[*CONDITION, "context_tokens", "n", "correct", "accuracy", "ci_lo", "ci_hi"]]
    beside.columns = [*CONDITION, "context_tokens", *ABSENT_COLUMNS]
    present = summary["variant"].isin(frame.loc[frame["question"] != "absent", "variant"])
    merged = summary.merge(beside, on=[*CONDITION, "context_tokens"], how="left")
    merged.loc[~present.to_numpy(), ABSENT_COLUMNS] = math.nan
    return merged


def absent_shown_beside(frame: pd.DataFrame) -> set[tuple[str, str, str]]:
    """The absent questions' conditions (family, variant, haystack) that a present condition of the run has
    beside it: a table shows them in that condition's rows (`absent_beside`), not as conditions of their own."""
    asked = frame["question"] == "absent"
    present = {tuple(c) for c in frame.loc[~asked, CONDITION].drop_duplicates().itertuples(index=False)}
    absent = frame.loc[asked, ["family", "variant", "present_variant", "haystack"]].drop_duplicates()
    return {(f, v, h) for f, v, pv, h in absent.itertuples(index=False) if (f, pv, h) in present}
