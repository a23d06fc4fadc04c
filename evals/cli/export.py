"""`ctxprobe export SUITE_OR_RUN --format lm-eval|hf DIR`: a suite's or a run's exact prompts as an
lm-eval task directory (and the command that runs it) or as a Hugging Face dataset."""

from __future__ import annotations

import argparse
from typing import Any

from ctxprobe.evals.cli.options import add_model_args, model_values


def register(sub: argparse._SubParsersAction) -> None:
    from ctxprobe.evals.lmeval.options import ExportOptions

    p = sub.add_parser(
        "export",
        help="write a suite's or run's prompts as an lm-eval task directory or HF dataset",
        description="Write the exact prompts of a suite (name or YAML) or of a run folder as an "
        "lm-eval task directory (scored by ctxprobe's scorer) or a Hugging Face dataset.",
    )
    add_model_args(p, ExportOptions.model_fields, positional=("source", "out_dir"))
    add_model_args(p.add_argument_group("suite overrides (as ctxprobe run takes them)"), _overrides())
    p.set_defaults(func=run)


def _overrides() -> dict[str, Any]:
    from ctxprobe.evals.run.send.options import SUITE_OVERRIDES, SuiteOptions

    return {name: SuiteOptions.model_fields[name] for name in SUITE_OVERRIDES}


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.lmeval.options import ExportOptions
    from ctxprobe.tasks.errors import validated

    opts = validated(ExportOptions, model_values(args, ExportOptions.model_fields))
    given = model_values(args, _overrides())
    if opts.format == "hf":
        hf = ctxprobe.export_hf(opts.source, opts.out_dir, token_counter=opts.token_counter, **given)
        print(
            f"wrote {hf.samples} samples to {hf.dir} (datasets.load_from_disk) and {hf.parquet} "
            f"(load_dataset('parquet', data_files=...))"
        )
        return 0
    export = ctxprobe.export_lm_eval(opts.source, opts.out_dir, token_counter=opts.token_counter, **given)
    print(f"wrote {len(export.tasks)} lm-eval tasks ({export.samples} samples), group {export.group}, to {export.dir}")
    commands = export.commands(base_url=opts.base_url)
    print(f"base model (completions):\n  {commands['completions']}")
    print(f"chat model:\n  {commands['chat']}")
    print(f"(the samples were built for {' and '.join(export.modes)} mode: use the matching command)")
    return 0
