"""RULER's layout gives the model at least the room RULER gives it: each task of the built-in `ruler` suite,
built under `template: ruler`, may generate at least lm-eval's `max_gen_toks` for that RULER task (a
published score was measured with that room; a tighter budget would cut answers RULER reads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.sample import Recipe

QA = Path(__file__).parent / "fixtures" / "qa"
# The built-in ruler suite's tasks, in its order, as lm-eval names their yaml files.
RULER_TASKS = [
    "niah_single_1",
    "niah_single_2",
    "niah_single_3",
    "niah_multikey_1",
    "niah_multikey_2",
    "niah_multikey_3",
    "niah_multivalue",
    "niah_multiquery",
    "vt",
    "cwe",
    "fwe",
    "qa_squad",
    "qa_hotpot",
]


def lm_eval_generation_tokens(task: str) -> int:
    """`max_gen_toks` of lm-eval's RULER task, following its yaml `include`s (the niah tasks include one)."""
    yaml = pytest.importorskip("yaml")
    ruler = pytest.importorskip("lm_eval.tasks.ruler", reason="lm-eval's ruler tasks are not installed")
    folder = Path(ruler.__file__).parent if ruler.__file__ else Path(next(iter(ruler.__path__)))

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))  # lm-eval's hooks
    config = yaml.load((folder / f"{task}.yaml").read_text(encoding="utf-8"), Loader=Loader)
    while "max_gen_toks" not in config.get("generation_kwargs", {}):
        config = yaml.load((folder / config["include"]).read_text(encoding="utf-8"), Loader=Loader)
    return int(config["generation_kwargs"]["max_gen_toks"])


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_every_ruler_task_may_generate_at_least_what_lm_evals_ruler_allows(mode: str) -> None:
    suite = suite_from_args(
        "ruler",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        data={"qa": f"hf:{QA / 'squad.json'},hf:{QA / 'hotpotqa.json'}"},
    )
    assert len(suite.tasks) == len(RULER_TASKS)
    checked = []
    for name, (task, params) in zip(
        RULER_TASKS, [(t, p) for t, p in suite.task_layouts() if p.get("template") == "ruler"]
    ):
        sample = build_sample(
            Recipe(
                family=task.family,
                params=params,
                haystack=task.haystack or suite.haystack,
                context_tokens=4096,
                depth=50.0,
                seed=0,
                mode=mode,
            )
        )
        assert sample.max_tokens >= lm_eval_generation_tokens(name), (name, sample.max_tokens)
        checked.append(name)
    assert checked == RULER_TASKS


def test_ctxprobes_own_layout_keeps_its_tight_budget() -> None:
    suite = suite_from_args("ruler", None, None, None, None, None, None, None)
    [(task, params)] = [(t, p) for t, p in suite.task_layouts()[:2] if p.get("template") == "ctxprobe"]
    sample = build_sample(
        Recipe(
            family=task.family,
            params=params,
            haystack=task.haystack or suite.haystack,
            context_tokens=4096,
            depth=50.0,
            seed=0,
            mode="completions",
        )
    )
    assert sample.max_tokens < lm_eval_generation_tokens("niah_single_1")
