"""RULER parity for variable tracking: a `multihop` `kind: vartrack, template: ruler` prompt is lm-eval's
`ruler_vt` prompt apart from the haystack filler. The reference is built by lm-eval's own code
(`lm_eval/tasks/ruler/vt_utils.py`: the one-shot example, then the task, as `get_dataset` does). With variable
names and values masked in order of first appearance, each prompt is cut into noise blocks, `VAR` statements
and the text between them; whitespace between blocks and statements is the filler's layout (RULER writes a
statement at the start of a block's line, `noise:ruler` on a line of its own). Everything else, the frame,
must be equal: the instruction, the example's question, answer prefix and answer, the blank lines, the task's
question and answer prefix, and every statement in order."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.families import ruler_vartrack
from tests.tasks.word_tokenizer import WordTokenizer

BLOCK = ruler_vartrack.NOISE.strip()
NAME = re.compile(r"\b[A-Z]{3,5}\b")
VALUE = re.compile(r"\b\d{5}\b")
STATEMENT = re.compile(r"VAR NAME\d+ = (?:VAR NAME\d+|VALUE\d+)")


def masked(prompt: str) -> str:
    """Names and values replaced by NAME1, NAME2, ... and VALUE1, ... in order of first appearance."""
    seen: dict[str, str] = {}

    def mask(kind: str) -> object:
        def sub(match: re.Match[str]) -> str:
            if match.group(0) == "VAR":
                return "VAR"
            return seen.setdefault(kind + match.group(0), f"{kind}{sum(k.startswith(kind) for k in seen) + 1}")

        return sub

    return VALUE.sub(mask("VALUE"), NAME.sub(mask("NAME"), prompt))


def frame(prompt: str) -> list[str]:
    """The prompt's statements and its non-blank text between blocks and statements, in order."""
    parts = re.split(f"({re.escape(BLOCK)}|{STATEMENT.pattern})", masked(prompt))
    return [part for part in parts if part.strip() and part != BLOCK]


def ruler_prompt(hops: int) -> str:
    vt = pytest.importorskip(
        "lm_eval.tasks.ruler.vt_utils", reason="lm-eval's ruler extra (and transformers) is not installed"
    )
    random.seed(11)
    np.random.seed(11)
    tokenizer = WordTokenizer()
    shot = vt.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=1, max_seq_length=500, incremental=5)[0]
    [doc] = vt.sys_vartrack_w_noise_random(
        tokenizer=tokenizer, num_samples=1, max_seq_length=900, num_hops=hops, icl_example=shot
    )
    return doc["input"] + " " + doc["gen_prefix"]  # lm-eval joins them with the target delimiter " "


def ctxprobe_prompt(hops: int, mode: str = "completions") -> str:
    builder = builder_for(token_counter("estimate"))
    recipe = builder.recipe(
        family="multihop",
        params={"kind": "vartrack", "hops": hops, "chains": 0, "template": "ruler", "length_convention": "ruler"},
        haystack="noise:ruler",
        context_tokens=1024,
        depth=10.0,
        seed=3,
        mode=mode,
    )
    return builder.build(recipe).prompt


@pytest.mark.parametrize("hops", [4, 2, 7])
def test_vartrack_ruler_template_matches_lm_evals_ruler_vt_prompt(hops: int) -> None:
    ruler, ours = frame(ruler_prompt(hops)), frame(ctxprobe_prompt(hops))
    assert ours == ruler
    statements = [part for part in ours if STATEMENT.fullmatch(part)]
    assert len(statements) == ruler_vartrack.EXAMPLE_HOPS + 1 + hops + 1
    assert ours[0] == ruler_vartrack.HEAD + "\n\n"
    junction = (
        "\n\nQuestion: Find all variables that are assigned the value VALUE1 in the text above. Answer: "
        "According to the chain(s) of variable assignment in the text above, 5 variables are assgined the "
        "value VALUE1, they are:  NAME1 NAME2 NAME3 NAME4 NAME5\n\n\n\n" + ruler_vartrack.HEAD + "\n\n"
    )
    assert junction in ours  # the example's question, prefix and answer, then the task's instruction
    assert ours[-1].startswith("\n\nQuestion: Find all variables") and ours[-1].endswith("they are:")
    assert "assgined" in ours[-1]


def test_vartrack_ruler_template_in_chat_mode_ends_with_the_question() -> None:
    prompt = ctxprobe_prompt(4, mode="chat")
    assert prompt.endswith("\n\nQuestion: " + prompt.rsplit("Question: ", 1)[1])
    assert prompt.rstrip().endswith("in the text above.")


def test_vartrack_ruler_and_ctxprobe_templates_ask_the_same_chain() -> None:
    builder = builder_for(token_counter("estimate"))
    samples = {}
    for template in ("ctxprobe", "ruler"):
        recipe = builder.recipe(
            family="multihop",
            params={"kind": "vartrack", "template": template},
            haystack="noise:ruler",
            context_tokens=2048,
            depth=40.0,
            seed=5,
        )
        samples[template] = builder.build(recipe)
    assert samples["ctxprobe"].expected == samples["ruler"].expected
    assert [n.answer for n in samples["ctxprobe"].needles] == [n.answer for n in samples["ruler"].needles]
    assert samples["ctxprobe"].prompt != samples["ruler"].prompt
    assert "assgined" in samples["ruler"].prompt and "assgined" not in samples["ctxprobe"].prompt


def test_ruler_template_refuses_kinds_without_a_ruler_layout() -> None:
    from ctxprobe.tasks.errors import UserError

    builder = builder_for(token_counter("estimate"))
    recipe = builder.recipe(
        family="multihop",
        params={"kind": "keychain", "template": "ruler"},
        haystack="noise",
        context_tokens=1024,
        depth=40.0,
        seed=5,
    )
    with pytest.raises(UserError, match="template 'ruler' is RULER's variable tracking"):
        builder.build(recipe)


@pytest.mark.parametrize("template", ["ctxprobe", "ruler"])
def test_ruler_length_convention_keeps_rulers_30_generated_tokens(template: str) -> None:
    builder = builder_for(token_counter("estimate"))
    planned = {}
    for convention in ("prompt", "ruler"):
        recipe = builder.recipe(
            family="multihop",
            params={"kind": "vartrack", "template": template, "length_convention": convention},
            haystack="noise",
            context_tokens=4096,
            depth=40.0,
            seed=5,
        )
        planned[convention] = builder.build(recipe).planned_tokens
    assert 4096 - 32 <= planned["prompt"] <= 4096
    assert 4096 - 30 - 32 <= planned["ruler"] <= 4096 - 30


def test_suite_templates_leave_out_a_layout_the_task_has_none_of() -> None:
    from ctxprobe.tasks.suite import parse_suite

    suite = parse_suite(
        {
            "name": "t",
            "lengths": [1024],
            "depths": [50],
            "samples": 1,
            "templates": ["ctxprobe", "ruler"],
            "tasks": [
                {"family": "multihop", "params": {"kind": "keychain"}},
                {"family": "multihop", "params": {"kind": "vartrack"}},
            ],
        },
        "suite",
    )
    layouts = [(task.params.get("kind"), params["template"]) for task, params in suite.task_layouts()]
    assert layouts == [("keychain", "ctxprobe"), ("vartrack", "ctxprobe"), ("vartrack", "ruler")]


def test_the_builtin_ruler_suite_runs_rulers_tasks_in_both_layouts() -> None:
    from ctxprobe.evals.run.send.inline_suite import suite_from_args
    from ctxprobe.tasks.suite import builtin_suites

    assert "ruler" in builtin_suites()
    suite = suite_from_args("ruler", None, None, None, None, None, None, None)
    suite.check()
    recipes = suite.recipes(lambda mode: "estimate:4")
    assert {r.params["template"] for r in recipes} == {"ctxprobe", "ruler"}
    assert all(r.params["length_convention"] == "ruler" and r.mode == "completions" for r in recipes)
    vt = [r for r in recipes if r.family == "multihop"]
    assert vt and all(r.haystack == "noise:ruler" and r.params["hops"] == 4 and r.params["chains"] == 0 for r in vt)
