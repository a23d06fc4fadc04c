"""`ctxprobe run`: parse the arguments into `RunOptions`, call `ctxprobe.run`, print the table and how
the run ended. Exit codes are the API's (`tasks/exit_codes.py`'s table, which `--help` shows; docs/run-folder.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctxprobe.evals.cli.options import add_model_args, exit_codes_epilog, model_values


def add_endpoint_args(p: argparse.ArgumentParser) -> None:
    """Endpoint and launched-engine options, shared by `run` and `limit`: the endpoint's from
    `EndpointOptions`, then one group per registered launcher (runners/launchers/), from its settings model."""
    from ctxprobe.evals.run.send.options import EndpointOptions
    from ctxprobe.runners.launchers import launchers

    first = ("endpoints", "engine")  # --endpoint, then the engine started without one
    fields = dict(
        sorted(
            EndpointOptions.model_fields.items(), key=lambda kv: first.index(kv[0]) if kv[0] in first else len(first)
        )
    )
    add_model_args(
        p.add_argument_group("endpoint (default: the embedded llama.cpp engine)"),
        {k: v for k, v in fields.items() if k != "launcher"},
        repeat={"endpoints": "--endpoint"},
    )
    for found in launchers():
        add_model_args(p.add_argument_group(found.group), found.settings.model_fields, metavars=found.metavars)


def register(sub: argparse._SubParsersAction) -> None:
    from ctxprobe.evals.run.send.options import DryRunOptions, EndpointOptions, JudgeOptions, RunOptions, SuiteOptions

    p = sub.add_parser(
        "run",
        help="run a suite against an endpoint and table accuracy by depth x context",
        description="Run a suite against an endpoint (default: the embedded llama.cpp engine) and "
        "print accuracy by depth x context.",
        **exit_codes_epilog("run"),
    )
    add_model_args(p.add_argument_group("what to run"), SuiteOptions.model_fields)
    add_endpoint_args(p)
    grouped = {
        *SuiteOptions.model_fields,
        *EndpointOptions.flat_fields(),
        *JudgeOptions.model_fields,
        *DryRunOptions.model_fields,
    }
    output = {k: v for k, v in RunOptions.flat_fields().items() if k not in grouped}
    add_model_args(p.add_argument_group("output"), output, repeat={"baseline_endpoint": "--baseline-endpoint"})
    add_model_args(p.add_argument_group("judge (optional, needle files)"), JudgeOptions.model_fields)
    add_model_args(p.add_argument_group("cost before a run (--dry-run)"), DryRunOptions.model_fields)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ctxprobe.evals.run.plan import resolve
    from ctxprobe.evals.run.send.options import RunOptions, validated

    options = validated(RunOptions, model_values(args, RunOptions.flat_fields()))
    if options.cost.dry_run:
        import ctxprobe
        from ctxprobe.evals.run.estimate import render_estimate

        print(render_estimate(ctxprobe.estimate(options)))
        return 0
    plan = resolve(options)  # bad input ends here, before the HTTP client, pandas and the engine load

    from ctxprobe.evals.run.api import run_planned

    result = run_planned(plan, on_progress=None if options.outputs.quiet else _progress_line)
    if not options.outputs.quiet:
        print(file=sys.stderr)
    if result.table:
        print(result.table)
    if result.manifest.paired_gate is not None:
        from ctxprobe.evals.compare.against import render_gate

        print(render_gate(result.manifest.paired_gate))
    if result.manifest.reuse is not None:
        from ctxprobe.evals.run.reuse import reuse_lines

        engine = result.manifest.engine.engine if result.manifest.engine is not None else None
        for line in reuse_lines(result.manifest.reuse, engine, options.endpoint.session_header):
            print(f"ctxprobe: {line}", file=sys.stderr)
    for path in result.written:
        print(f"ctxprobe: wrote {path}", file=sys.stderr)
    page = result.run_dir / "report.html"
    if not options.outputs.no_report and page.is_file():
        print(f"ctxprobe: report {page}", file=sys.stderr)
    print(f"ctxprobe: {result.message}", file=sys.stderr)
    return int(result.exit_code)


def _progress_line(progress: Any) -> None:
    end = "\r" if sys.stderr.isatty() else "\n"
    print(f"  {progress.line()}", end=end, file=sys.stderr, flush=True)
