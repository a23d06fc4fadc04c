"""Reading a model's answer, below evals so that a family can score its own answer kind beside itself: the
answer kinds' registry (`kinds.py`), the verdict a scorer returns (`verdict.py`), and one path from output to
candidates: the answer slot (`region.py`: chat, the whole reply; completions, the documented unit), read in its
comparison characters (`fold.py`) into the candidates of the asked kind in one canonical form (`reading.py`,
over `numbers.py`, `shapes.py`: hex, UUIDs, code; `words.py`: names, words, list items), with what the slot
does not assert blanked first (`polarity.py`). evals/scoring holds the general kinds and calls them."""
