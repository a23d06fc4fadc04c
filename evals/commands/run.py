"""`ctxprobe run`: generate the suite's prompts, send them to an endpoint (or the embedded engine),
record every sample, and print accuracy by depth x context."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from ctxprobe.evals.run.inline_suite import suite_from_args
from ctxprobe.evals.run.record import SampleRecord
from ctxprobe.evals.report.summary import write_report
from ctxprobe.evals.run.loop import Progress, run_recipes
from ctxprobe.evals.run.manifest import endpoint_options, new_manifest, run_folder
from ctxprobe.evals.run.store import RunStore
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import PACKAGED_MODEL, check_counter_spec


def add_endpoint_args(p: argparse.ArgumentParser) -> None:
    """Endpoint and embedded-engine options, shared by `run` and `limit`."""
    e = p.add_argument_group("endpoint (default: the embedded llama.cpp engine)")
    e.add_argument("--endpoint", action="append", metavar="URL",
                   help="OpenAI-compatible base URL; repeat for replicas of one deployment")
    e.add_argument("--model", help="model name (default: the first one GET /v1/models lists)")
    e.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key (its value is never written anywhere)")
    e.add_argument("--mode", choices=("completions", "chat"), help="completions (base models, answer prefix) or chat")
    e.add_argument("--concurrency", type=int, default=None,
                   help="requests in flight (default: the server's slots where it states them, else 4)")
    e.add_argument("--timeout", type=float, default=120.0, metavar="S", help="request timeout base, seconds")
    e.add_argument("--timeout-per-1k", type=float, default=2.0, metavar="S",
                   help="extra timeout per 1K prompt tokens (long prefills take minutes)")
    e.add_argument("--retries", type=int, default=4, help="retries on 429, 5xx and connection errors")
    e.add_argument("--token-counter", metavar="SPEC",
                   help="estimate[:CHARS] | local:PATH_OR_ID | server[:URL] (default: the engine's own tokenizer)")
    m = p.add_argument_group("embedded engine")
    m.add_argument("--model-file", metavar="GGUF", help="serve this local GGUF instead of Gemma 3 270M")
    m.add_argument("--n-ctx", type=int, help="context per slot, in tokens (default: longest prompt + answer room)")
    m.add_argument("--parallel", type=int, metavar="N",
                   help="slots: requests served at once, each with its own --n-ctx (default 1)")
    m.add_argument("--kv-cache-type", choices=("f16", "q8_0", "q4_0"), default="f16", help="KV cache type")
    m.add_argument("--threads", type=int, help="CPU threads for the embedded engine")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="run a suite against an endpoint and table accuracy by depth x context")
    s = p.add_argument_group("what to run")
    s.add_argument("--suite", help="built-in suite name (quick, nightly) or a YAML file (default: quick)")
    s.add_argument("--family", help="an inline suite of one family instead of --suite")
    s.add_argument("--params", help="family parameters, e.g. variant=multikey,distractors=8")
    s.add_argument("--lengths", help="context lengths, e.g. 1k,2k,4k or 32k,128k,1m")
    s.add_argument("--depths", help="depths in percent, e.g. 0,50,100 or 0:100:10")
    s.add_argument("--samples", type=int, help="samples per (task, length, depth) cell")
    s.add_argument("--haystack", help="prose | code | legal | noise | file:PATH | dir:PATH | hf:NAME[:split[:column]]")
    s.add_argument("--seed", type=int, help="base seed")
    add_endpoint_args(p)
    o = p.add_argument_group("output")
    o.add_argument("--label", default="", help="a name for this build, e.g. q4km-llamacpp or fp8-vllm")
    o.add_argument("--results-dir", default="results", help="where run folders are made (default: results)")
    o.add_argument("--resume", metavar="RUN_DIR", help="continue a run: keep finished samples, send the rest again")
    o.add_argument("--quiet", action="store_true", help="no live progress line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.resume:
        store = RunStore(Path(args.resume))
        manifest = store.read_manifest()
        suite = Suite.model_validate(manifest["suite"])
        opts = endpoint_options(args, manifest)
    else:
        suite = suite_from_args(args.suite, args.family, args.params, args.lengths, args.depths,
                                args.samples, args.haystack, args.seed)
        opts = endpoint_options(args, None)
        suite.check()
        check_counter_spec(opts["token_counter"])
        store = RunStore(run_folder(Path(args.results_dir), args.label))
        manifest = None
    with serving(opts, suite) as (config, engine_info, counter_spec):
        mode = config.mode
        recipes = suite.recipes(counter_spec, mode=mode)
        done, attempts = resume_state(store, {r.sample_id() for r in recipes}) if manifest else ({}, {})
        todo = [r for r in recipes if r.sample_id() not in done]
        if manifest is None:
            manifest = new_manifest(args, suite, config, engine_info, counter_spec, opts)
        manifest.update(status="running", updated=time.time())
        store.write_manifest(manifest)
        print(f"ctxprobe: {len(todo)} samples to run ({len(done)} already done) -> {store.dir}", file=sys.stderr)
        progress = Progress(total=len(todo))
        try:
            progress = asyncio.run(_send_all(todo, config, store, counter_spec, attempts, args.quiet))
            manifest["status"] = "finished"
        except KeyboardInterrupt:
            manifest["status"] = "interrupted"
            raise
        finally:
            store.close()
            manifest["updated"] = time.time()
            store.write_manifest(manifest)
    records = list(store.latest_records().values())
    print(write_report(records, store.dir, manifest))
    if progress.errors:
        print(f"ctxprobe: {progress.errors} samples ended in errors (see samples.jsonl); "
              f"`ctxprobe run --resume {store.dir}` sends them again", file=sys.stderr)
    return 0


def resume_state(store: RunStore, wanted: set[str]) -> tuple[dict[str, SampleRecord], dict[str, int]]:
    """Keep finished samples; errored ones are sent again. Rewrites samples.jsonl so ids stay unique."""
    latest = store.latest_records()
    keep = {sid: r for sid, r in latest.items() if r.error is None and sid in wanted}
    store.keep_only(list(keep.values()))
    return keep, {sid: r.attempts for sid, r in latest.items()}


async def _send_all(recipes: list[Any], config: EndpointConfig, store: RunStore, counter_spec: str,
                    attempts: dict[str, int], quiet: bool) -> Progress:
    from ctxprobe.runners.tokenize import make_counter

    counter = make_counter(counter_spec, api_key_env=config.api_key_env)
    show = (lambda rec, prog: _progress_line(prog)) if not quiet else None
    async with EndpointClient(config) as client:
        progress = await run_recipes(recipes, client, store, concurrency=config.concurrency, counter=counter,
                                     on_record=show, attempts_before=attempts)
    if not quiet:
        print(file=sys.stderr)
    return progress


def _progress_line(progress: Progress) -> None:
    end = "\r" if sys.stderr.isatty() else "\n"
    print(f"  {progress.line()}", end=end, file=sys.stderr, flush=True)


@contextlib.contextmanager
def serving(opts: dict[str, Any], suite: Suite) -> Iterator[tuple[EndpointConfig, dict[str, Any], str]]:
    """The endpoint config, the probed engine facts and the token counter spec — starting the
    embedded engine when no endpoint is given, and stopping it on the way out (errors and Ctrl-C too)."""
    from ctxprobe.runners.probe import probe_engine

    endpoints = opts["endpoints"]
    if endpoints:
        info = probe_engine(endpoints[0], api_key_env=opts["api_key_env"])
        counter = _counter_at(opts["token_counter"] or "server", endpoints[0])
        config = EndpointConfig(base_urls=tuple(endpoints), mode=opts["mode"] or "chat",
                                concurrency=opts["concurrency"] or info.default_concurrency, **_given(opts))
        yield config, info.model_dump(), counter
        return
    from ctxprobe.runners.launcher import EmbeddedEngine

    n_ctx = opts["n_ctx"] or _default_n_ctx(suite)
    parallel = 1 if opts.get("parallel") is None else opts["parallel"]  # 0 is refused, never replaced
    with EmbeddedEngine(model_file=opts["model_file"], n_ctx=n_ctx, kv_cache_type=opts["kv_cache_type"],
                        threads=opts["threads"], parallel=parallel) as engine:
        info = engine.info()
        counter = _counter_at(opts["token_counter"] or _embedded_counter(opts["model_file"]), engine.base_url)
        # The launcher knows what suits its server (one request per slot, streaming); user flags win.
        overrides = {k: opts[k] for k in ("mode", "concurrency") if opts[k]}
        yield engine.endpoint_config(**overrides, **_given(opts)), info.model_dump(), counter


def _counter_at(spec: str, url: str) -> str:
    """`server` alone means the served endpoint's own tokenizer."""
    return f"server:{url}" if spec == "server" else spec


def _embedded_counter(model_file: str | None) -> str:
    """The GGUF's own vocabulary, read offline where it can be (SentencePiece-style); else the engine's."""
    if not model_file:
        return f"local:{PACKAGED_MODEL}"
    from ctxprobe.tasks.gguf_counter import counts_offline

    return f"local:{model_file}" if counts_offline(Path(model_file)) else "server"


def _default_n_ctx(suite: Suite) -> int:
    longest = max(max(t.lengths or suite.lengths) for t in suite.tasks)
    return -(-(longest + 512) // 256) * 256


def _given(opts: dict[str, Any]) -> dict[str, Any]:
    """Client settings from the command line that apply to any endpoint."""
    given: dict[str, Any] = {"api_key_env": opts["api_key_env"], "timeout_base_s": opts["timeout"],
                             "timeout_per_1k_tokens_s": opts["timeout_per_1k"], "max_retries": opts["retries"]}
    if opts["model"]:
        given["model"] = opts["model"]
    return given
