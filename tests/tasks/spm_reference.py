"""llama.cpp's SentencePiece-style tokenizer, transcribed step by step into plain Python: the reference the
GGUFCounter is checked against without an engine. Slow (a heap of bigrams per text), exact by construction:

1. cut the text at control / user-defined / unknown tokens' texts, longest token first, each fragment
   scanned left to right (llama_vocab tokenizer_st_partition, parse_special on);
2. in each remaining fragment, spaces become "▁" (a leading "▁" when the vocabulary adds a space prefix);
3. from single characters, repeatedly merge the adjacent pair whose joined text is a token with the
   highest score, the leftmost on a tie (llm_tokenizer_spm_session, its bigram queue);
4. a symbol that is no token is written as its UTF-8 bytes' <0xNN> tokens (resegment)."""

from __future__ import annotations

import heapq

from ctxprobe.tasks.gguf_vocab import CONTROL, UNKNOWN, USER_DEFINED, GGUFVocab


class SPMReference:
    def __init__(self, vocab: GGUFVocab) -> None:
        self.vocab = vocab
        self.ids: dict[str, int] = {}
        for i, text in enumerate(vocab.tokens):
            self.ids.setdefault(text, i)
        self.scores = vocab.scores.tolist()
        special = [i for i in range(len(vocab.tokens)) if vocab.types[i] in (CONTROL, USER_DEFINED, UNKNOWN)]
        self.special = sorted(special, key=lambda i: -len(vocab.tokens[i].encode()))

    def encode(self, text: str) -> list[int]:
        fragments: list[str | int] = [text]
        for token in self.special:
            piece = self.vocab.tokens[token]
            if not piece:
                continue
            cut: list[str | int] = []
            for fragment in fragments:
                if isinstance(fragment, int):
                    cut.append(fragment)
                    continue
                while (at := fragment.find(piece)) >= 0:
                    if at:
                        cut.append(fragment[:at])
                    cut.append(token)
                    fragment = fragment[at + len(piece) :]
                if fragment:
                    cut.append(fragment)
            fragments = cut
        out: list[int] = []
        for fragment in fragments:
            if isinstance(fragment, int):
                out.append(fragment)
            else:
                prefix = " " if self.vocab.add_space_prefix else ""
                out += self.merge((prefix + fragment).replace(" ", "\u2581"))
        return out

    def merge(self, text: str) -> list[int]:
        n = len(text)
        if n == 0:
            return []
        start, size = list(range(n)), [1] * n
        prev, nxt = list(range(-1, n - 1)), [*range(1, n), -1]
        queue: list[tuple[float, int, int, int]] = []

        def bigram(left: int, right: int) -> None:
            if left < 0 or right < 0:
                return
            joined = text[start[left] : start[right] + size[right]]
            token = self.ids.get(joined)
            if token is not None:
                heapq.heappush(queue, (-self.scores[token], left, right, len(joined)))

        for i in range(1, n):
            bigram(i - 1, i)
        while queue:
            _, left, right, length = heapq.heappop(queue)
            if size[left] == 0 or size[right] == 0 or size[left] + size[right] != length:
                continue
            size[left] += size[right]
            size[right] = 0
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            bigram(prev[left], left)
            bigram(left, nxt[left])
        out: list[int] = []
        i = 0
        while i != -1:
            symbol = text[start[i] : start[i] + size[i]]
            if symbol in self.ids:
                out.append(self.ids[symbol])
            else:
                out += [self.ids[f"<0x{b:02X}>"] for b in symbol.encode()]
            i = nxt[i]
        return out
