"""Token-aware chunking with overlap, cutting at the strongest nearby boundary.

A document's text is tokenised once with the embedding model's own tokenizer
(offsets into the text). Each chunk holds at most ``size`` word pieces; it
ends at the strongest boundary in the second half of its window (a heading,
then a paragraph or page, a line, a sentence, a word) and the next chunk
starts ``overlap`` tokens earlier, at a sentence or word start, so a fact cut
by a boundary is still whole in one of the two chunks. A chunk that ends at a
heading gets no overlap: the next section starts clean.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from resources.parsing import ParsedDocument
from resources.parsing.base import Box

# Strength of a boundary *before* a token.
MID_WORD, WORD, SENTENCE, LINE, PARAGRAPH, HEADING = range(6)

_SENTENCE_END = frozenset(".!?\u2026\u3002\uff01\uff1f")  # … 。 full-width ! ?
_CLOSERS = frozenset("\"')]}\u201d\u2019\u00bb")  # closing quotes
_WORDS = re.compile(r"\S+")


class Tokenizer(Protocol):
    def __call__(self, text: str, **kwargs: Any) -> Any: ...


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    text: str
    char_start: int
    char_end: int
    page: int | None
    token_count: int
    # Where the passage sits on its page (0 to 1, x0, y0, x1, y1), when known (OCR).
    bbox: Box | None = None


def token_offsets(text: str, tokenizer: Tokenizer | None) -> list[tuple[int, int]]:
    """(start, end) character offsets of each token, without special tokens.

    Without a tokenizer (a test double embedder) whitespace words stand in.
    """
    if tokenizer is None:
        return [(m.start(), m.end()) for m in _WORDS.finditer(text)]
    encoded = tokenizer(
        text,
        add_special_tokens=False,
        return_offsets_mapping=True,
        return_attention_mask=False,
        return_token_type_ids=False,
        verbose=False,
    )
    return [(int(start), int(end)) for start, end in encoded["offset_mapping"] if end > start]


def boundary_strengths(document: ParsedDocument, offsets: Sequence[tuple[int, int]]) -> list[int]:
    text = document.text
    page_starts = {start for start, _ in document.pages}
    strengths = [HEADING]
    for index in range(1, len(offsets)):
        previous_end = offsets[index - 1][1]
        start = offsets[index][0]
        gap = text[previous_end:start]
        if start in document.headings:
            strength = HEADING
        elif "\n\n" in gap or start in page_starts:
            strength = PARAGRAPH
        elif "\n" in gap:
            strength = LINE
        elif gap and _ends_sentence(text, previous_end):
            strength = SENTENCE
        elif gap:
            strength = WORD
        else:
            strength = MID_WORD
        strengths.append(strength)
    return strengths


def _ends_sentence(text: str, end: int) -> bool:
    position = end - 1
    while position > 0 and text[position] in _CLOSERS:
        position -= 1
    return position >= 0 and text[position] in _SENTENCE_END


def chunk_document(
    document: ParsedDocument, *, tokenizer: Tokenizer | None, size: int, overlap: int
) -> list[Chunk]:
    if size < 2:
        raise ValueError("size must be at least 2 tokens")
    overlap = max(0, min(overlap, size // 2))
    offsets = token_offsets(document.text, tokenizer)
    strengths = boundary_strengths(document, offsets)
    total = len(offsets)
    chunks: list[Chunk] = []
    start = 0
    while start < total:
        end = total if start + size >= total else _best_end(strengths, start, size)
        char_start, char_end = offsets[start][0], offsets[end - 1][1]
        chunks.append(
            Chunk(
                ordinal=len(chunks),
                text=document.text[char_start:char_end],
                char_start=char_start,
                char_end=char_end,
                page=document.page_at(char_start),
                token_count=end - start,
                bbox=document.bbox_of(char_start, char_end),
            )
        )
        if end >= total:
            break
        start = _next_start(strengths, start, end, overlap)
    return chunks


def _best_end(strengths: Sequence[int], start: int, size: int) -> int:
    """Where the chunk starting at ``start`` ends (exclusive token index).

    The strongest boundary in the second half of the window; among equals
    the last, so chunks stay as long as the boundary allows.
    """
    low = start + max(1, size // 2)
    best = start + size
    for index in range(start + size, low - 1, -1):
        if strengths[index] > strengths[best]:
            best = index
    return best


def _next_start(strengths: Sequence[int], start: int, end: int, overlap: int) -> int:
    if overlap == 0 or strengths[end] == HEADING:
        return end
    low = max(start + 1, end - overlap)
    # A sentence start that keeps at least half the overlap, else a word start.
    for threshold, high in ((SENTENCE, end - overlap // 2), (WORD, end)):
        for index in range(low, high):
            if strengths[index] >= threshold:
                return index
    return low
