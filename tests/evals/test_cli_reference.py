"""docs/reference/cli.md is every subcommand's `--help`: the committed page equals a fresh rendering from the
parsers, and each of its sections equals what `ctxprobe SUB --help` prints at the page's width."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxprobe.evals.cli import main, reference

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md"
REWRITE = "python -m ctxprobe.evals.cli.reference > docs/reference/cli.md"


def committed_sections() -> dict[str, str]:
    """The page's help texts by heading (`ctxprobe`, `run`, ...)."""
    found = re.findall(r"^## (\S+)\n\n```text\n(.*?)\n```$", PAGE.read_text(), flags=re.M | re.S)
    return dict(found)


def test_committed_page_is_the_rendering() -> None:
    assert PAGE.read_text() == reference.render(), f"docs/reference/cli.md is stale: rewrite it with `{REWRITE}`"


def test_page_holds_every_subcommand() -> None:
    assert list(committed_sections()) == ["ctxprobe", *(name.replace("_", "-") for name in main.COMMANDS)]


@pytest.mark.parametrize("command", [name.replace("_", "-") for name in main.COMMANDS])
def test_section_is_what_help_prints(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(reference.WIDTH))
    with pytest.raises(SystemExit) as ended:
        main.main([command, "--help"])
    assert ended.value.code == 0
    printed = capsys.readouterr().out.rstrip()
    assert committed_sections()[command] == printed, f"`ctxprobe {command} --help` differs from docs/reference/cli.md"
