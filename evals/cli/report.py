"""`ctxprobe report PATH... [-o report.html]`: run, limit, compare and history folders as one
self-contained HTML page (see `evals/report/html_report/render.py`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="render run, limit, compare and history folders into one HTML page",
        description="Render run, limit, compare and history folders into one self-contained HTML "
        "page that opens offline (inline CSS and images, no scripts).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="run, limit, compare or history folders, in page order")
    p.add_argument(
        "-o", "--output", default="report.html", metavar="HTML", help="the page to write (default: report.html)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.records.safe_write import check_output_target

    check_output_target(args.output, "-o")  # refused before the folders are read, in one line
    out = ctxprobe.report(args.paths, args.output)
    print(f"{out}  ({out.stat().st_size / 1e6:.2f} MB)")
    return 0
