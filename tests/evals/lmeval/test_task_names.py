"""lm-eval task names come from a recipe's typed parameters (never from the report's display label)."""

from __future__ import annotations

from typing import Any

from ctxprobe.evals.lmeval.export import task_name
from ctxprobe.evals.report.table import variant_label
from tests.evals.factories import make_sample


def _name(params: dict[str, Any], mode: str = "completions", family: str = "niah") -> str:
    return task_name(make_sample(["1234567"], family=family, params=params, context_tokens=2048, mode=mode))  # type: ignore[arg-type]


def test_defaults_are_left_out_and_variant_comes_first() -> None:
    assert _name({}) == "ctxprobe_niah_single_2048"
    assert _name({"variant": "multikey", "distractors": 3}) == "ctxprobe_niah_multikey_2048"
    assert (
        _name({"variant": "multikey", "value_kind": "uuid", "distractors": 5}, mode="chat")
        == "ctxprobe_niah_multikey_value_kinduuid_distractors5_2048_chat"
    )


def test_the_name_and_the_label_name_the_same_parameters() -> None:
    params = {"variant": "multivalue", "values": 8, "template": "ruler"}
    assert variant_label(params, "niah") == "variant=multivalue, template=ruler, values=8"
    assert _name(params) == "ctxprobe_niah_multivalue_templateruler_values8_2048"


def test_a_value_holding_the_labels_separators_stays_whole() -> None:
    # a family no registry knows keeps its parameters as recorded; a label would read "a=x, y=z"
    assert _name({"a": "x, y=z"}, family="ruler") == "ctxprobe_ruler_ax_y_z_2048"
