"""What a family writes for one sample (`Draft`, with its `NeedleDraft`s); the builder (tasks/build.py) turns
it into an exact-length prompt."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxprobe.tasks.sample import Expected


@dataclass(frozen=True)
class NeedleDraft:
    """A piece of text to insert into the haystack at a depth (percent of the haystack).
    `unit` is False for a sentence the haystack wraps in its own style (" sentence" in prose,
    "\\n# sentence" in code); True for text that is already a unit beginning with its separator."""

    role: str
    text: str
    answer: str
    depth: float
    unit: bool = False


@dataclass(frozen=True)
class Draft:
    """What a family writes for one sample; the builder turns it into an exact-length prompt.
    Prompt = head + haystack (with needles) + tail; `tail` holds the question and the answer prefix."""

    head: str
    tail: str
    question: str
    answer_prefix: str
    needles: tuple[NeedleDraft, ...]
    expected: Expected
    max_tokens: int
    # Strings that must occur in the prompt only where the needles, head and tail put them.
    unique: tuple[str, ...] = field(default=())
    # Tokens of the nominal length kept for the answer (RULER's length convention counts 128).
    reserve_tokens: int = 0
    # What stands between the head and the first unit or needle in place of that piece's own separator
    # (RULER's `\n`, whatever the haystack); None keeps the piece's separator.
    context_opening: str | None = None
    # Where the document starts in `head`, for a family whose head holds it (aggregate, qa); None: after the
    # head (the haystack). A question placed at the start goes there.
    document_start: int | None = None
    # Figures the family measures on what it wrote, recorded on the sample (the latent family's lexical overlap).
    measures: dict[str, float] = field(default_factory=dict)
    # Chat mode's messages, for a family whose prompt is a conversation (mrcr); empty: one user message holding
    # head + haystack + tail. The text (head + tail) is then the conversation's transcript, for its hash.
    messages: tuple[dict[str, str], ...] = ()
    # The haystack's selected units in a seeded random order (Context Rot's shuffled haystack) instead of
    # the text's own: the same units, so the same length, only their order differs.
    shuffle_haystack: bool = False
