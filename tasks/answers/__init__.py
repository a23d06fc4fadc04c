"""Reading a model's answer, below evals so that a family can score its own answer kind beside itself: the
answer kinds' registry (`kinds.py`), the verdict a scorer returns (`verdict.py`), and the text primitives a
scorer reads the output with: the answer region (`region.py`), its tokens (`tokens.py`), the comparison
characters (`fold.py`: fullwidth forms, look-alike letters), negated and withdrawn mentions (`negation.py`) and
rival candidates (`rivals.py`). evals/scoring holds the general kinds and calls them."""
