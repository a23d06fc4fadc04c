"""`ctxprobe doctor ENDPOINT`: what the endpoint exposes (engine, version, context length, tokenize, cached
tokens, metrics, reasoning, chat or completions) and the flag that turns on what is missing."""

from __future__ import annotations

import argparse

from ctxprobe.evals.commands.options import number


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV

    p = sub.add_parser("doctor", help="what an endpoint exposes, and how to turn on the rest",
                       description="Check an endpoint with a few tiny requests: engine, version, context length, "
                                   "tokenize, cached-token reporting, metrics, reasoning fields, chat or completions. "
                                   "Exit codes: 0 no check failed (a missing feature is not a failure), 1 a check "
                                   "failed (a --model the endpoint does not serve, a mode that does not answer), "
                                   "2 bad input or no answer at all.")
    p.add_argument("endpoint", help="the endpoint's base URL, e.g. http://gpu-node:8000")
    p.add_argument("--api-key-env", default=DEFAULT_API_KEY_ENV, metavar="VAR",
                   help=f"environment variable holding the API key (default: {DEFAULT_API_KEY_ENV})")
    p.add_argument("--model", help="model name (default: the first one GET /v1/models lists)")
    p.add_argument("--timeout", type=number, default=None, metavar="S",
                   help="how long each probe may wait for an answer, seconds (default: the run's, 120)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-context-check", action="store_true",
                   help="skip the one prompt near the stated context length (a long prefill on a long context)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.doctor.checks import DEFAULT_TIMEOUT_S, failed_checks, render_doctor
    from ctxprobe.evals.send.endpoint_urls import check_endpoint_url

    check_endpoint_url(args.endpoint)
    if args.timeout is not None and args.timeout <= 0:
        from ctxprobe.tasks.errors import UserError

        raise UserError(f"--timeout {args.timeout:g} must be positive")
    report = ctxprobe.doctor(args.endpoint, api_key_env=args.api_key_env, model=args.model,
                             timeout_s=args.timeout or DEFAULT_TIMEOUT_S,
                             context_check=not args.no_context_check)
    print(report.model_dump_json(indent=2) if args.json else render_doctor(report))
    return 1 if failed_checks(report) else 0
