"""A suite given on the command line instead of a YAML file: --family, --params, --lengths, --depths."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import yaml

from ctxprobe.evals.run.send.options import SuiteOptions
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.facts_axis import parse_facts
from ctxprobe.tasks.families.dataset_digest import pinned
from ctxprobe.tasks.family_index import family_class, include
from ctxprobe.tasks.items import split_items
from ctxprobe.tasks.registry import known_families
from ctxprobe.tasks.strict_yaml import DuplicateKey, load_yaml
from ctxprobe.tasks.suite import INLINE_PREFIX, Suite, load_suite, parse_suite


def parse_params(text: str | None) -> dict[str, Any]:
    """`variant=multikey,distractors=8` -> {"variant": "multikey", "distractors": 8} (YAML scalars)."""
    out: dict[str, Any] = {}
    for item in split_items(text, "--params") if text else []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"invalid --params item {item!r}: use name=value[,name=value]")
        if key.strip() in out:
            raise UserError(f"--params gives {key.strip()!r} twice ({text!r}): give each parameter once")
        try:
            out[key.strip()] = load_yaml(value.strip())
        except DuplicateKey as exc:
            raise UserError(f"--params {key.strip()}: {exc.problem}") from None
        except yaml.YAMLError:
            raise UserError(f"invalid --params value {item!r}: not a YAML scalar, list or mapping") from None
    return out


def suite_for(opts: SuiteOptions) -> Suite:
    """The suite a run's options describe."""
    for path in opts.include:
        include(path)
    return suite_from_args(
        opts.suite,
        opts.family,
        opts.params,
        opts.lengths,
        opts.depths,
        opts.samples,
        opts.haystack,
        opts.seed,
        templates=opts.templates,
        data={"qa": opts.qa, "needles": opts.needles, "mrcr": opts.mrcr},
        question_positions=opts.question_positions,
        facts=opts.facts,
        layout=opts.layout,
    )


def suite_from_args(
    suite: str | None,
    family: str | None,
    params: str | None,
    lengths: str | None,
    depths: str | None,
    samples: int | None,
    haystack: str | None,
    seed: int | None,
    templates: str | None = None,
    data: Mapping[str, str | None] | None = None,
    question_positions: str | None = None,
    facts: str | None = None,
    layout: str | None = None,
) -> Suite:
    """The named/file suite, or an inline one; lengths/depths/samples/haystack/seed/templates/facts override either.
    `data` names, by family, the data a data-backed family expands its tasks from (`DataBacked.expand_tasks`:
    `--qa` the datasets of the `qa` tasks, `--needles` the needle file of the `needles` tasks, `--mrcr` the
    published MRCR file of the `mrcr` tasks); a family that
    `runs_alone` is the whole suite when its data is given without a suite."""
    if suite and family:
        raise UserError("give either --suite or --family, not both")
    given = {name: value for name, value in (data or {}).items() if value}
    alone = [name for name in given if getattr(family_class(name), "runs_alone", False)]
    if alone and not suite:
        family = family or alone[0]
    if family:
        base: dict[str, Any] = {
            "name": f"{INLINE_PREFIX}{family}",
            "lengths": lengths or "4k",
            "depths": depths or "0,50,100",
            "tasks": [{"family": family, "params": parse_params(params)}],
        }
        data = base
    else:
        if params:
            raise UserError("--params goes with --family")
        data = load_suite(suite or "quick").model_dump()
        if lengths:
            data["lengths"] = lengths
            for task in data["tasks"]:
                task["lengths"] = None
        if depths:
            data["depths"] = depths
            for task in data["tasks"]:
                task["depths"] = None
    if samples is not None:
        data["samples"] = samples
    if haystack:
        data["haystack"] = haystack
    if seed is not None:
        data["seed"] = seed
    if facts:
        data["facts"] = parse_facts(facts)
        for task in data["tasks"]:
            task["facts"] = None
    if layout:
        data["layout"] = layout
        for task in data["tasks"]:
            task["layout"] = None
    if templates:
        data["templates"] = split_items(templates, "--templates")
    if question_positions:
        data["question_positions"] = split_items(question_positions, "--question-positions")
    parsed = parse_suite(expanded(data, given), "invalid suite options")
    return with_facts_noted(parsed, given=bool(facts))


def expanded(data: dict[str, Any], given: Mapping[str, str]) -> dict[str, Any]:
    """The suite's tasks, each data-backed family's expanded from its data (`DataBacked.expand_tasks`), and each
    dataset a task reads named by its content (`dataset_sha256`, `tasks/families/dataset_digest.py`)."""
    tasks = data["tasks"]
    for name in known_families():
        expand = getattr(family_class(name), "expand_tasks", None)
        if expand is not None:
            tasks = expand(tasks, given.get(name))
    return {**data, "tasks": pinned(tasks)}


def with_facts_noted(suite: Suite, given: bool) -> Suite:
    """The suite, after a note naming the (facts, length) cells its cap leaves out; `--facts` given to a
    suite with no task that holds facts is an error."""
    from ctxprobe.tasks.facts_axis import left_out

    layouts = suite.task_layouts()
    if given and not any("facts" in params for _, params in layouts):
        raise UserError(f"--facts: suite {suite.name!r} has no task that holds facts (family capacity)")
    cells = [cell for task, params in layouts for cell in left_out(task.family, params, task.lengths or suite.lengths)]
    if cells:
        print(
            f"note: {len(cells)} (facts, length) cell(s) left out, too many facts for the length: "
            + "; ".join(cells[:6])
            + ("; ..." if len(cells) > 6 else ""),
            file=sys.stderr,
        )
    return suite
