"""`ctxprobe compare BASELINE CANDIDATE [CANDIDATE...]`: parse, call `ctxprobe.compare`, print the table.
Exit codes: 0, 1 when `--fail-if-drop` fails a row, 2 for bad input, 5 when the gate refuses to judge."""

from __future__ import annotations

import argparse

from ctxprobe.evals.commands.options import number
import sys


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("compare", help="pair two or more runs of one suite sample by sample and test the differences",
                       description="Pair candidate runs with a baseline run sample by sample: accuracy difference "
                                   "per cell and per family x length, exact McNemar p-values (Holm-adjusted), "
                                   "partial-credit bootstrap. Exit codes: 0 ok, 1 the --fail-if-drop gate "
                                   "failed, 2 bad input, 5 the gate refuses to judge (a run not finished, a "
                                   "run against itself, different suites).")
    p.add_argument("baseline", help="the baseline run folder")
    p.add_argument("candidates", nargs="+", metavar="candidate", help="candidate run folders")
    p.add_argument("--alpha", type=number, default=0.05, help="significance level after Holm (default: 0.05)")
    p.add_argument("--fail-if-drop", type=number, default=None, metavar="MARGIN",
                   help="exit 1 when a family x length row of a candidate is worse by more than MARGIN "
                        "(e.g. 0.05) with Holm-adjusted p < alpha")
    p.add_argument("--results-dir", default="results", metavar="DIR",
                   help="where the compare folder is made (default: results)")
    p.add_argument("--no-report", action="store_true", help="do not write report.html into the compare folder")
    p.add_argument("--junit", metavar="FILE", help="write the gate's rows as JUnit XML (failed / passed / skipped "
                   "when undecided)")
    p.add_argument("--summary-md", metavar="FILE", help="write the gate's verdicts as a short markdown table "
                   "(also appended to $GITHUB_STEP_SUMMARY when set)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.compare.outputs import render_text

    result = ctxprobe.compare(args.baseline, *args.candidates, alpha=args.alpha, fail_if_drop=args.fail_if_drop,
                              results_dir=args.results_dir, html_report=not args.no_report)
    for warning in result.warnings:
        print(f"ctxprobe: warning: {warning}", file=sys.stderr)
    print(render_text(result), end="")
    if args.junit or args.summary_md:
        from ctxprobe.evals.paired.verdict import gate_cases
        from ctxprobe.evals.sequential.ci_outputs import write_ci_outputs

        cases = gate_cases(result)
        for path in write_ci_outputs(cases, "ctxprobe gate", args.junit, args.summary_md):
            print(f"ctxprobe: wrote {path}", file=sys.stderr)
    print(f"ctxprobe: wrote {result.out_dir}", file=sys.stderr)
    return result.exit_code
