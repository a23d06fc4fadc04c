"""An option declared once and reused as a field of another options model (`compare` and `history` share
`alpha`; `doctor` takes the client's `model`). Pydantic takes the declared `FieldInfo` as the new field's
default and keeps its constraints and description; a type checker would see a `FieldInfo` where the field's
type is, so it is handed over as `Any`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def same_field(model: type[BaseModel], name: str) -> Any:
    """`model`'s field `name` (its default, constraints and description), to declare again elsewhere."""
    return model.model_fields[name]
