"""`ctxprobe limit`: advertised vs configured vs accepted vs effective context length, with few requests."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from ctxprobe.evals.commands.run import add_endpoint_args, serving
from ctxprobe.evals.run.inline_suite import parse_params
from ctxprobe.evals.limit.advertised import advertised_length
from ctxprobe.evals.limit.report import render_limits
from ctxprobe.evals.limit.search import LimitConfig
from ctxprobe.evals.limit.target import TargetLimits, TaskSpec, accepted_length, effective_length
from ctxprobe.evals.run.manifest import endpoint_options, new_manifest, public_url, run_folder
from ctxprobe.evals.run.store import RunStore
from ctxprobe.tasks.errors import UserError, first_problem
from ctxprobe.tasks.lengths import parse_length
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import check_counter_spec

DEFAULT_TASKS = ("niah:variant=single", "niah:variant=multikey", "recall:kind=hex", "multihop:kind=keychain")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("limit", help="advertised vs configured vs accepted vs effective context length")
    a = p.add_argument_group("lengths")
    a.add_argument("--advertised", help="the length the model card promises, e.g. 1m")
    a.add_argument("--config", metavar="CONFIG_JSON", help="read the advertised length from a config.json")
    a.add_argument("--min-length", default="4k", help="shortest length of the effective search (default 4k)")
    a.add_argument("--max-length", help="longest length tried (default: accepted, else configured, else advertised)")
    a.add_argument("--answer-room", type=int, default=64, help="max_tokens every probe asks for (default 64)")
    a.add_argument("--skip-effective", action="store_true", help="find advertised, configured and accepted only")
    q = p.add_argument_group("effective length")
    q.add_argument("--task", action="append", metavar="FAMILY[:k=v,...]",
                   help=f"a task to measure with; repeat (default: {' '.join(DEFAULT_TASKS)})")
    q.add_argument("--haystack", default="prose", help="haystack for the effective search (default prose)")
    q.add_argument("--threshold", type=float, default=0.856, help="absolute accuracy threshold (default 0.856, RULER's)")
    q.add_argument("--relative", type=float, help="instead: keep this fraction of the shortest length's accuracy (e.g. 0.85)")
    q.add_argument("--confidence", type=float, default=0.95, help="confidence of each verdict (default 0.95)")
    q.add_argument("--max-samples", type=int, default=40, help="samples per length at most (default 40)")
    q.add_argument("--batch", type=int, default=8, help="samples per step before the interval is checked (default 8)")
    q.add_argument("--ratio", type=float, default=1.25, help="stop when the bracket is within this ratio (default 1.25)")
    add_endpoint_args(p)
    o = p.add_argument_group("output")
    o.add_argument("--label", default="", help="a name for this run")
    o.add_argument("--results-dir", default="results", help="where run folders are made (default: results)")
    p.set_defaults(func=run)


def parse_task(text: str) -> TaskSpec:
    family, _, params = text.partition(":")
    name = family.strip()
    full = validate_params(get_family(name), parse_params(params)).model_dump(mode="json")
    return TaskSpec(family=name, params=full)  # every parameter, defaults included


def run(args: argparse.Namespace) -> int:
    tasks = [parse_task(t) for t in (args.task or DEFAULT_TASKS)]
    advertised = advertised_length(args.advertised, args.config)
    min_length = parse_length(args.min_length)
    max_length = parse_length(args.max_length) if args.max_length else None
    if args.answer_room < 1:
        raise UserError("--answer-room must be at least 1")
    search_args = dict(threshold=args.threshold, relative=args.relative, confidence=args.confidence,
                       max_samples=args.max_samples, batch_size=args.batch, ratio=args.ratio)
    try:  # reject bad search options before any request
        LimitConfig(min_length=1, max_length=1, **search_args)
    except ValidationError as exc:
        where, msg, _ = first_problem(exc)
        raise UserError(f"invalid --{where.replace('_', '-')}: {msg}") from None
    check_counter_spec(args.token_counter)
    opts = endpoint_options(args, None)
    store = RunStore(run_folder(Path(args.results_dir), f"limit-{args.label}" if args.label else "limit"))
    targets = [[u] for u in opts["endpoints"]] or [[]]  # each --endpoint is its own target here
    suite = Suite.model_validate({"name": "limit", "lengths": [min_length], "depths": [50.0],
                                  "tasks": [t.model_dump() for t in tasks], "haystack": args.haystack})
    suite.check()
    results: list[TargetLimits] = []
    for urls in targets:
        with serving({**opts, "endpoints": urls}, suite) as (config, engine, counter_spec):
            from ctxprobe.runners.tokenize import make_counter

            counter = make_counter(counter_spec, api_key_env=config.api_key_env)
            if not results:
                store.write_manifest({**new_manifest(args, suite, config, engine, counter_spec, opts), "command": "limit"})
            configured = engine.get("context_length")
            known = max(configured or 0, advertised.tokens or 0)
            ceiling = max_length or (known + known // 4 if known else 2 * 1024 * 1024)  # room to see a rejection
            accepted = accepted_length(config, counter, counter_spec, start=min(min_length, ceiling),
                                       max_length=ceiling, configured=configured, answer_room=args.answer_room)
            effective = None
            top = max_length or accepted.accepted_tokens
            if not args.skip_effective and top and top >= min_length:
                search = LimitConfig(min_length=min_length, max_length=top, **search_args)
                effective = effective_length(config, counter, counter_spec, store, tasks, search, args.haystack)
            results.append(TargetLimits(
                endpoint=public_url(config.base_urls[0]), engine=engine, advertised=advertised,
                configured=configured, configured_source=engine.get("context_source"), accepted=accepted,
                effective=effective, tasks=tasks))
    store.close()
    (store.dir / "limit.json").write_text(json.dumps({"targets": [r.model_dump(mode="json") for r in results]},
                                                     indent=2) + "\n", encoding="utf-8")
    print(render_limits(results))
    print(f"ctxprobe: wrote {store.dir / 'limit.json'}", file=sys.stderr)
    return 0
