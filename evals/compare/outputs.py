"""What a comparison shows: the terminal table, compare.md / compare.csv / compare.json (with the inputs
recorded), and the diff heatmaps, written to a new `results/<time>-compare-<labels>/` folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ctxprobe.evals.compare.paired.kl_text import gate_line, kl_lines
from ctxprobe.evals.compare.paired.text import COLUMNS, P_ANSWER_COLUMNS, aligned, p_answer_cells, row_cells
from ctxprobe.evals.compare.paired.verdict import compare_verdict, undecided_text
from ctxprobe.evals.compare.sequential.gate import PASS_MEANING
from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.compare import COMPARE_JSON, AnswerProbabilityRow, CompareResult, CompareRow
from ctxprobe.evals.records.outputs import write_output
from ctxprobe.evals.records.safe_write import make_folder, replace_file
from ctxprobe.evals.records.store import run_folder


def _columns(result: CompareResult) -> list[str]:
    """The table's columns: the p_answer ones beside the accuracy ones where any row has answer probabilities."""
    return COLUMNS + P_ANSWER_COLUMNS if _with_p(result) else COLUMNS


def _with_p(result: CompareResult) -> bool:
    return any(r.p_answer is not None for r in result.rows)


def _cells(result: CompareResult, row: CompareRow) -> list[str]:
    return row_cells(row) + (p_answer_cells(row) if _with_p(result) else [])


def _blocks(result: CompareResult, candidate: str) -> dict[tuple[str, str, str], list[CompareRow]]:
    blocks: dict[tuple[str, str, str], list[CompareRow]] = {}
    for row in result.rows:
        if row.candidate == candidate:
            blocks.setdefault((row.family, row.variant, row.haystack), []).append(row)
    return blocks


def _header(result: CompareResult, candidate: str) -> list[str]:
    pairing = next(p for p in result.pairings if p.candidate == candidate)
    lines = [
        f"baseline {result.baseline.label}  vs  candidate {candidate}: {pairing.pairs} pairs "
        f"({pairing.by_prompt} same prompt, {pairing.by_task} same task fields only)"
    ]
    for side, errs in (("baseline", pairing.errored_base), ("candidate", pairing.errored_cand)):
        if errs:
            lines.append(f"  left out, errored in {side}: " + ", ".join(f"{v} {k}" for k, v in sorted(errs.items())))
    if pairing.unpaired_base or pairing.unpaired_cand:
        lines.append(f"  unpaired: {pairing.unpaired_base} baseline, {pairing.unpaired_cand} candidate samples")
    return lines


def render_text(result: CompareResult) -> str:
    """Per candidate and family/variant/haystack: the family x length rows, then the cells that differ."""
    out = [*result.warnings]
    for cand in result.candidates:
        out += _header(result, cand.label)
        for (family, variant, haystack), rows in _blocks(result, cand.label).items():
            pooled = [r for r in rows if r.level == "family"] + [r for r in rows if r.level == "family_length"]
            cells = [r for r in rows if r.level == "cell" and r.diff != 0]
            out += [
                "",
                f"{family}  {variant}  [{haystack}]",
                *aligned([_columns(result)] + [_cells(result, r) for r in pooled + cells]),
            ]
        out.append("")
    out += [*kl_lines(result), "", *_footer(result)]
    return "\n".join(out) + "\n"


def _footer(result: CompareResult) -> list[str]:
    lines = [
        f"diff = candidate - baseline (points); CI: {result.interval_method}; p: {result.p_method}; "
        f"partial: {result.partial_method}; significant at alpha={result.alpha} after Holm; "
        f"'pooled': the family over all its lengths, the gate's primary test."
    ]
    if _with_p(result):
        lines.append(
            "p_ans: the answer's probability (the chance the model writes exactly the expected answer when "
            "sampling), mean of each build over the pairs where both records have it (n, of the row's pairs "
            "where some lack it); diff in probability points with an anytime-valid betting 95% confidence "
            "sequence; 'no p_answer': none of the row's pairs has it."
        )
    significant = [r for r in result.rows if r.significant]
    lines.append(
        "rows that differ: "
        + ("; ".join(f"{r.candidate} {r.where()} {signed(r.diff)}" for r in significant) if significant else "none")
    )
    lines += signal_lines(result)
    for ex in result.examples[:12]:
        lines.append(
            f"  e.g. {ex.candidate} {ex.where} ({ex.worse} worse) expected {ex.expected}: baseline "
            f"{ex.base_extracted}, candidate {ex.cand_extracted}, needle at {ex.needle_depth:.0f}%"
        )
    if result.metric == "kl":
        lines += [*gate_line(result), PASS_MEANING]
    elif result.fail_if_drop is not None:
        verdict = compare_verdict(result)
        named = (
            "; ".join(_failed_text(result, r) for r in result.failed)
            if verdict == "FAIL"
            else undecided_text(result)
            if verdict == "UNDECIDED"
            else ""
        )
        on = " --metric p_answer" if result.metric == "p_answer" else ""
        lines.append(f"gate --fail-if-drop {result.fail_if_drop}{on}: {verdict}" + (f": {named}" if named else ""))
        lines.append(PASS_MEANING)
    return lines


def signal_lines(result: CompareResult) -> list[str]:
    """Beside the drops: `with it: ...`, one line per signal that moved (the candidate named where there are
    several)."""
    many = len(result.pairings) > 1
    return [f"with it{f' ({p.candidate})' if many else ''}: {signal}" for p in result.pairings for signal in p.signals]


def _failed_text(result: CompareResult, row: CompareRow) -> str:
    if result.metric == "p_answer" and row.p_answer is not None:
        return f"{row.candidate} {row.where()} p_answer {signed(row.p_answer.diff)} (anytime-valid, the paired gate's rule)"
    how = "anytime-valid, the paired gate's rule" if result.sequential else f"p_holm {row.p_holm:.3g}"
    return f"{row.candidate} {row.where()} {signed(row.diff)} ({how})"


def render_markdown(result: CompareResult) -> str:
    """compare.md: the inputs, then the same tables with every cell."""
    out = ["# Paired comparison", ""]
    out += [f"> **{w}**" for w in result.warnings] + ([""] if result.warnings else [])
    for run in [result.baseline, *result.candidates]:
        role = "baseline" if run is result.baseline else "candidate"
        out.append(
            f"- {role} **{run.label}**: `{run.path}` (suite {run.suite}, {run.status}, {run.samples} samples, "
            f"tokenizer {run.tokenizer}, engine {run.engine.engine if run.engine else '?'})"
        )
    for cand in result.candidates:
        out += ["", f"## {result.baseline.label} vs {cand.label}", "", *_header(result, cand.label)]
        for (family, variant, haystack), rows in _blocks(result, cand.label).items():
            ordered = (
                [r for r in rows if r.level == "family"]
                + [r for r in rows if r.level == "family_length"]
                + [r for r in rows if r.level == "cell"]
            )
            columns = _columns(result)
            out += [
                "",
                f"### {family} — {variant} — {haystack}",
                "",
                "| " + " | ".join(columns) + " |",
                "|" + "|".join("---:" for _ in columns) + "|",
            ]
            out += ["| " + " | ".join(_cells(result, r)) + " |" for r in ordered]
    out += ["", *kl_lines(result, markdown=True), "", *_footer(result)]
    return "\n".join(out) + "\n"


def _csv_row(row: CompareRow) -> dict[str, object]:
    """A row as flat csv columns: the p_answer statistics as `p_answer_<field>` (empty where the row has none)."""
    flat: dict[str, object] = row.model_dump(exclude={"p_answer"})
    pa = row.p_answer.model_dump() if row.p_answer is not None else {}
    flat.update({f"p_answer_{k}": pa.get(k) for k in AnswerProbabilityRow.model_fields})
    return flat


def write_outputs(result: CompareResult, results_dir: Path) -> CompareResult:
    """Write the folder and return the result with `out_dir` and `files` set."""
    from ctxprobe.evals.compare.diff_heatmap import write_diff_heatmaps
    from ctxprobe.evals.compare.kl_heatmap import write_kl_heatmaps

    labels = "-vs-".join([result.baseline.label, *(c.label for c in result.candidates)])
    out_dir = run_folder(results_dir, f"compare-{labels}")
    make_folder(out_dir, exist_ok=False)
    paths = [
        replace_file(out_dir / "compare.md", render_markdown(result)),
        replace_file(out_dir / "compare.csv", pd.DataFrame([_csv_row(r) for r in result.rows]).to_csv(index=False)),
    ]
    paths += write_diff_heatmaps(result, out_dir) + write_kl_heatmaps(result, out_dir)
    paths.append(out_dir / COMPARE_JSON)
    done = result.model_copy(update={"out_dir": str(out_dir), "files": [str(p) for p in paths]})
    write_output(paths[-1], done)
    return done
