"""`ctxprobe tasks`: the task families, their parameters with defaults, haystacks and suites."""

from __future__ import annotations

import argparse
import sys

from ctxprobe.tasks.haystack import known_kinds
from ctxprobe.tasks.registry import get_family, known_families
from ctxprobe.tasks.suite import builtin_suites


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help="list task families, their parameters, haystacks and suites")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in known_families():
        family = get_family(name)
        doc = (sys.modules[type(family).__module__].__doc__ or "").strip().splitlines()
        print(f"{name}: {doc[0] if doc else ''}")
        for field, info in family.Params.model_fields.items():
            print(f"  {field} = {info.default!r}  {info.description or ''}")
    print(f"haystacks: {', '.join(known_kinds())}, file:PATH, dir:PATH, hf:NAME[:split[:column]]")
    print(f"suites: {', '.join(builtin_suites())} (or a YAML file)")
    return 0
