"""The README is the newcomer's page: at most 150 lines, its links land on pages and headings that exist, and
its "Run the tests" command is the one .ci/run runs (`readme_install`, then `fast_tier`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def slug(heading: str) -> str:
    """A heading's anchor as mkdocs' toc (and GitHub, for ASCII headings) makes it."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "").strip().lower())
    return re.sub(r"[\s]+", "-", text)


def test_readme_is_at_most_150_lines() -> None:
    assert len(README.read_text().splitlines()) <= 150


def test_readme_links_land() -> None:
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert local
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), f"README links to {path}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", target.read_text(), flags=re.M)
            assert anchor in {slug(h) for h in headings}, f"README links to {link}: no such heading"


def test_run_the_tests_is_what_ci_runs() -> None:
    section = README.read_text().split("## Run the tests", 1)[1]
    command = re.search(r"```bash\n(.+?)\n```", section, flags=re.S).group(1)
    ci = (ROOT / ".ci" / "run").read_text()
    install = re.search(r"^readme_install\(\) \{ (.+); \}$", ci, flags=re.M).group(1)
    fast = re.search(r"^fast_tier\(\) \{ (.+); \}$", ci, flags=re.M).group(1)
    assert command == f"{install} && {fast}"
