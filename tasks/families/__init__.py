"""Built-in task families; importing this package registers them."""

from tasks.families import niah  # noqa: F401

for _optional in ("recall", "multihop"):
    try:
        __import__(f"tasks.families.{_optional}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"tasks.families.{_optional}":
            raise
