"""`ctxprobe.limit(...)`: the advertised, configured, accepted and effective context lengths of one or
more endpoints (each `endpoints` entry is measured on its own; none: the embedded engine)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxprobe.evals.limit.advertised import advertised_length
from ctxprobe.evals.limit.options import LimitOptions
from ctxprobe.evals.limit.search import LimitConfig, SearchSettings
from ctxprobe.evals.limit.target import accepted_length, effective_length
from ctxprobe.evals.log.limit import LIMIT_JSON, LimitOutput, TargetLimits, TaskSpec
from ctxprobe.evals.log.manifest import RunManifest, ctxprobe_version, public_url, saved_options
from ctxprobe.evals.log.outputs import write_output
from ctxprobe.evals.log.store import RunStore, run_folder
from ctxprobe.evals.send.inline_suite import parse_params
from ctxprobe.evals.send.options import validated
from ctxprobe.evals.send.serving import serving
from ctxprobe.runners.settings import part
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.family_index import include
from ctxprobe.tasks.lengths import parse_length
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.suite import Suite

@dataclass(frozen=True)
class LimitReport:
    run_dir: Path
    targets: list[TargetLimits]


def parse_task(text: str) -> TaskSpec:
    family, _, params = text.partition(":")
    name = family.strip()
    full = validate_params(get_family(name), parse_params(params)).model_dump(mode="json")
    return TaskSpec(family=name, params=full)  # every parameter, defaults included


def limit(options: LimitOptions | None = None, **kwargs: object) -> LimitReport:
    """Measure the four lengths; writes `limit.json` (and the effective search's samples) into a run folder."""
    opts = options if options is not None else validated(LimitOptions, dict(kwargs))
    for path in opts.include:  # families of one's own, for --task
        include(path)
    tasks = [parse_task(t) for t in opts.tasks]
    advertised = advertised_length(opts.advertised, opts.config)
    min_length = parse_length(opts.min_length)
    max_length = parse_length(opts.max_length) if opts.max_length else None
    if max_length is not None and max_length < min_length:
        raise UserError(f"--max-length {opts.max_length} is below --min-length {opts.min_length}")
    search_args = part(opts, SearchSettings).model_dump()  # checked by the options already
    store = RunStore(run_folder(Path(opts.results_dir), f"limit-{opts.label}" if opts.label else "limit"))
    suite = Suite.model_validate({"name": "limit", "lengths": [min_length], "depths": [50.0],
                                  "tasks": [t.model_dump() for t in tasks], "haystack": opts.haystack})
    suite.check()
    results: list[TargetLimits] = []
    for urls in [[u] for u in opts.endpoints] or [[]]:  # each endpoint is its own target here
        with serving(opts.model_copy(update={"endpoints": urls}), suite) as served:
            config, engine, counter = served.config, served.engine, served.counter
            if not results:
                store.write_manifest(RunManifest(
                    command="limit", ctxprobe_version=ctxprobe_version(), label=opts.label,
                    endpoints=[public_url(u) for u in opts.endpoints], model=served.model, engine=engine,
                    mode=served.mode, suite=suite, tokenizer=builder_for(counter).tokenizer,
                    token_counter=served.counter_spec, api_key_env=opts.api_key_env,
                    options=saved_options(opts)))
            configured = engine.context_length
            known = max(configured or 0, advertised.tokens or 0)
            ceiling = max_length or (known + known // 4 if known else 2 * 1024 * 1024)  # room to see a rejection
            accepted = accepted_length(config, counter, start=min(min_length, ceiling), max_length=ceiling,
                                       configured=configured, answer_room=opts.answer_room)
            effective = None
            top = max_length or accepted.accepted_tokens
            if not opts.skip_effective and top and top >= min_length:
                search = LimitConfig(min_length=min_length, max_length=top, **search_args)
                effective = effective_length(config, counter, store, tasks, search, opts.haystack)
            results.append(TargetLimits(
                endpoint=public_url(config.base_urls[0]), engine=engine, advertised=advertised,
                configured=configured, configured_source=engine.context_source, accepted=accepted,
                effective=effective, tasks=tasks))
    store.close()
    if not results:
        raise UserError("no endpoint was measured")
    write_output(store.dir / LIMIT_JSON, LimitOutput(targets=results))
    manifest = store.load_manifest()
    manifest.status = "finished"
    store.write_manifest(manifest)
    return LimitReport(run_dir=store.dir, targets=results)
