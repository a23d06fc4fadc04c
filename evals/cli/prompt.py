"""`ctxprobe prompt`: rebuild one prompt from its recipe and print it (byte-identical to the one sent),
checked against the sha256 the run recorded."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV

    p = sub.add_parser("prompt", help="rebuild and print one prompt from its recipe")
    p.add_argument("source", help="a run folder, or a recipe JSON file")
    p.add_argument("sample_id", nargs="?", help="the sample id (with a run folder)")
    p.add_argument(
        "--token-counter",
        metavar="SPEC",
        help="where to reach the recipe's tokenizer (default: the run's; estimate recipes need none)",
    )
    p.add_argument(
        "--api-key-env",
        default=DEFAULT_API_KEY_ENV,
        metavar="VAR",
        help="environment variable holding the API key of a server token counter",
    )
    p.add_argument("--sha256", action="store_true", help="print the prompt's sha256 instead of the prompt")
    p.add_argument(
        "--allow-path",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder the recipe's file:/dir: haystack or local hf: dataset may be read from "
        "(repeatable; none by default: a recipe from elsewhere cannot make ctxprobe print your files)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ctxprobe.evals.records.store import RunStore
    from ctxprobe.tasks.build import build_sample
    from ctxprobe.tasks.errors import UserError, read_user_text
    from ctxprobe.tasks.recipe_paths import check_paths_allowed
    from ctxprobe.tasks.sample import Recipe
    from ctxprobe.tasks.token_counter import check_counter_spec

    check_counter_spec(args.token_counter)
    for folder in args.allow_path:
        if not Path(folder).expanduser().is_dir():
            raise UserError(f"--allow-path {folder}: not a folder")
    path = Path(args.source)
    recorded: str | None = None
    spec = args.token_counter
    if path.is_dir():
        if not args.sample_id:
            raise UserError("give a sample id with a run folder: ctxprobe prompt RUN_DIR SAMPLE_ID")
        store = RunStore(path)
        record = store.latest_records(needles=False).get(args.sample_id)  # its recipe and sha256: no needle
        if record is None:
            raise UserError(f"no sample {args.sample_id!r} in {path}")
        recipe, recorded = record.sample.recipe, record.sample.prompt_sha256
        spec = spec or store.load_manifest().token_counter or None
    elif path.is_file():
        try:
            recipe = Recipe.model_validate(json.loads(read_user_text(path, f"recipe file {args.source}")))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise UserError(f"invalid recipe file {args.source}: {str(exc).splitlines()[0]}") from None
    else:
        raise UserError(f"no run folder or recipe file at {args.source}")
    check_paths_allowed(recipe, args.allow_path)
    counter = None
    if spec and not recipe.tokenizer.startswith("estimate"):
        from ctxprobe.runners.served import open_counter  # the HTTP client loads only when a server counts

        counter = open_counter(spec, endpoint=None, api_key_env=args.api_key_env)
    sample = build_sample(recipe, counter)
    if recorded is not None and sample.prompt_sha256 != recorded:
        raise UserError(
            f"the rebuilt prompt of {recipe.sample_id()} has sha256 {sample.prompt_sha256[:16]}…, "
            f"the run recorded {recorded[:16]}…: this ctxprobe builds it differently "
            f"(generator version {recipe.generator_version} in the run)"
        )
    sys.stdout.write(sample.prompt_sha256 + "\n" if args.sha256 else sample.prompt)
    return 0
