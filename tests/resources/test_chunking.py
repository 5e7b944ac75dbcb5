from __future__ import annotations

import itertools

import pytest
from transformers import AutoTokenizer

from resources.chunking import Tokenizer, chunk_document
from resources.parsing import parse_document
from resources.parsing.base import ParsedDocument
from retrieval.embeddings import default_model_path
from tests.resources.files import long_text, make_pdf


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    # The embedding model's own tokenizer, without loading the model.
    return AutoTokenizer.from_pretrained(str(default_model_path()))


def _tokens(tokenizer: Tokenizer, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_chunks_respect_the_size_and_match_the_text(tokenizer: Tokenizer) -> None:
    document = ParsedDocument(text=long_text(paragraphs=20))
    chunks = chunk_document(document, tokenizer=tokenizer, size=100, overlap=20)
    assert len(chunks) > 5
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text == document.text[chunk.char_start : chunk.char_end]
        assert chunk.token_count <= 100
        assert abs(_tokens(tokenizer, chunk.text) - chunk.token_count) <= 1


def test_chunks_cover_the_whole_text_and_overlap(tokenizer: Tokenizer) -> None:
    document = ParsedDocument(text=long_text(paragraphs=20))
    chunks = chunk_document(document, tokenizer=tokenizer, size=100, overlap=20)
    assert chunks[0].char_start == 0 and chunks[-1].char_end == len(document.text)
    for previous, current in itertools.pairwise(chunks):
        assert current.char_start < previous.char_end, "no gap and some overlap between neighbours"
        overlap = _tokens(tokenizer, document.text[current.char_start : previous.char_end])
        assert 5 <= overlap <= 20


def test_chunks_prefer_paragraph_and_sentence_boundaries(tokenizer: Tokenizer) -> None:
    document = ParsedDocument(text=long_text(paragraphs=20))
    chunks = chunk_document(document, tokenizer=tokenizer, size=100, overlap=20)
    for chunk in chunks[:-1]:
        assert chunk.text.endswith("."), chunk.text[-40:]
    for chunk in chunks[1:]:
        assert chunk.text.startswith("Fact"), chunk.text[:40]


def test_a_heading_starts_a_fresh_chunk_without_overlap(tokenizer: Tokenizer) -> None:
    text = "Intro. " * 70 + "\n\nSection two\n\n" + "Body sentence. " * 30
    heading = text.index("Section two")
    document = ParsedDocument(text=text, headings=frozenset({heading}))
    chunks = chunk_document(document, tokenizer=tokenizer, size=200, overlap=40)
    assert [c.char_start for c in chunks][1] == heading


def test_a_short_document_is_one_chunk(tokenizer: Tokenizer) -> None:
    chunks = chunk_document(ParsedDocument(text="Just this."), tokenizer=tokenizer, size=200, overlap=40)
    assert [(c.text, c.token_count) for c in chunks] == [("Just this.", 3)]


def test_a_long_word_run_without_spaces_is_still_split(tokenizer: Tokenizer) -> None:
    document = ParsedDocument(text="x" * 5000)
    chunks = chunk_document(document, tokenizer=tokenizer, size=50, overlap=10)
    assert all(c.token_count <= 50 for c in chunks)
    assert chunks[-1].char_end == 5000


def test_pages_are_carried_to_chunks(tokenizer: Tokenizer) -> None:
    pages = [f"Page {n} sentence. " * 40 for n in range(1, 4)]
    document = parse_document(make_pdf(pages), content_type="application/pdf")
    chunks = chunk_document(document, tokenizer=tokenizer, size=60, overlap=10)
    assert chunks[0].page == 1 and chunks[-1].page == 3
    for chunk in chunks:
        assert chunk.page == document.page_at(chunk.char_start)
        assert f"Page {chunk.page} sentence" in chunk.text


def test_without_a_tokenizer_words_are_counted(tokenizer: Tokenizer) -> None:
    chunks = chunk_document(ParsedDocument(text="one two three. " * 30), tokenizer=None, size=20, overlap=5)
    assert all(c.token_count <= 20 for c in chunks) and len(chunks) > 4
