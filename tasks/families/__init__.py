"""Built-in task families; importing this package registers them."""

from ctxprobe.tasks.families import aggregate, multihop, niah, recall  # noqa: F401
