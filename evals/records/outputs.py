"""Reading back the JSON files ctxprobe writes beside its run folders (`limit.json`, `compare.json`,
`history.json`): each is a typed model with a `schema_version`, and a file written before versions were
recorded (version 1) is read through the same model. One line naming the problem when it is not one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ctxprobe.evals.records.safe_write import replace_file
from ctxprobe.evals.records.schema import versioned
from ctxprobe.tasks.errors import UserError, first_problem

Model = TypeVar("Model", bound=BaseModel)


def read_output(path: Path, model: type[Model]) -> Model:
    """The file at `path` as `model`, older versions migrated by the model's validators."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"no {path.name} in {path.parent}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"corrupt {path.name} in {path.parent}") from None
    try:
        return model.model_validate(versioned(data))
    except ValidationError as exc:
        where, msg, _ = first_problem(exc)
        raise UserError(f"corrupt {path.name} in {path.parent}: {where or 'top level'}: {msg}") from None


def write_output(path: Path, result: BaseModel) -> Path:
    """`result` as indented JSON at `path`, replaced whole (a reader never sees half a file)."""
    return replace_file(path, result.model_dump_json(indent=2) + "\n")
