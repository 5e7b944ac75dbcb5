"""Titles: a document uploaded without one is titled from its text at
ingestion — its first heading, else its first sentence, never a date and
never a word cut in two — and a titled document keeps its title."""

from __future__ import annotations

import pytest

from resources.ingestion import resource_ingest
from resources.models import Resource
from resources.parsing import ParsedDocument
from resources.services import Upload, resource_create, resource_create_from_text
from resources.titles import TITLE_MAX_CHARS, content_title, is_untitled, shorten, text_title
from tests.conftest import Tenant

LONG = (
    "The Juicer J6 presses fruit and vegetables into fresh juice in under a minute, quietly and "
    "without mess. Clean it after use."
)


def test_a_long_text_is_cut_at_a_word_boundary_with_an_ellipsis() -> None:
    cut = shorten(LONG, TITLE_MAX_CHARS)
    assert len(cut) <= TITLE_MAX_CHARS and cut.endswith("\u2026")
    stem = cut.removesuffix("\u2026")
    assert LONG.startswith(stem) and LONG[len(stem)] in " ,"
    assert shorten("Kettle   K1\nmanual", 80) == "Kettle K1 manual"
    assert shorten("a" * 100, 10) == "a" * 9 + "\u2026"  # one word longer than the limit


@pytest.mark.parametrize(
    ("title", "filename", "untitled"),
    [
        ("", "", True),
        ("Untitled", "", True),
        ("2024-05-01", "", True),
        ("2024-05-01.pdf", "2024-05-01.pdf", True),
        ("162428-0-349", "", True),
        ("Kettle K1", "", False),
        ("kettle.pdf", "kettle.pdf", False),
        ("Q3 2024", "", False),
    ],
)
def test_a_title_without_words_is_no_title(title: str, filename: str, untitled: bool) -> None:
    assert is_untitled(title, filename) is untitled


def test_the_first_heading_titles_a_document_that_opens_with_one() -> None:
    text = "2024-05-01\n\nKettle K1 manual\n\nThe warranty lasts three years."
    document = ParsedDocument(text=text, headings=frozenset({text.index("Kettle")}))
    assert content_title(document) == "Kettle K1 manual"


def test_else_its_first_sentence_after_any_date() -> None:
    text = f"2024-05-01\n\n{LONG}"
    assert content_title(ParsedDocument(text=text)) == shorten(LONG.split(". ")[0] + ".", TITLE_MAX_CHARS)
    assert content_title(ParsedDocument(text="12/05/2024\n\n3.5")) is None


def test_a_text_opening_with_a_markdown_heading_is_titled_without_its_marks() -> None:
    assert text_title("# Claims policy\n\nInpatient claims are due in 30 days.") == "Claims policy"
    assert text_title("  ## Kettle K1. Manual\nBody.") == "Kettle K1."
    assert text_title("#hashtag first") == "#hashtag first"


def test_a_line_with_as_many_letters_as_digits_is_a_title() -> None:
    assert text_title("a 0") == "a 0"
    assert text_title("12/05/2024\nK9 cleaning") == "K9 cleaning"
    assert text_title("2024-05-01") is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("title", "filename", "data", "expected"),
    [
        ("", "", f"2024-05-01\n\n{LONG}".encode(), shorten(LONG.split(". ")[0] + ".", TITLE_MAX_CHARS)),
        ("", "2024-05-01.md", b"# Kettle K1 manual\n\nThe warranty lasts three years.", "Kettle K1 manual"),
        ("Kettle K1", "k1.txt", f"2024-05-01\n\n{LONG}".encode(), "Kettle K1"),
        ("", "kettle-manual.txt", b"The warranty lasts three years.", "kettle-manual.txt"),
    ],
)
def test_ingestion_titles_an_untitled_upload_from_its_text(
    owner: Tenant, title: str, filename: str, data: bytes, expected: str
) -> None:
    resource = resource_create(
        workspace=owner.workspace, upload=Upload(data=data, title=title, filename=filename)
    ).resource
    assert resource_ingest(resource_id=resource.id) == "ready"
    assert Resource.objects.get(id=resource.id).title == expected


@pytest.mark.django_db
def test_a_text_sent_without_a_title_is_titled_by_its_first_sentence(owner: Tenant) -> None:
    outcome = resource_create_from_text(workspace=owner.workspace, text=f"2024-05-01\n{LONG}")
    title = outcome.resource.title
    assert title == shorten(LONG.split(". ")[0] + ".", TITLE_MAX_CHARS) and title.endswith("\u2026")
