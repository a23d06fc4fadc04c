"""`ctxprobe prompt`: rebuild one prompt from its recipe and print it (byte-identical to the one sent)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from ctxprobe.evals.run.store import RunStore
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Recipe


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("prompt", help="rebuild and print one prompt from its recipe")
    p.add_argument("source", help="a run folder, or a recipe JSON file")
    p.add_argument("sample_id", nargs="?", help="the sample id (with a run folder)")
    p.add_argument("--token-counter", help="override the recipe's token counter (same tokenizer, another place)")
    p.add_argument("--sha256", action="store_true", help="print the prompt's sha256 instead of the prompt")
    p.set_defaults(func=run)


def load_recipe(source: str, sample_id: str | None) -> Recipe:
    path = Path(source)
    if path.is_dir():
        if not sample_id:
            raise UserError("give a sample id with a run folder: ctxprobe prompt RUN_DIR SAMPLE_ID")
        record = RunStore(path).latest_records().get(sample_id)
        if record is None:
            raise UserError(f"no sample {sample_id!r} in {path}")
        return record.sample.recipe
    if not path.is_file():
        raise UserError(f"no run folder or recipe file at {source}")
    try:
        return Recipe.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise UserError(f"invalid recipe file {source}: {str(exc).splitlines()[0]}") from None


def run(args: argparse.Namespace) -> int:
    recipe = load_recipe(args.source, args.sample_id)
    if args.token_counter:
        recipe = recipe.model_copy(update={"token_counter": args.token_counter})
    from ctxprobe.runners.tokenize import make_counter  # the server kind needs the runners' client

    sample = build_sample(recipe, make_counter(recipe.token_counter))
    sys.stdout.write(sample.prompt_sha256 + "\n" if args.sha256 else sample.prompt)
    return 0
