"""`ctxprobe compare BASELINE CANDIDATE [CANDIDATE...]`: parse, call `ctxprobe.compare`, print the table.
Exit codes: the gate's (`CompareResult.gate_exit_code`), as in `tasks/exit_codes.py`'s table."""

from __future__ import annotations

import argparse
import sys

from ctxprobe.evals.cli.options import add_model_args, exit_codes_epilog, model_values


def register(sub: argparse._SubParsersAction) -> None:
    from ctxprobe.evals.compare.options import CompareOptions

    p = sub.add_parser(
        "compare",
        help="pair two or more runs of one suite sample by sample and test the differences",
        description="Pair candidate runs with a baseline run sample by sample: accuracy difference "
        "per cell and per family x length, exact McNemar p-values (Holm-adjusted), "
        "partial-credit bootstrap.",
        **exit_codes_epilog("compare"),
    )
    add_model_args(p, CompareOptions.model_fields, positional=("baseline", "candidates"))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.compare.options import CompareOptions
    from ctxprobe.evals.compare.outputs import render_text
    from ctxprobe.tasks.errors import validated

    opts = validated(CompareOptions, model_values(args, CompareOptions.model_fields))
    from ctxprobe.evals.records.safe_write import check_output_target

    for flag, target in (("--junit", opts.junit), ("--summary-md", opts.summary_md)):
        if target:  # refused before the comparison and its folder, not after them
            check_output_target(target, flag)
    result = ctxprobe.compare(
        opts.baseline,
        *opts.candidates,
        alpha=opts.alpha,
        fail_if_drop=opts.fail_if_drop,
        results_dir=opts.results_dir,
        html_report=not opts.no_report,
        metric=opts.metric,
        kl_margin=opts.kl_margin,
    )
    for warning in result.warnings:
        print(f"ctxprobe: warning: {warning}", file=sys.stderr)
    print(render_text(result), end="")
    if opts.junit or opts.summary_md:
        from ctxprobe.evals.compare.paired.verdict import gate_cases
        from ctxprobe.evals.compare.sequential.ci_outputs import write_ci_outputs

        cases = gate_cases(result)
        faults = [
            f"{run.label}: {run.engine_fault}" for run in (result.baseline, *result.candidates) if run.engine_fault
        ]
        for path in write_ci_outputs(cases, "ctxprobe gate", opts.junit, opts.summary_md, faults):
            print(f"ctxprobe: wrote {path}", file=sys.stderr)
    print(f"ctxprobe: wrote {result.out_dir}", file=sys.stderr)
    return result.gate_exit_code(opts.undecided)
