"""`ctxprobe export SUITE_OR_RUN --format lm-eval|hf DIR`: a suite's or a run's exact prompts as an
lm-eval task directory (and the command that runs it) or as a Hugging Face dataset."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("export", help="write a suite's or run's prompts as an lm-eval task directory or HF dataset",
                       description="Write the exact prompts of a suite (name or YAML) or of a run folder as an "
                                   "lm-eval task directory (scored by ctxprobe's scorer) or a Hugging Face dataset.")
    p.add_argument("source", metavar="SUITE_OR_RUN", help="built-in suite, suite YAML, or a run folder")
    p.add_argument("out_dir", metavar="DIR", help="new or empty folder to write")
    p.add_argument("--format", choices=["lm-eval", "hf"], default="lm-eval", help="default: lm-eval")
    p.add_argument("--token-counter", metavar="SPEC",
                   help="estimate[:CHARS] | local:PATH_OR_ID | server:URL (default: local:gemma3-270m for "
                        "suites, the run's own for runs)")
    p.add_argument("--lengths", help="suite override: context lengths, e.g. 1k,2k")
    p.add_argument("--depths", help="suite override: depths in percent, e.g. 0,50,100")
    p.add_argument("--samples", type=int, metavar="N", help="suite override: samples per cell")
    p.add_argument("--seed", type=int, metavar="N", help="suite override: base seed")
    p.add_argument("--base-url", default="http://127.0.0.1:8080", help="endpoint to put in the printed lm_eval command")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe

    given = dict(token_counter=args.token_counter, lengths=args.lengths, depths=args.depths, samples=args.samples,
                 seed=args.seed)
    if args.format == "hf":
        hf = ctxprobe.export_hf(args.source, args.out_dir, **given)
        print(f"wrote {hf.samples} samples to {hf.dir} (datasets.load_from_disk) and {hf.parquet} "
              f"(load_dataset('parquet', data_files=...))")
        return 0
    export = ctxprobe.export_lm_eval(args.source, args.out_dir, **given)
    print(f"wrote {len(export.tasks)} lm-eval tasks ({export.samples} samples), group {export.group}, to {export.dir}")
    commands = export.commands(base_url=args.base_url)
    print(f"base model (completions):\n  {commands['completions']}")
    print(f"chat model:\n  {commands['chat']}")
    print(f"(the samples were built for {' and '.join(export.modes)} mode: use the matching command)")
    return 0
