"""A family from outside the package, with an answer kind of its own: written to a temporary module,
loaded by `--include` (a file or a folder) or by an entry point, run end to end on a fake endpoint, its
samples scored by its own scorer. What such a family touches is its own module alone."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.tasks import family_index
from tests.runners.fake_engine import FakeEngine

PLUGIN = textwrap.dedent('''
    """A family that hides a colour and wants it back in capitals: an answer kind no built-in scorer has."""
    import random

    from pydantic import BaseModel, ConfigDict

    import ctxprobe


    class ShoutParams(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)


    @ctxprobe.task_family("{name}", version="1")
    class Shout:
        Params = ShoutParams

        def draft(self, params, depth, mode, rng: random.Random):
            word = rng.choice(["amber", "cobalt", "saffron", "umber"])
            needle = ctxprobe.NeedleDraft(role="target", text=f"The secret colour is {{word}}.", answer=word,
                                          depth=depth)
            return ctxprobe.frame("Remember the secret colour.", "What is the secret colour, in capitals?",
                                  "The secret colour in capitals is", mode, (needle,),
                                  ctxprobe.Expected(kind="{kind}", answers=[word]), max_tokens=8)


    @ctxprobe.answer_kind("{kind}")
    def score_capitals(region, sample):
        want = sample.expected.answers[0].upper()
        said = re.findall(r"[A-Za-z]+", region.text)
        return ctxprobe.Score(extracted=said[:1], correct=want in said, partial=float(want in said))


    import re
''')


def _write(folder: Path, name: str, kind: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}_family.py"
    path.write_text(PLUGIN.format(name=name, kind=kind), encoding="utf-8")
    return path


def _colour(body: dict[str, Any], upper: bool) -> str:
    text = body.get("prompt") or body["messages"][-1]["content"]
    word = re.search(r"The secret colour is (\w+)\.", text).group(1)  # type: ignore[union-attr]
    return word.upper() if upper else word


def _run(tmp_path: Path, include: Path, family: str, upper: bool) -> tuple[int, list[dict[str, Any]]]:
    with FakeEngine("vllm", context_length=8192, answer=lambda body: " " + _colour(body, upper)) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--include",
                str(include),
                "--family",
                family,
                "--lengths",
                "1k",
                "--depths",
                "0,100",
                "--mode",
                "completions",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(tmp_path / "results"),
            ]
        )
    runs = list((tmp_path / "results").iterdir()) if (tmp_path / "results").exists() else []
    records = [json.loads(x) for x in (runs[0] / "samples.jsonl").read_text().splitlines()] if runs else []
    return code, records


def test_an_included_family_runs_and_its_own_scorer_scores_it(tmp_path: Path) -> None:
    module = _write(tmp_path / "plugins", "shout", "capitals")
    code, records = _run(tmp_path, module, "shout", upper=True)
    assert code == 0 and len(records) == 2
    assert {r["sample"]["expected"]["kind"] for r in records} == {"capitals"}
    assert all(r["score"]["correct"] for r in records)
    assert {r["sample"]["recipe"]["generator_version"] for r in records} == {"1"}


def test_its_scorer_not_a_built_in_one_decides(tmp_path: Path) -> None:
    """The right colour in lower case: a built-in `value` scorer would count it, the family's own does not."""
    folder = tmp_path / "plugins"
    _write(folder, "hush", "capitals_strict")
    code, records = _run(tmp_path, folder, "hush", upper=False)  # a folder of modules
    assert code == 0 and records
    assert not any(r["score"]["correct"] for r in records)


def test_a_bad_include_or_an_unscored_kind_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--include", str(tmp_path / "missing.py"), "--family", "niah", "--dry-run"]) == 2
    assert "--include" in capsys.readouterr().err
    module = _write(tmp_path / "plugins", "mute", "never_registered")
    module.write_text(module.read_text().replace('@ctxprobe.answer_kind("never_registered")', ""))
    code, records = _run(tmp_path, module, "mute", upper=True)
    err = capsys.readouterr().err
    assert code == 2 and not records
    assert "no scorer for answer kind 'never_registered'" in err and "Traceback" not in err


def test_an_entry_point_registers_a_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _write(site, "lamp", "capitals_ep").rename(site / "lamp_plugin.py")
    dist = site / "lamp_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lamp-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{family_index.ENTRY_POINT_GROUP}]\nlamp = lamp_plugin\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(family_index.FAMILIES, "discovered", False)
    assert "lamp" in family_index.family_names()
    assert family_index.family_version("lamp") == "1"
