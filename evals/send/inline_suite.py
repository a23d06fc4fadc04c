"""A suite given on the command line instead of a YAML file: --family, --params, --lengths, --depths."""

from __future__ import annotations

import sys
from typing import Any

import yaml

from ctxprobe.evals.send.options import SuiteOptions
from ctxprobe.evals.send.published_suite import with_published_dataset
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.facts_axis import parse_facts
from ctxprobe.tasks.items import split_items
from ctxprobe.tasks.suite import Suite, load_suite, parse_suite


def parse_params(text: str | None) -> dict[str, Any]:
    """`variant=multikey,distractors=8` -> {"variant": "multikey", "distractors": 8} (YAML scalars)."""
    out: dict[str, Any] = {}
    for item in split_items(text, "--params") if text else []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"invalid --params item {item!r}: use name=value[,name=value]")
        out[key.strip()] = yaml.safe_load(value.strip())
    return out


def suite_for(opts: SuiteOptions) -> Suite:
    """The suite a run's options describe."""
    return suite_from_args(opts.suite, opts.family, opts.params, opts.lengths, opts.depths, opts.samples,
                           opts.haystack, opts.seed, templates=opts.templates, qa=opts.qa,
                           needles=opts.needles, question_positions=opts.question_positions, facts=opts.facts,
                           mrcr=opts.mrcr)


def suite_from_args(suite: str | None, family: str | None, params: str | None, lengths: str | None,
                    depths: str | None, samples: int | None, haystack: str | None, seed: int | None,
                    templates: str | None = None, qa: str | None = None, needles: str | None = None,
                    question_positions: str | None = None, facts: str | None = None, mrcr: str | None = None) -> Suite:
    """The named/file suite, or an inline one; lengths/depths/samples/haystack/seed/templates/facts override either,
    and `qa` is the dataset of every `qa` task that names none (those still without one are left out);
    `needles` is the needle file of every `needles` task that names none (`--needles` alone: those tasks only)."""
    if suite and family:
        raise UserError("give either --suite or --family, not both")
    if needles and not suite:
        family = family or "needles"
    if mrcr and not suite:
        family = family or "mrcr"
    if family:
        base: dict[str, Any] = {"name": f"inline-{family}", "lengths": lengths or "4k", "depths": depths or "0,50,100",
                                "tasks": [{"family": family, "params": parse_params(params)}]}
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
    if templates:
        data["templates"] = split_items(templates, "--templates")
    if question_positions:
        data["question_positions"] = split_items(question_positions, "--question-positions")
    data = with_published_dataset(data, "mrcr", mrcr)
    suite = parse_suite(with_needle_items(with_qa_dataset(data, qa), needles), "invalid suite options")
    return with_facts_noted(suite, given=bool(facts))


def with_facts_noted(suite: Suite, given: bool) -> Suite:
    """The suite, after a note naming the (facts, length) cells its cap leaves out; `--facts` given to a
    suite with no task that holds facts is an error."""
    from ctxprobe.tasks.facts_axis import left_out

    layouts = suite.task_layouts()
    if given and not any("facts" in params for _, params in layouts):
        raise UserError(f"--facts: suite {suite.name!r} has no task that holds facts (family capacity)")
    cells = [cell for task, params in layouts for cell in left_out(task.family, params, task.lengths or suite.lengths)]
    if cells:
        print(f"note: {len(cells)} (facts, length) cell(s) left out, too many facts for the length: "
              + "; ".join(cells[:6]) + ("; ..." if len(cells) > 6 else ""), file=sys.stderr)
    return suite


def with_qa_dataset(data: dict[str, Any], qa: str | None) -> dict[str, Any]:
    """`qa` (datasets, comma-separated: `hf:squad.parquet,hf:hotpot.json`) given to the suite's `qa` tasks that
    name none: each task gets the dataset of the format it `expect`s (any: the first). Those still without
    one are left out, with a note."""
    from ctxprobe.tasks.families.qa_data import load_qa

    datasets = [(spec, load_qa(spec).format) for spec in (split_items(qa, "--qa") if qa else [])]
    tasks = []
    for task in data["tasks"]:
        params = task.get("params") or {}
        if task["family"] == "qa" and not params.get("dataset"):
            expect = params.get("expect", "any")
            fitting = [spec for spec, fmt in datasets if expect in ("any", fmt)]
            if not fitting:
                continue
            task = {**task, "params": {**params, "dataset": fitting[0]}}
        tasks.append(task)
    if len(tasks) < len(data["tasks"]):
        print(f"note: {len(data['tasks']) - len(tasks)} qa task(s) left out: give --qa hf:PATH[,hf:PATH] (SQuAD "
              "and HotpotQA files) to run them", file=sys.stderr)
    if not tasks:
        raise UserError("the suite's tasks are all qa tasks: give --qa hf:PATH")
    return {**data, "tasks": tasks}


def with_needle_items(data: dict[str, Any], needles: str | None) -> dict[str, Any]:
    """Each `needles` task becomes one task per item of its needle file (`params.file`, else `needles`),
    the item's content for its parameters; a `needles` task that is an item itself (`needles`, `question`,
    `answers`, ... in its parameters) is checked as one and named. A suite without `needles` tasks gets one
    for `needles`."""
    from ctxprobe.tasks.families.needles_file import item_params, load_needles

    tasks: list[dict[str, Any]] = []
    given = data["tasks"]
    if needles and not any(task["family"] == "needles" for task in given):
        given = [*given, {"family": "needles", "params": {}}]  # a suite of other families, and the needles
    for task in given:
        params = dict(task.get("params") or {})
        path = params.pop("file", None) or (needles if not params.get("needles") else None)
        if task["family"] == "needles" and path is None and params:  # an item written in the suite
            tasks.append({**task, "params": item_params(params, "needles task in the suite")})
            continue
        if task["family"] != "needles" or path is None:
            tasks.append(task)
            continue
        tasks += [{**task, "params": {**params, **item}} for item in load_needles(str(path))]
    return {**data, "tasks": tasks}
