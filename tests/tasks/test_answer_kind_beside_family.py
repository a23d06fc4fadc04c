"""A family and its own answer kind in one module: written to a temporary file that imports tasks alone (as a
built-in family under tasks/families does), loaded as `--include` loads it, its samples scored through
`score_sample` by the kind it registered beside itself; and the module, its samples and its scorer need no
evals module at all."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks import family_index
from ctxprobe.tasks.build import build_sample, token_counter
from ctxprobe.tasks.sample import Recipe, Sample

MODULE = textwrap.dedent('''
    """`{family}`: a probe bound for a planet, asked back; its answer kind `{kind}` wants that planet and no other."""

    from __future__ import annotations

    import random

    from pydantic import BaseModel, ConfigDict

    from ctxprobe.tasks.family import AnswerRegion, Draft, Expected, NeedleDraft, Score, answer_kind, frame, task_family
    from ctxprobe.tasks.answers.tokens import norm_tokens
    from ctxprobe.tasks.sample import Mode, Sample

    PLANETS = ("Mercury", "Venus", "Mars", "Jupiter", "Saturn", "Neptune")


    class OrbitParams(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)


    @task_family("{family}", version="1")
    class Orbit:
        Params = OrbitParams

        def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
            planet = rng.choice(PLANETS)
            needle = NeedleDraft(role="target", text=f"The probe is bound for {{planet}}.", answer=planet, depth=depth)
            return frame("Remember where the probe is bound.", "Which planet is the probe bound for?",
                         "The probe is bound for", mode, (needle,), Expected(kind="{kind}", answers=[planet]),
                         max_tokens=8)


    @answer_kind("{kind}")
    def score_planet(region: AnswerRegion, sample: Sample) -> Score:
        said = set(norm_tokens(region.affirmed().text))  # "not Mars" offers no Mars
        named = [p for p in PLANETS if p.casefold() in said]
        want = sample.expected.answers[0]
        return Score(extracted=named, correct=named == [want], partial=1 / len(named) if want in named else 0.0)
''')


def _write(folder: Path, family: str, kind: str) -> Path:
    path = folder / f"{family}.py"
    path.write_text(MODULE.format(family=family, kind=kind), encoding="utf-8")
    return path


def _sample(family: str, mode: str, seed: int = 3) -> Sample:
    return build_sample(Recipe(family=family, context_tokens=1024, seed=seed, mode=mode), token_counter("estimate"))


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_an_included_family_scores_its_samples_by_the_kind_beside_it(tmp_path: Path, mode: str) -> None:
    family, kind = f"orbit_{mode}", f"planet_{mode}"
    assert family_index.include(str(_write(tmp_path, family, kind))) == [family]
    sample = _sample(family, mode)
    assert sample.expected.kind == kind
    planet = sample.expected.answers[0]
    rival = next(p for p in ("Mercury", "Venus", "Mars") if p != planet)

    right = score_sample(sample, f" {planet}.")
    assert right.correct and right.partial == 1.0 and right.extracted == [planet]
    assert score_sample(sample, f" {planet}, not {rival}.").correct  # a negated rival is not offered

    for text in (f" {rival}.", f" {planet} or {rival}."):
        wrong = score_sample(sample, text)
        assert not wrong.correct and rival in wrong.extracted, text
    assert score_sample(sample, f" {rival}.").partial == 0.0
    assert score_sample(sample, f" {planet} or {rival}.").partial == 0.5


def test_the_family_and_its_scorer_need_no_evals_module(tmp_path: Path) -> None:
    """Built, looked up and scored from tasks alone: nothing under ctxprobe.evals is imported."""
    module = _write(tmp_path, "orbit_alone", "planet_alone")
    code = textwrap.dedent(f"""
        import sys
        from ctxprobe.tasks import family_index
        from ctxprobe.tasks.answers.kinds import scorer_for
        from ctxprobe.tasks.answers.region import answer_region
        from ctxprobe.tasks.build import build_sample, token_counter
        from ctxprobe.tasks.sample import Recipe

        family_index.include({str(module)!r})
        sample = build_sample(Recipe(family="orbit_alone", context_tokens=1024, seed=3), token_counter("estimate"))
        planet = sample.expected.answers[0]
        score = scorer_for("planet_alone")(answer_region(sample, " " + planet), sample)
        assert score.correct, score
        loaded = sorted(m for m in sys.modules if m.startswith(("ctxprobe.evals", "ctxprobe.runners")))
        assert not loaded, loaded
    """)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr


def test_an_unknown_kind_names_the_known_ones_the_families_own_included() -> None:
    from ctxprobe.tasks.answers.kinds import scorer_for
    from ctxprobe.tasks.errors import UserError

    with pytest.raises(UserError) as caught:
        scorer_for("no_such_kind")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("no scorer for answer kind 'no_such_kind'; known: ")
    known = message.partition("known: ")[2].partition(" (")[0].split(", ")
    assert {"value", "values", "string", "any", "chain", "name", "nodes", "mrcr", "exact", "number"} <= set(known)
