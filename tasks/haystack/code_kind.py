"""The `code` haystack: plausible, syntactically valid Python modules.

One block is one module of exactly `block_units` non-blank lines: a docstring, imports, constants, then
functions and classes with docstrings, loops, conditions and returns. A unit is one line with its
separator in front: "\\n" plus one "\\n" per blank line before it, then the indentation. Blank lines are
folded into the next line's unit because a lone "\\n" unit would merge with the next "\\n" into one token.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import cache
from typing import TypeVar

from ctxprobe.tasks.haystack import code_vocab as vocab
from ctxprobe.tasks.haystack.base import (
    GeneratedHaystack,
    Haystack,
    haystack_kind,
    no_argument,
    partition,
)

INDENT = "    "
T = TypeVar("T")


@cache
def _fields(template: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\{(\w+)\}", template))


class _ModuleWriter:
    """Writes one module's lines; every choice comes from the block's `random.Random`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rand = rng.random
        self.lines: list[str] = []
        self.defined: list[str] = [self.func_name() for _ in range(3)]

    # -- small draws -------------------------------------------------------------------------------
    def pick(self, seq: Sequence[T]) -> T:
        return seq[int(self.rand() * len(seq))]

    def between(self, low: int, high: int) -> int:
        return low + int(self.rand() * (high - low + 1))

    def emit(self, depth: int, text: str, blank: int = 0) -> None:
        self.lines.append("\n" * (1 + blank) + INDENT * depth + text)

    def noun(self, plural: bool = False) -> str:
        pair = vocab.NOUNS[int(self.rand() * len(vocab.NOUNS))]
        return pair[1] if plural else pair[0]

    def func_name(self) -> str:
        verb = vocab.VERBS[int(self.rand() * len(vocab.VERBS))][0]
        roll = self.rand()
        if roll < 0.5:
            return f"{verb}_{self.noun()}"
        if roll < 0.8:
            return f"{verb}_{self.noun(plural=True)}"
        return f"{verb}_{self.pick(vocab.QUALIFIERS)}_{self.noun()}"

    def class_name(self) -> str:
        return self.noun().capitalize() + self.pick(vocab.CLASS_SUFFIXES)

    def var_name(self) -> str:
        roll = self.rand()
        if roll < 0.3:
            return self.noun()
        if roll < 0.55:
            return self.noun(plural=True)
        if roll < 0.7:
            return f"{self.pick(vocab.QUALIFIERS)}_{self.noun()}"
        return self.pick(vocab.PLAIN_NAMES)

    def literal(self) -> str:
        roll = self.rand()
        if roll < 0.35:
            return self.pick(("0", "1", "2", "3", "4", "8", "10", "16", "32", "64", "100", "256", "1024", "4096"))
        if roll < 0.65:
            return f'"{self.noun()}"'
        return self.pick(("None", "True", "False", "[]", "{}", '""', "()"))

    def phrase(self, template: str) -> str:
        """Fill {noun} (singular), {n1}/{n2} (plural nouns), {g1}/{g2} (gerunds), {v1} (a verb)."""
        fields: dict[str, str] = {}
        for name in _fields(template):
            if name == "noun":
                fields[name] = self.noun()
            elif name[0] == "n":
                fields[name] = self.noun(plural=True)
            else:
                fields[name] = self.pick(vocab.VERBS)[1 if name[0] == "g" else 0]
        return template.format(**fields)

    def docstring(self) -> str:
        verb = self.pick(vocab.VERBS)[0].capitalize()
        tail = self.phrase(self.pick(vocab.DOC_TAILS))
        return f'"""{verb} the {self.noun(plural=self.rand() < 0.5)} {tail}."""'

    # -- expressions -------------------------------------------------------------------------------
    def expr(self, names: list[str]) -> str:
        a = self.pick(names)
        k = int(self.rand() * 14)
        if k == 0:
            return f"{self.pick(self.defined)}({a})"
        if k == 1:
            return f'{a}.get("{self.noun()}", {self.literal()})'
        if k == 2:
            return f"len({a})"
        if k == 3:
            return f"{a} + {self.between(1, 9)}"
        if k == 4:
            return f"{a}.strip().lower()"
        if k == 5:
            return f"[item for item in {a} if item]"
        if k == 6:
            return f"{a}[{self.between(1, 4)}:]"
        if k == 7:
            return f"sorted({a}, key=len)"
        if k == 8:
            return f'{a}.split("{self.pick((",", ":", "/", "=", "|"))}")'
        if k == 9:
            return f'Path({a}) / "{self.noun()}.json"'
        if k == 10:
            return f"{self.pick(('max', 'min'))}({a}, {self.between(0, 64)})"
        if k == 11:
            return f"{a} or {self.literal()}"
        if k == 12:
            return f"{self.pick(self.defined)}({a}, {self.pick(names)})"
        return self.literal()

    def condition(self, names: list[str]) -> str:
        a = self.pick(names)
        k = int(self.rand() * 8)
        if k == 0:
            return f"not {a}"
        if k == 1:
            return f"{a} is None"
        if k == 2:
            return f"{a} > {self.between(0, 100)}"
        if k == 3:
            return f'"{self.noun()}" in {a}'
        if k == 4:
            return f"len({a}) >= {self.between(1, 32)}"
        if k == 5:
            return f'{a}.startswith("{self.noun()}")'
        if k == 6:
            return f"isinstance({a}, {self.pick(('dict', 'str', 'list', 'int'))})"
        others = [n for n in names if n != a]
        return f"{a} and {self.pick(others)}" if others else f"{a} is not None"

    # -- statements --------------------------------------------------------------------------------
    def simple(self, depth: int, names: list[str], in_loop: bool, method: bool, last: bool) -> None:
        """One line; `continue`, `break` and `raise` only end a nested block (`last`)."""
        k = int(self.rand() * 12)
        a = self.pick(names)
        if k <= 3:
            target = self.var_name()
            self.emit(depth, f"{target} = {self.expr(names)}")
            names.append(target)
        elif k == 4:
            self.emit(depth, f"{self.pick(vocab.COUNTERS)} += {self.between(1, 4)}")
        elif k == 5:
            self.emit(depth, f"{a}.append({self.expr(names)})")
        elif k == 6:
            self.emit(depth, f'logger.debug("{self.phrase("{g1} {noun}")} %s", {a})')
        elif k == 8 and method:
            self.emit(depth, f"self._{self.noun(plural=True)}[{a}] = {self.expr(names)}")
        elif k == 9 and in_loop and last:
            self.emit(depth, self.pick(("continue", "break")))
        elif k == 10 and last and depth > 1:
            self.emit(depth, f'raise {self.pick(vocab.EXCEPTIONS)}(f"{self.noun()} {{{a}!r}} is not valid")')
        else:
            self.emit(depth, f"{self.pick(self.defined)}({a}, {self.expr(names)})")

    def compound(self, budget: int, depth: int, names: list[str], in_loop: bool, method: bool) -> int:
        """One compound statement of at most `budget` (>= 2) lines; returns the lines used."""
        kind = int(self.rand() * (5 if budget >= 4 else 3))
        if kind == 0:
            self.emit(depth, f"if {self.condition(names)}:")
            k = self.between(1, min(4, budget - 1))
            self.block(k, depth + 1, names, in_loop, method)
            return 1 + k
        if kind == 1:
            item = self.pick(("item", "entry", "line", "key", "row", "name", "part"))
            self.emit(depth, f"for {item} in {self.pick(names)}:")
            k = self.between(1, min(5, budget - 1))
            self.block(k, depth + 1, [*names, item], True, method)
            return 1 + k
        if kind == 2:
            self.emit(depth, f'with open({self.pick(names)}, encoding="utf-8") as handle:')
            k = self.between(1, min(3, budget - 1))
            self.block(k, depth + 1, [*names, "handle"], in_loop, method)
            return 1 + k
        k1 = self.between(1, min(3, budget - 3))
        k2 = self.between(1, min(3, budget - 2 - k1))
        if kind == 3:
            self.emit(depth, f"if {self.condition(names)}:")
            self.block(k1, depth + 1, names, in_loop, method)
            self.emit(depth, "else:")
        else:
            self.emit(depth, "try:")
            self.block(k1, depth + 1, names, in_loop, method)
            self.emit(depth, f"except {self.pick(vocab.EXCEPTIONS)} as error:")
        self.block(k2, depth + 1, [*names, "error"] if kind == 4 else names, in_loop, method)
        return 2 + k1 + k2

    def block(self, n: int, depth: int, names: list[str], in_loop: bool, method: bool) -> None:
        """Exactly n lines of statements at `depth`."""
        while n > 0:
            roll = self.rand()
            if n >= 2 and roll < 0.07:  # a comment needs a statement after it in the same block
                self.emit(depth, f"# {self.phrase(self.pick(vocab.COMMENTS))}")
                n -= 1
            elif n >= 2 and depth < 4 and roll < 0.35:
                n -= self.compound(n, depth, names, in_loop, method)
            else:
                self.simple(depth, names, in_loop, method, last=n == 1)
                n -= 1

    # -- definitions -------------------------------------------------------------------------------
    def function(self, n: int, depth: int, method: bool) -> None:
        """A function (or method) of exactly n >= 2 lines."""
        name = self.func_name()
        args = list(dict.fromkeys(self.var_name() for _ in range(self.between(1, 3))))
        first_default = self.between(1, len(args) + 2)  # arguments from here on have defaults
        shown = [f"{a}={self.literal()}" if i >= first_default else a for i, a in enumerate(args)]
        returns = self.pick((" -> None", " -> bool", " -> list[str]", " -> dict[str, Any]", "", "", ""))
        self.emit(
            depth, f"def {name}({', '.join(['self', *shown] if method else shown)}){returns}:", blank=1 if method else 2
        )
        body = n - 1
        if n >= 3:
            self.emit(depth + 1, self.docstring())
            body -= 1
        if body >= 2:
            self.block(body - 1, depth + 1, args, False, method)
            self.emit(depth + 1, f"return {self.expr(args)}")
        else:
            self.block(body, depth + 1, args, False, method)
        self.defined.append(name)

    def klass(self, n: int) -> None:
        """A class of exactly n >= 5 lines: header, docstring, then methods of at least 3 lines."""
        self.emit(0, f"class {self.class_name()}:", blank=2)
        self.emit(1, f'"""Keeps {self.noun(plural=True)} and the {self.noun()} they belong to."""')
        sizes = partition(self.rng, n - 2, 3, 9)
        attrs = list(dict.fromkeys(self.var_name() for _ in range(sizes[0] - 1)))
        self.emit(1, f"def __init__(self, {', '.join(attrs)}) -> None:", blank=1)
        for i in range(sizes[0] - 1):
            attr = attrs[i % len(attrs)]
            self.emit(2, f"self._{attr} = {attr}" if i < len(attrs) else f"self._{self.noun(True)} = {{}}")
        for size in sizes[1:]:
            self.function(size, 1, method=True)

    def record_class(self, n: int) -> None:
        """A dataclass of exactly n >= 4 lines."""
        self.emit(0, "@dataclass(frozen=True)", blank=2)
        self.emit(0, f"class {self.noun().capitalize()}{self.pick(('Record', 'Entry', 'Settings', 'Info'))}:")
        self.emit(1, f'"""One {self.noun()} as read from the {self.noun()} file."""')
        fields = list(dict.fromkeys(self.var_name() for _ in range(n - 3)))
        for i in range(n - 3):
            name = fields[i] if i < len(fields) else f"{fields[0]}_{i}"
            kind, value = vocab.FIELD_TYPES[int(self.rand() * len(vocab.FIELD_TYPES))]
            self.emit(1, f"{name}: {kind} = {value}" if i >= (n - 3) // 2 else f"{name}: {kind}")

    def constant(self, blank: int = 0) -> None:
        name = f"{self.pick(vocab.QUALIFIERS)}_{self.noun()}".upper()
        self.emit(0, f"{name} = {self.literal()}", blank=blank)

    def module(self, n: int) -> list[str]:
        """Exactly n units."""
        self.emit(0, f'"""{self.phrase(self.pick(vocab.MODULE_DOCS))}"""', blank=2)
        imports = sorted({"import logging", *(self.pick(vocab.IMPORTS) for _ in range(self.between(1, 4)))})
        for i, line in enumerate(imports):
            self.emit(0, line, blank=1 if i == 0 else 0)
        self.emit(0, "logger = logging.getLogger(__name__)", blank=1)
        for _ in range(self.between(0, 3)):
            self.constant()
        while (left := n - len(self.lines)) > 0:
            if left < 3:
                for i in range(left):
                    self.constant(blank=2 if i == 0 else 0)
                break
            roll = self.rand()
            if roll < 0.2 and left >= 8:
                self.klass(self.between(8, min(40, left)))
            elif roll < 0.3 and left >= 4:
                self.record_class(self.between(4, min(9, left)))
            else:
                self.function(self.between(3, min(24, left)), 0, method=False)
        return self.lines


class CodeHaystack(GeneratedHaystack):
    kind = "code"
    version = "2"
    block_units = 320

    def make_block(self, rng: random.Random, index: int) -> list[str]:
        return _ModuleWriter(rng).module(self.block_units)

    def wrap_needle(self, sentence: str) -> str:
        return "\n# " + sentence.strip()


@haystack_kind("code")
@cache
def make_code(arg: str | None) -> Haystack:
    no_argument("code", arg)
    return CodeHaystack()
