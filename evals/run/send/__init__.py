"""Sending a suite's samples to an endpoint: the options that say where and how (`options`), the served
endpoint and its token counter (`serving`), the send order (`order`), the answer budget, and the send loop
that records every sample (`loop`). `run`, `limit` and `lmeval` all build on it; it imports none of them."""
