"""`recall`: reproduce a long string verbatim.

- `hex`: an access token of `length` hex characters, keyed by an `adjective-noun` key.
- `uuid`: a record id (UUID), keyed the same way.
- `code`: a generated Python function inserted as its own block; asked for the exact `return` line
  of the named function (the answer is that line, stripped of its indentation).
- `clause`: a contract clause labelled like `Clause 12-B`; asked to quote it. The answer is the clause
  text after the label ("The Supplier shall pay ..."), without the label, which the question names.
`distractors` adds needles of the same kind with other keys (names, labels) and other strings.
`absent: true` (hex and uuid) asks, in the same words, for a key the prompt holds nowhere (`tasks/absent.py`);
a code or clause answer is no value of a kind a reply could be caught inventing, so those kinds refuse it."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.tasks.absent import absent_field
from ctxprobe.tasks.families import chinese
from ctxprobe.tasks.families.framing import Lang, english_only, frame, lang_field
from ctxprobe.tasks.families.vocab import make_key, make_value, spread_depths
from ctxprobe.tasks.registry import Draft, NeedleDraft, task_family
from ctxprobe.tasks.sample import Expected, Mode

_VERBS = ("settle", "reconcile", "audit", "rebuild", "merge", "flush", "rotate", "price", "schedule", "archive")
_OBJECTS = ("invoice", "ledger", "shipment", "tariff", "voucher", "parcel", "payroll", "quota", "rebate", "escrow")
_ENDINGS = ("totals", "entries", "batches", "margins", "balances", "offsets", "windows", "rates")
_ARGS = ("batch", "ledger", "order", "account", "window", "policy", "bucket", "cohort", "tariff", "region")
_ATTRS = ("total", "rate", "weight", "count", "limit", "offset", "factor", "span", "cost", "share")
_LOCALS = ("adjusted", "scaled", "pending", "carried", "blended", "net_value", "spread", "residual")

_PARTIES = (
    ("Supplier", "Customer"),
    ("Licensee", "Licensor"),
    ("Contractor", "Owner"),
    ("Tenant", "Landlord"),
    ("Borrower", "Lender"),
    ("Distributor", "Manufacturer"),
)
_CURRENCIES = ("EUR", "USD", "GBP", "CHF")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_PENALTIES = (
    "interest accrues at {r}% per annum",
    "a late fee of {r}% of the unpaid sum applies",
    "the other party may withhold {r}% of the next payment",
)


class RecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["hex", "uuid", "code", "clause"] = Field(
        "hex",
        description="hex (access token), uuid (record id), code (a function's return line), clause (contract clause)",
    )
    length: int = Field(40, ge=32, le=64, description="hex: characters in the token")
    distractors: int = Field(0, ge=0, le=64, description="needles of the same kind with other keys and strings")
    placement: Literal["random", "spread"] = Field("random", description="where the distractors go")
    lang: Lang = lang_field()
    absent: bool = absent_field()

    @model_validator(mode="after")
    def _clauses_are_english(self) -> RecallParams:
        if self.kind == "clause":
            english_only(self.lang, "kind 'clause' (an English contract)")
        if self.absent:
            english_only(self.lang, "absent (its abstentions are read in English)")
            if self.kind not in ("hex", "uuid"):
                raise ValueError("absent goes with kind hex or uuid (a value a reply could invent)")
        return self


@task_family("recall", version="2")
class Recall:
    Params = RecallParams

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
        p = RecallParams.model_validate(params)
        keys: set[str] = set()
        strings: set[str] = set()
        make = _MAKERS[p.kind]
        needles: list[NeedleDraft] = []
        target_key = ""
        answer = ""
        for i, d in enumerate(spread_depths(depth, p.distractors + 1, rng, p.placement)):
            key, text, string, unit = make(p, rng, keys, strings)
            needles.append(
                NeedleDraft(role="target" if i == 0 else "distractor", text=text, answer=string, depth=d, unit=unit)
            )
            if i == 0:
                target_key, answer = key, string
        head, question, prefix = (
            chinese.recall_frame(p.kind, target_key) if p.lang == "zh" else _frame_text(p, target_key)
        )
        tokens = p.length if p.kind == "hex" else 36 if p.kind == "uuid" else len(answer) // 2
        return frame(
            head,
            question,
            prefix,
            mode,
            tuple(needles),
            Expected(kind="string", answers=[answer]),
            max_tokens=16 + tokens,
            unique=tuple(sorted(keys)),
            lang=p.lang,
        )


Made = tuple[str, str, str, bool]  # key, needle text, answer string, whether the text is its own unit


def _hex(p: RecallParams, rng: random.Random, keys: set[str], strings: set[str]) -> Made:
    key, token = make_key(rng, keys), make_value(f"hex{p.length}", rng, strings)
    text = chinese.recall_needle("hex", key, token) if p.lang == "zh" else f"The access token for {key} is {token}."
    return key, text, token, False


def _uuid(p: RecallParams, rng: random.Random, keys: set[str], strings: set[str]) -> Made:
    key, record = make_key(rng, keys), make_value("uuid", rng, strings)
    text = chinese.recall_needle("uuid", key, record) if p.lang == "zh" else f"The record id for {key} is {record}."
    return key, text, record, False


def _code(p: RecallParams, rng: random.Random, keys: set[str], strings: set[str]) -> Made:
    while True:
        name = f"{rng.choice(_VERBS)}_{rng.choice(_OBJECTS)}_{rng.choice(_ENDINGS)}"
        a, b = rng.sample(_ARGS, 2)
        x, y, z = rng.sample(_ATTRS, 3)
        local = rng.choice(_LOCALS)
        op = rng.choice(("*", "+", "-"))
        ret = f"return round({local} * {b}.{z} {rng.choice('+-')} {rng.randint(2, 997)}, {rng.randint(1, 4)})"
        if name not in keys and ret not in strings:
            break
    keys.add(name)
    strings.add(ret)
    # One return, inside the `if`: the block's last line (which a prose haystack may continue) is the raise.
    block = (
        f"\n\ndef {name}({a}, {b}):\n    {local} = {a}.{x} {op} {b}.{y}\n"
        f"    if {local} >= {rng.randint(0, 50)}:\n        {ret}\n"
        f'    raise ValueError("{local} out of range")'
    )
    return name, block, ret, True


def _clause(p: RecallParams, rng: random.Random, keys: set[str], strings: set[str]) -> Made:
    while True:
        label = f"Clause {rng.randint(10, 99)}-{rng.choice('ABCDEFGHJKLMNPRSTUVW')}"
        payer, payee = rng.choice(_PARTIES)
        amount = f"{rng.randint(1_000, 999_999):,}.{rng.randint(0, 99):02d}"
        date = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2026, 2039)}"
        penalty = rng.choice(_PENALTIES).format(r=f"{rng.randint(1, 9)}.{rng.randint(0, 9)}")
        text = (
            f"The {payer} shall pay the {payee} {rng.choice(_CURRENCIES)} {amount} no later than {date}, "
            f"failing which {penalty}."
        )
        if label not in keys and text not in strings:
            break
    keys.add(label)
    strings.add(text)
    return label, f"{label}. {text}", text, False


_MAKERS: dict[str, Callable[[RecallParams, random.Random, set[str], set[str]], Made]] = {
    "hex": _hex,
    "uuid": _uuid,
    "code": _code,
    "clause": _clause,
}


def _frame_text(p: RecallParams, key: str) -> tuple[str, str, str]:
    """Head, question and answer prefix for the target `key` (key, function name or clause label)."""
    if p.kind in ("hex", "uuid"):
        noun = "access token" if p.kind == "hex" else "record id"
        head = (
            f"Some {noun}s are hidden within the following text. Make sure to memorize them exactly. "
            f"I will ask you to reproduce one of them afterwards."
        )
        question = (
            f"What is the {noun} for {key} mentioned in the provided text? "
            f"Reproduce it exactly, character for character."
        )
        return head, question, f"The {noun} for {key} mentioned in the provided text is"
    if p.kind == "code":
        head = (
            "Some Python functions are hidden within the following text. Make sure to memorize them exactly. "
            "I will ask you to quote a line of one of them afterwards."
        )
        question = (
            f"What is the exact return statement of the function {key} defined in the provided text? "
            f"Quote the line exactly, without its indentation."
        )
        return head, question, f"The return statement of the function {key} is:"
    head = (
        "Some numbered contract clauses are hidden within the following text. Make sure to memorize them exactly. "
        "I will ask you to quote one of them afterwards."
    )
    question = f"What is the exact text of {key} in the provided text? Quote it verbatim, without the label {key}."
    return head, question, f"The exact text of {key} is:"
