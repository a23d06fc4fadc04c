"""The library calls behind `ctxprobe export` and `ctxprobe import-lm-eval`:

    ctxprobe.export_lm_eval("quick", "tasks/", lengths="1k")     # an lm-eval task directory
    ctxprobe.export_hf("results/20260101-q4km", "ds/")            # a Hugging Face dataset
    ctxprobe.import_lm_eval(["lm-eval-out/"])                     # lm-eval sample logs -> a run folder

A source is a suite (built-in name or YAML path; `lengths`, `depths`, `samples`, `seed` override it)
counted with `token_counter` (default: the packaged Gemma 3 270M), or a run folder, whose recipes are
rebuilt with its own token counter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxprobe.evals.lmeval.export import LmEvalExport, write_lm_eval_tasks
from ctxprobe.evals.lmeval.hf import HfExport, write_hf_dataset
from ctxprobe.evals.lmeval.importer import ImportResult, import_lm_eval
from ctxprobe.evals.lmeval.source import export_samples

__all__ = ["HfExport", "ImportResult", "LmEvalExport", "export_hf", "export_lm_eval", "import_lm_eval"]


def export_lm_eval(
    source: str, out_dir: str | Path, *, token_counter: str | None = None, **overrides: Any
) -> LmEvalExport:
    """Write an lm-eval task directory of `source`'s samples (see the module docstring); `overrides` are the
    suite overrides `ctxprobe.run` takes (`lengths="1k"`, `qa="hf:squad.json"`, ...)."""
    return write_lm_eval_tasks(export_samples(source, token_counter=token_counter, **overrides), out_dir)


def export_hf(source: str, out_dir: str | Path, *, token_counter: str | None = None, **overrides: Any) -> HfExport:
    """Write `source`'s samples as a Hugging Face dataset (save_to_disk folder plus data.parquet), with the
    suite overrides `ctxprobe.run` takes."""
    return write_hf_dataset(export_samples(source, token_counter=token_counter, **overrides), out_dir)
