"""Word lists and value makers shared by the task families (keys, word values, names, ids).

A nested chain (tasks/nested.py) draws the drafts of all its cells with `drawn_apart(taken)`: inside it, every
key, value and name made here is also distinct from those of the chain's earlier cells, so a grid of many cells
still finds distinct keys among the 2,500 adjective-noun pairs. Outside it, draws are as they always were."""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CHAIN_TAKEN: ContextVar[frozenset[str]] = ContextVar("chain_taken", default=frozenset())


@contextmanager
def drawn_apart(taken: set[str]) -> Iterator[None]:
    """Draws inside the block avoid `taken` (a chain's earlier cells' keys, values and names)."""
    token = _CHAIN_TAKEN.set(frozenset(taken))
    try:
        yield
    finally:
        _CHAIN_TAKEN.reset(token)


def chain_taken() -> frozenset[str]:
    """What the chain being drawn has taken already (empty outside a chain, and for its first cell)."""
    return _CHAIN_TAKEN.get()


def _fresh(value: str, taken: set[str]) -> bool:
    """Whether `value` is new: not taken by this draft, nor by the chain it is drawn in."""
    if value in taken or value in _CHAIN_TAKEN.get():
        return False
    taken.add(value)
    return True


ADJECTIVES = (
    "amber",
    "brisk",
    "calm",
    "dapper",
    "eager",
    "fabled",
    "gentle",
    "hollow",
    "icy",
    "jolly",
    "keen",
    "lively",
    "mellow",
    "nimble",
    "opal",
    "plucky",
    "quiet",
    "rustic",
    "silent",
    "tidy",
    "upbeat",
    "vivid",
    "wary",
    "young",
    "zesty",
    "ancient",
    "bold",
    "crimson",
    "dusty",
    "elegant",
    "frosty",
    "golden",
    "humble",
    "ivory",
    "jagged",
    "knotty",
    "lunar",
    "misty",
    "noble",
    "oaken",
    "polar",
    "regal",
    "sunny",
    "tawny",
    "velvet",
    "windy",
    "azure",
    "briny",
    "cobalt",
    "drowsy",
)
NOUNS = (
    "lobster",
    "falcon",
    "teapot",
    "glacier",
    "harbor",
    "lantern",
    "meadow",
    "walrus",
    "compass",
    "saddle",
    "thimble",
    "orchard",
    "pebble",
    "quiver",
    "raven",
    "spindle",
    "trumpet",
    "umbrella",
    "violin",
    "wagon",
    "yodel",
    "zeppelin",
    "anchor",
    "beacon",
    "cactus",
    "dolphin",
    "ember",
    "fern",
    "gazelle",
    "hammock",
    "iguana",
    "jigsaw",
    "kettle",
    "locket",
    "mitten",
    "nutmeg",
    "otter",
    "parsnip",
    "quartz",
    "rhubarb",
    "satchel",
    "tortoise",
    "urchin",
    "vulture",
    "wombat",
    "yak",
    "acorn",
    "bramble",
    "cobbler",
    "dynamo",
)
# Values for the `word` kind: uncommon words, unlikely in any haystack (checked anyway).
VALUE_WORDS = (
    "quokka",
    "zither",
    "marzipan",
    "gondola",
    "kumquat",
    "platypus",
    "sarsaparilla",
    "tamarind",
    "xylophone",
    "yarmulke",
    "bandicoot",
    "cassowary",
    "dirigible",
    "escarpment",
    "filigree",
    "gramophone",
    "hacienda",
    "ibex",
    "jackfruit",
    "kinkajou",
    "lorikeet",
    "mongoose",
    "narwhal",
    "ocelot",
    "pangolin",
    "quetzal",
    "rambutan",
    "samovar",
    "tapir",
    "ukulele",
    "vicuna",
    "wallaby",
    "axolotl",
    "bobolink",
    "capybara",
    "dugong",
    "echidna",
    "fennec",
    "gharial",
    "hoatzin",
    "impala",
    "jacana",
    "kookaburra",
    "loris",
    "manatee",
    "numbat",
    "okapi",
    "pademelon",
    "quoll",
    "serval",
)
GIVEN_NAMES = (
    "Ada",
    "Bram",
    "Cleo",
    "Dov",
    "Edda",
    "Finn",
    "Greta",
    "Hugo",
    "Ines",
    "Jory",
    "Kai",
    "Lena",
    "Milo",
    "Nora",
    "Oren",
    "Pia",
    "Quin",
    "Rosa",
    "Soren",
    "Tova",
    "Ulla",
    "Vito",
    "Wren",
    "Xavi",
    "Yara",
    "Zeno",
    "Alba",
    "Bodhi",
    "Cora",
    "Dario",
    "Elio",
    "Fleur",
    "Gideon",
    "Hana",
    "Ilya",
    "Juno",
    "Kasia",
    "Linus",
    "Maren",
    "Nils",
    "Otto",
    "Priya",
    "Rafe",
    "Sable",
    "Teo",
    "Una",
    "Vera",
    "Wim",
)


def make_key(rng: random.Random, taken: set[str]) -> str:
    """A fresh `adjective-noun` key, distinct from those taken."""
    while True:
        key = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}"
        if _fresh(key, taken):
            return key


def make_value(kind: str, rng: random.Random, taken: set[str]) -> str:
    """A fresh value of a kind: `number` (7 digits), `word`, `uuid`, `hexN` (N hex chars) or `digitsN`
    (an N-digit number)."""
    while True:
        if kind == "number":
            value = str(rng.randint(1_000_000, 9_999_999))
        elif kind == "word":
            value = rng.choice(VALUE_WORDS)
        elif kind == "uuid":
            value = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        elif kind.startswith("digits"):
            digits = int(kind[6:])
            value = str(rng.randint(10 ** (digits - 1), 10**digits - 1))
        elif kind.startswith("hex"):
            value = "".join(rng.choice("0123456789abcdef") for _ in range(int(kind[3:])))
        else:
            raise ValueError(f"unknown value kind {kind!r}")
        if _fresh(value, taken):
            return value


def make_var_name(rng: random.Random, taken: set[str], letters: int) -> str:
    """A fresh upper-case variable name of `letters` letters (RULER's variable tracking), distinct from those taken."""
    while True:
        name = "".join(rng.choice(string.ascii_uppercase) for _ in range(letters))
        if _fresh(name, taken):
            return name


def spread_depths(first: float, count: int, rng: random.Random, placement: str) -> list[float]:
    """Depths for `count` needles: the first at `first`, the rest evenly spread from it to 100
    (`spread`) or drawn at random (`random`)."""
    if placement == "random":
        return [first] + [round(rng.uniform(0.0, 100.0), 3) for _ in range(count - 1)]
    if count == 1:
        return [first]
    step = (100.0 - first) / (count - 1)
    return [round(first + i * step, 3) for i in range(count)]
