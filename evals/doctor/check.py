"""One doctor check's verdict: what was asked, what was found, and the flag that turns on what is missing."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Status = Literal["ok", "missing", "failed", "n/a"]


class Check(BaseModel):
    name: str
    status: Status
    found: str
    advice: str = ""
