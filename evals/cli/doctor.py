"""`ctxprobe doctor ENDPOINT` (or `--endpoint URL`, as `run` and `limit` take it): what the endpoint exposes (engine, version, context length, tokenize, cached
tokens, metrics, reasoning, chat or completions) and the flag that turns on what is missing."""

from __future__ import annotations

import argparse

from ctxprobe.evals.cli.options import JsonOutput, add_model_args, exit_codes_epilog, model_values
from ctxprobe.evals.doctor.options import DoctorOptions


class DoctorArgs(DoctorOptions, JsonOutput):
    """The doctor's options and how its report is printed."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="what an endpoint exposes, and how to turn on the rest",
        description="Check an endpoint with a few tiny requests: engine, version, context length, "
        "tokenize, cached-token reporting, metrics, reasoning fields, chat or completions; and a "
        "deployment lint (--config, --max-length): one line per finding, each naming "
        "its facts and where they were read (not a failure).",
        **exit_codes_epilog("doctor"),
    )
    endpoint = DoctorArgs.model_fields["endpoint"].description
    p.add_argument("endpoint", nargs="?", metavar="ENDPOINT", help=f"{endpoint} (the same as --endpoint URL)")
    p.add_argument("--endpoint", dest="endpoint_flag", metavar="URL", help=f"{endpoint}, as `run` and `limit` take it")
    add_model_args(p, {k: v for k, v in DoctorArgs.model_fields.items() if k != "endpoint"})
    p.set_defaults(func=run)


def _one_endpoint(positional: str | None, flag: str | None) -> str:
    """The endpoint given as ENDPOINT or as --endpoint URL: one of them, or both the same."""
    from ctxprobe.tasks.errors import UserError

    if positional and flag and positional != flag:
        raise UserError(f"two endpoints: ENDPOINT {positional} and --endpoint {flag}; doctor checks one, give it once")
    endpoint = positional or flag
    if not endpoint:
        raise UserError("no endpoint: give its base URL as ENDPOINT or --endpoint URL")
    return endpoint


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.doctor.checks import failed_checks, render_doctor
    from ctxprobe.evals.run.send.endpoint_urls import check_endpoint_url
    from ctxprobe.tasks.errors import validated

    args.endpoint = _one_endpoint(args.endpoint, args.endpoint_flag)
    opts = validated(DoctorArgs, model_values(args, DoctorArgs.model_fields))
    check_endpoint_url(opts.endpoint)
    report = ctxprobe.doctor(
        opts.endpoint,
        api_key_env=opts.api_key_env,
        model=opts.model,
        timeout_s=opts.timeout,
        context_check=not opts.no_context_check,
        config=opts.config,
        max_length=opts.max_length,
    )
    print(report.model_dump_json(indent=2) if opts.as_json else render_doctor(report))
    return 1 if failed_checks(report) else 0
