"""One adapter per engine: how it is recognised, its tokenize call, its too-long shape, its metrics."""
