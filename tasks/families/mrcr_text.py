"""The mrcr family's conversation: user requests of a few kinds over a vocabulary of topics, and assistant
answers written offline from small grammars, each drawn from a seeded generator alone (no model writes them),
so every answer to the same request differs and the same seed writes the same words on any machine."""

from __future__ import annotations

import random
import string

KINDS = ("poem", "short story", "blog post", "social media post")
TOPICS = (
    "tapirs",
    "rocks",
    "lighthouses",
    "glaciers",
    "owls",
    "bicycles",
    "volcanoes",
    "libraries",
    "otters",
    "kites",
    "deserts",
    "trains",
    "mushrooms",
    "comets",
    "bridges",
    "foxes",
    "rivers",
    "lanterns",
    "beetles",
    "harbors",
    "clocks",
    "orchards",
    "whales",
    "markets",
    "chess",
    "thunderstorms",
    "gardens",
    "puzzles",
    "salmon",
    "castles",
    "coral reefs",
    "mountains",
    "snails",
    "bakeries",
    "telescopes",
    "meadows",
    "penguins",
    "ferries",
    "moths",
    "wind",
)
_ADJ = (
    "quiet",
    "restless",
    "golden",
    "ancient",
    "gentle",
    "stubborn",
    "silver",
    "distant",
    "humble",
    "bright",
    "weathered",
    "patient",
    "hidden",
    "wild",
    "tender",
    "curious",
    "hollow",
    "steady",
    "faded",
    "endless",
)
_NOUN = (
    "morning",
    "shadow",
    "harvest",
    "tide",
    "ember",
    "valley",
    "echo",
    "lantern",
    "window",
    "season",
    "threshold",
    "journey",
    "silence",
    "horizon",
    "meadow",
    "story",
    "promise",
    "current",
    "path",
    "dream",
)
_VERB = (
    "wander",
    "gather",
    "linger",
    "whisper",
    "drift",
    "glimmer",
    "settle",
    "rise",
    "listen",
    "remember",
    "wait",
    "shimmer",
    "return",
    "unfold",
    "breathe",
    "turn",
    "rest",
    "carry",
    "travel",
    "bloom",
)
_NAMES = (
    "Ansel",
    "Bettina",
    "Corin",
    "Dagny",
    "Emrys",
    "Fenna",
    "Galen",
    "Hester",
    "Ivo",
    "Jessamy",
    "Kester",
    "Liesel",
    "Marek",
    "Nell",
    "Osric",
    "Perpetua",
    "Rowan",
    "Sigrid",
    "Thaddeus",
    "Wilhelmina",
)


def request(kind: str, topic: str) -> str:
    return f"write a {kind} about {topic}"


def answer(kind: str, topic: str, rng: random.Random) -> str:
    """One assistant answer to `request(kind, topic)`."""
    return _WRITERS[kind](topic, rng)


def hash_string(rng: random.Random) -> str:
    """MRCR's random string to prepend: 10 letters and digits."""
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(10))


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _w(rng: random.Random, words: tuple[str, ...]) -> str:
    return words[rng.randrange(len(words))]


def _poem(topic: str, rng: random.Random) -> str:
    lines = [f"Of {topic} I sing, the {_w(rng, _ADJ)} and the {_w(rng, _ADJ)},"]
    for _ in range(rng.randint(3, 7)):
        lines.append(
            rng.choice(
                (
                    f"where {_w(rng, _ADJ)} {_w(rng, _NOUN)}s {_w(rng, _VERB)} beneath the {_w(rng, _NOUN)},",
                    f"the {topic} {_w(rng, _VERB)} through a {_w(rng, _ADJ)} {_w(rng, _NOUN)},",
                    f"and every {_w(rng, _NOUN)} will {_w(rng, _VERB)} and {_w(rng, _VERB)} again,",
                )
            )
        )
    lines.append(f"until the {_w(rng, _NOUN)} is {_w(rng, _ADJ)} once more.")
    return "\n".join(lines)


def _story(topic: str, rng: random.Random) -> str:
    name = _w(rng, _NAMES)
    sentences = [f"{name} had always been {_w(rng, _ADJ)} about {topic}."]
    for _ in range(rng.randint(3, 6)):
        sentences.append(
            rng.choice(
                (
                    f"One {_w(rng, _ADJ)} {_w(rng, _NOUN)}, {name} set out to {_w(rng, _VERB)} beyond the {_w(rng, _NOUN)}.",
                    f"The {topic} seemed to {_w(rng, _VERB)} whenever the {_w(rng, _NOUN)} grew {_w(rng, _ADJ)}.",
                    f"Nobody else in the village could {_w(rng, _VERB)} the way {name} did.",
                )
            )
        )
    sentences.append(f"In the end, {name} learned that {topic} {_w(rng, _VERB)} in their own {_w(rng, _ADJ)} time.")
    return " ".join(sentences)


def _blog(topic: str, rng: random.Random) -> str:
    title = f"# Why {topic.capitalize()} Deserve a {_w(rng, _ADJ).capitalize()} {_w(rng, _NOUN).capitalize()}"
    body = [f"If you have ever watched {topic} {_w(rng, _VERB)}, you know the feeling."]
    for _ in range(rng.randint(2, 5)):
        body.append(
            rng.choice(
                (
                    f"Experts say the {_w(rng, _ADJ)} {_w(rng, _NOUN)} is what makes {topic} so {_w(rng, _ADJ)}.",
                    f"My own {_w(rng, _NOUN)} began when I saw how {topic} {_w(rng, _VERB)} after a {_w(rng, _ADJ)} {_w(rng, _NOUN)}.",
                    f"Next time, take a moment to {_w(rng, _VERB)} and notice the {_w(rng, _NOUN)}.",
                )
            )
        )
    return title + "\n\n" + " ".join(body)


def _social(topic: str, rng: random.Random) -> str:
    tags = " ".join(f"#{w}" for w in (topic.replace(" ", ""), _w(rng, _NOUN), _w(rng, _ADJ)))
    return (
        f"Just saw {topic} {_w(rng, _VERB)} in the {_w(rng, _ADJ)} {_w(rng, _NOUN)} and I can't stop smiling! "
        f"Who else loves a {_w(rng, _ADJ)} {_w(rng, _NOUN)}? {tags}"
    )


_WRITERS = {"poem": _poem, "short story": _story, "blog post": _blog, "social media post": _social}
