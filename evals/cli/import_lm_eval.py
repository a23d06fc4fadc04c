"""`ctxprobe import-lm-eval OUT...`: lm-eval sample logs (ctxprobe exports, RULER's 13 tasks) as a
ctxprobe run folder, its accuracy table, and for RULER, exact versus substring accuracy."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import-lm-eval",
        help="turn lm-eval sample logs into a ctxprobe run folder",
        description="Read lm-eval sample logs (samples_<task>_<time>.jsonl, written with "
        "--log_samples) and write a run folder that show/compare/report read.",
    )
    p.add_argument("outputs", nargs="+", metavar="OUT", help="lm-eval --output_path folders or sample log files")
    p.add_argument(
        "--results-dir", default="results", metavar="DIR", help="where the run folder is made (default: results)"
    )
    p.add_argument("--label", default="lm-eval", help="the run folder's label (default: lm-eval)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.report.summary import write_report

    result = ctxprobe.import_lm_eval(args.outputs, results_dir=args.results_dir, label=args.label)
    print(f"{result.run_dir}  {len(result.records)} samples from {len(result.logs)} lm-eval logs")
    print(write_report(result.records, result.run_dir, result.manifest), end="")
    ruler = result.ruler_accuracy()
    if ruler is not None:
        exact, substring = ruler
        print(
            f"RULER docs: {result.ruler_docs}; ctxprobe exact accuracy {exact:.1%}, RULER substring "
            f"(string_match_all) {substring:.1%}; {len(result.disagreements)} answers scored differently"
        )
        for d in result.disagreements[:10]:
            verdict = (
                "substring credits it, exact does not" if d.substring == 1.0 else "exact credits it, substring does not"
            )
            print(f"  {d.sample_id}: expected {' | '.join(d.expected)}; answered {d.output.strip()[:80]!r}: {verdict}")
    return 0
