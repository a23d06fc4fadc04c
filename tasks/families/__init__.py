"""Built-in task families; importing this package registers them."""

from tasks.families import multihop, niah, recall  # noqa: F401
