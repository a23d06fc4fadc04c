"""The report's run page says what ran: an inline suite by what it holds, the layout, and what a chain is where
the run has chains (`evals/report/html_report/run_section.py`)."""

from __future__ import annotations

from ctxprobe.evals.report.html_report.run_section import layout_rows, suite_text
from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.tasks.suite import load_suite


def test_an_inline_suite_is_named_by_what_it_holds() -> None:
    inline = suite_from_args(None, "niah", "variant=single", "1k,2k", "0,50", None, None, None)
    assert inline.name == "inline-niah"  # the manifest keeps the name
    assert suite_text(inline) == "niah variant=single at 1K, 2K x depths 0, 50% (given on the command line)"
    assert suite_text(load_suite("nightly")) == "nightly"


def test_the_layout_and_what_a_chain_is() -> None:
    nested = dict(layout_rows(load_suite("nightly")))
    assert nested["layout"] == "nested" and "intervals count chains" in nested["chain"]
    assert layout_rows(load_suite("nightly-independent")) == [
        ("layout", "independent: each sample a prompt of its own")
    ]
