"""`ctxprobe.report(paths, output)`: run, limit, compare and history folders as one self-contained HTML page.

Self-contained so that it can be attached to a nightly job or a release note and opened offline: CSS is
inline, every image is a `data:` URI, and the page has no script at all. Its Content-Security-Policy
allows nothing but inline styles and `data:` images, so even a slip in escaping could not run model
output; the escaping itself is jinja2's autoescape, on for every template."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxprobe.evals.records.safe_write import check_output_file, replace_file
from ctxprobe.tasks.errors import UserError

if TYPE_CHECKING:
    import jinja2

    from ctxprobe.evals.records.load import Run

REPORT_HTML = "report.html"
HistoryOf = Callable[[Path], dict[str, Any]]  # a results folder of runs -> its history, as history.json holds it


def section(path: Path, history_of: HistoryOf | None = None) -> dict[str, Any]:
    """The page section of one folder, by what the folder holds (a folder of runs needs `history_of`)."""
    from ctxprobe.evals.records.store import MANIFEST, RunStore
    from ctxprobe.evals.report.html_report.compare_section import COMPARE_JSON, compare_section
    from ctxprobe.evals.report.html_report.history_section import HISTORY_JSON, history_section, read_history

    if not path.is_dir():
        raise UserError(f"not a folder: {path}")
    if (path / COMPARE_JSON).is_file():
        return compare_section(path)
    if (path / HISTORY_JSON).is_file():
        return history_section(read_history(path), path)
    if (path / MANIFEST).is_file():
        manifest = RunStore(path).load_manifest()
        if manifest.command == "limit":
            from ctxprobe.evals.report.html_report.limit_section import LIMIT_JSON, limit_section

            if not (path / LIMIT_JSON).is_file():
                raise UserError(f"{path} is a limit folder without {LIMIT_JSON} (still running, or it failed)")
            return limit_section(path, manifest)
        from ctxprobe.evals.records.load import load_run
        from ctxprobe.evals.report.html_report.run_section import run_section

        return run_section(load_run(path, needles=False))
    return _history_of(path, history_of)


def _history_of(path: Path, history_of: HistoryOf | None) -> dict[str, Any]:
    """A results folder of runs: their history, computed now by `history_of` where the caller gives one."""
    from ctxprobe.evals.report.html_report.history_section import history_section

    if not any((p / "manifest.json").is_file() for p in path.iterdir() if p.is_dir()):
        raise UserError(f"{path} is not a run, limit, compare or history folder, nor a folder of runs")
    if history_of is None:
        raise UserError(
            f"{path} is a folder of runs; run `ctxprobe history {path}` first and report its history-<suite> folder"
        )
    return history_section(history_of(path), None)


def render_page(sections: list[dict[str, Any]], title: str) -> str:
    """The HTML of the page (autoescaped: model output and haystack text arrive as text)."""
    for i, s in enumerate(sections):
        s["anchor"] = f"s{i + 1}"
    return _templates().get_template("page.html.j2").render(title=title, sections=sections)


@functools.cache
def _templates() -> jinja2.Environment:
    """One environment a process: jinja compiles each template once and reloads it only when its file changes."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    from ctxprobe.evals.report.html_report.shown_text import printable

    return Environment(
        loader=PackageLoader("ctxprobe.evals.report.html_report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=printable,
    )


def report(
    paths: Sequence[str | Path] | str | Path, output: str | Path = REPORT_HTML, history_of: HistoryOf | None = None
) -> Path:
    """Render run, limit, compare and history folders (in the order given) into one HTML file at
    `output`; returns its path. A path that is none of these is a `UserError`, before anything is written.
    A results folder of runs is rendered as its history where `history_of` computes one."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise UserError("report needs at least one folder")
    out = Path(output)
    if out.is_dir():
        raise UserError(f"report output {out} is a folder: give a file name, e.g. {out / REPORT_HTML}")
    return _write_page([section(Path(p), history_of) for p in paths], out)


def _write_page(sections: list[dict[str, Any]], out: Path) -> Path:
    title = "ctxprobe report: " + "; ".join(str(s["title"]) for s in sections)
    check_output_file(out)  # before the work of rendering
    return replace_file(out, render_page(sections, title))


def write_folder_report(folder: str | Path, run: Run | None = None) -> Path:
    """`report.html` into a run (or compare) folder: what `ctxprobe run` calls at its end, with the `run` it has
    read already (its records as outlines), so that the page reads nothing again."""
    out = Path(folder) / REPORT_HTML
    if run is None:
        return report([folder], out)
    from ctxprobe.evals.report.html_report.run_section import run_section

    return _write_page([run_section(run)], out)
