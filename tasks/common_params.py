"""Parameters every family accepts, added by the registry rather than by each family: `question_position`
(where the question stands: after the document, before it, or both). A family's own `Params` model is
extended once, when the family registers, so a family written later gets them without a line of its own.

Parameters that appeared after records existed (`question_position`, a family's `lang`, `absent`) are left out of
a recipe's parameters at their default: a recipe built at the default has the parameters, sample id and
prompt it had before they existed."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, create_model, model_serializer

QuestionPosition = Literal["end", "start", "both"]

# Parameter -> the default at which a recipe leaves it out.
OMITTED_AT_DEFAULT: dict[str, str | bool | None] = {
    "question_position": "end",
    "lang": "en",
    "distractors_kind": "other",
    "haystack_order": "coherent",
    "dataset_sha256": None,
    "absent": False,
}


class _OmitDefaults(BaseModel):
    """Dumps leave out the parameters of `OMITTED_AT_DEFAULT` at their default."""

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name, default in OMITTED_AT_DEFAULT.items():
                if name in data and data[name] == default:
                    del data[name]
        return data


def question_position(params: BaseModel) -> QuestionPosition:
    """Where the question goes: a common parameter, added to a family's `Params` when it registers (so not
    declared on the family's own model)."""
    position: QuestionPosition = getattr(params, "question_position")  # noqa: B009 - not declared on the model type
    return position


def with_common_params(params: type[BaseModel]) -> type[BaseModel]:
    """`params` with the common parameters added (validation and the family's own validators unchanged)."""
    if "question_position" in params.model_fields:
        return params
    return create_model(
        params.__name__,
        __base__=(params, _OmitDefaults),
        __module__=params.__module__,
        question_position=(
            QuestionPosition,
            Field(
                "end",
                description="where the question goes: end (after the document), start (before it, "
                "NeedleBench's Start), both",
            ),
        ),
    )
