"""Built-in task families; importing this package registers them."""

from ctxprobe.tasks.families import aggregate, capacity, graphwalk, latent, mrcr, multihop, needles, niah, qa, recall  # noqa: F401
