"""The prompt's surroundings of each needle, for a failure example. Prompts are not stored (the recipe
rebuilds them byte for byte), so the report rebuilds the ones it shows, with the run's token counter when
that is reachable here: `estimate` needs nothing, `local:` needs its file. A `server` counter needs the
server, which a report (often read long after the run) must not call; it says so instead."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.token_counter import TokenCounter, make_token_counter

WINDOW_CHARS = 600  # on each side of a needle


@dataclass(frozen=True)
class Window:
    """Text before a needle, the needle, and the text after it (each escaped by the template)."""

    role: str
    depth_pct: float
    char_offset: int
    before: str
    needle: str
    after: str


@dataclass
class PromptContext:
    """Either the windows around the needles, or why the prompt could not be rebuilt here."""

    windows: list[Window] = field(default_factory=list)
    prompt_chars: int = 0
    note: str | None = None


class PromptRebuilder:
    """Rebuilds prompts of one run; opens its token counter once, on first use."""

    def __init__(self, manifest: RunManifest) -> None:
        self.spec = manifest.token_counter or "estimate"
        self._counter: TokenCounter | None = None
        self._problem: str | None = None
        self._opened = False

    def _open(self) -> TokenCounter | None:
        if not self._opened:
            self._opened = True
            if self.spec.startswith("server"):
                self._problem = (
                    f"not rebuilt: the run counted tokens with the endpoint's tokenizer ({self.spec}), "
                    "which a report does not call; `ctxprobe prompt RUN_DIR SAMPLE_ID` rebuilds it "
                    "while the server is up"
                )
            elif not self.spec.startswith("estimate"):
                try:  # an offline counter (`local:`): no server is reached, so no key is needed
                    self._counter = make_token_counter(self.spec)
                except (UserError, OSError) as exc:
                    self._problem = f"not rebuilt: the run's token counter {self.spec} is not available here ({exc})"
        return self._counter

    def context(self, record: SampleRecord, max_needles: int = 4) -> PromptContext:
        """Windows around the target needles (then hops, then distractors), at most `max_needles`."""
        from ctxprobe.tasks.build import build_sample

        counter = self._open()
        if self._problem:
            return PromptContext(note=self._problem)
        try:
            sample = build_sample(record.sample.recipe, counter)
        except UserError as exc:
            return PromptContext(note=f"not rebuilt: {exc}")
        note = None
        if sample.prompt_sha256 != record.sample.prompt_sha256:
            note = (
                "the rebuilt prompt differs from the one sent (sha256 mismatch: another generator or "
                "tokenizer); shown as rebuilt"
            )
        order = {"target": 0, "hop": 1, "distractor": 2}
        needles = sorted(sample.needles, key=lambda n: (order.get(n.role, 3), n.char_offset))[:max_needles]
        windows = [_window(sample.prompt, n.role, n.depth_pct, n.char_offset, n.text) for n in needles]
        return PromptContext(
            windows=sorted(windows, key=lambda w: w.char_offset), prompt_chars=len(sample.prompt), note=note
        )


def _window(prompt: str, role: str, depth_pct: float, offset: int, text: str) -> Window:
    end = offset + len(text)
    if prompt[offset:end] != text:  # placement facts and prompt disagree: show the text where it is found
        found = prompt.find(text)
        offset, end = (found, found + len(text)) if found >= 0 else (offset, offset)
    start, stop = max(0, offset - WINDOW_CHARS), min(len(prompt), end + WINDOW_CHARS)
    before = ("…" if start else "") + prompt[start:offset]
    after = prompt[end:stop] + ("…" if stop < len(prompt) else "")
    return Window(
        role=role, depth_pct=depth_pct, char_offset=offset, before=before, needle=prompt[offset:end], after=after
    )
