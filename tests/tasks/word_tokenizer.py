"""A stand-in for RULER's HF tokenizer in the parity tests: words as tokens. It only sizes RULER's haystack,
whose filler the comparisons skip."""

from __future__ import annotations


class WordTokenizer:
    class Encoded:
        def __init__(self, text: str) -> None:
            self.input_ids = text.split()

    def __call__(self, text: str) -> WordTokenizer.Encoded:
        return WordTokenizer.Encoded(text)
