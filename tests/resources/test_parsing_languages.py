# ruff: noqa: RUF001  (Arabic-script letters and digits beside Latin ones are the point)
"""Persian and Arabic documents extract to the text they were made from.

Each document is made here, at test time, from the source texts below: the
HTML page as written, a DOCX by python-docx (right-to-left paragraphs and
runs, as Word writes them), and a PDF printed from the HTML page by
Chromium's print-to-PDF in DejaVu Sans (Debian's ``chromium`` and
``fonts-dejavu-core``, installed by scripts/test; missing, the PDF tests
fail under CI and skip elsewhere).

What "equal" means (docs/ingestion.md, "Languages and scripts"): HTML and
DOCX keep the blocks, so their text is exactly the source's blocks joined by
a blank line. A PDF's text layer has lines, not paragraphs: the PDF's text
equals the source once every run of whitespace (spaces, line breaks, blank
lines) in both is one space. Nothing else is folded: the same code points
(Persian ی and ک against Arabic ي and ك, the zero-width non-joiner U+200C,
Persian ۱۲۳ and Arabic-Indic ١٢٣ digits, ؟ ، ؛), in reading order.
"""

from __future__ import annotations

import html
import io
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from resources.parsing import ParsedDocument, detect_content_type, parse_document
from resources.parsing.pdf_bidi import fold_presentation_forms, logical_text
from resources.parsing.pdf_glyphs import Piece
from tests.browser import CHROMIUM, CHROMIUM_FLAGS
from tests.parts import part_missing

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

# (heading, paragraphs): a question, the three Arabic-script punctuation marks,
# both kinds of digits, words with a zero-width non-joiner, a line mixing in an
# English word and a number, and a paragraph long enough to wrap in a PDF.
PERSIAN = (
    "راهنمای بازپرداخت",
    [
        "بازپرداخت در ۱۲۳ روز انجام می‌شود؛ آیا این کافی است؟",
        "لطفاً فرم را پر کنید، سپس با ما تماس بگیرید.",
        "نسخهٔ Daneshyar 2 از ۱۵ فروردین عرضه شد و ١٢٣ کاربر دارد.",
        "این پاراگراف بلند است تا در صفحهٔ چاپی به چند خط شکسته شود؛ کتاب‌ها و "
        "نامه‌ها را می‌خوانیم، قیمت (بدون مالیات) ۲۵۰ هزار ریال است و پاسخ‌ها "
        "در ۳ روز کاری فرستاده می‌شوند؟ بله، همین‌طور است.",
    ],
)
ARABIC = (
    "سياسة الاسترداد",
    [
        "يتم الاسترداد خلال ١٢٣ يومًا؛ هل هذا كافٍ؟",
        "يرجى ملء النموذج، ثم اتصل بنا.",
        "صدر الإصدار Daneshyar 2 في ١٥ مارس ولديه ۱۲۳ مستخدمًا.",
        "هذه الفقرة طويلة بما يكفي لتنقسم إلى عدة أسطر في الصفحة المطبوعة؛ نقرأ "
        "الكتب والرسائل، والسعر (من دون ضريبة) ٢٥٠ ريالًا، وتُرسل الردود خلال ٣ "
        "أيام عمل؟ نعم، هذا صحيح.",
    ],
)
SOURCES = {"fa": PERSIAN, "ar": ARABIC}
_LATIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9 .]*[A-Za-z0-9]|[A-Za-z0-9])")


def _blocks(language: str) -> list[str]:
    heading, paragraphs = SOURCES[language]
    return [heading, *paragraphs]


def _html(language: str) -> bytes:
    heading, paragraphs = SOURCES[language]
    body = "".join(f"<p>{html.escape(p)}</p>\n" for p in paragraphs)
    return (
        f'<!DOCTYPE html>\n<html lang="{language}" dir="rtl"><head><meta charset="utf-8">'
        '<style>body { font-family: "DejaVu Sans"; font-size: 16px; }</style></head>\n'
        f"<body><h1>{html.escape(heading)}</h1>\n{body}</body></html>\n"
    ).encode()


def _docx(language: str) -> bytes:
    """Right-to-left paragraphs (``w:bidi``); Arabic-script runs ``w:rtl``,
    Latin words and numbers runs of their own, as Word splits them."""
    import docx
    from docx.oxml import OxmlElement

    heading, paragraphs = SOURCES[language]
    document: Any = docx.Document()
    for text, style in [(heading, "Heading 1")] + [(p, "Normal") for p in paragraphs]:
        paragraph = document.add_paragraph(style=style)
        paragraph._p.get_or_add_pPr().append(OxmlElement("w:bidi"))
        for part in _LATIN.split(text):
            if part:
                run = paragraph.add_run(part)
                if not _LATIN.fullmatch(part):
                    run._r.get_or_add_rPr().append(OxmlElement("w:rtl"))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _print_to_pdf(page: bytes, directory: Path) -> bytes:
    """``page`` printed to PDF by headless Chromium."""
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        part_missing(f"{CHROMIUM} is absent (apt-get install chromium)")
    if not FONT.exists():
        part_missing(f"{FONT} is absent (apt-get install fonts-dejavu-core)")
    source, target = directory / "page.html", directory / "page.pdf"
    source.write_bytes(page)
    flags = [flag for flag in CHROMIUM_FLAGS if not flag.startswith("--window-size")]
    subprocess.run(
        [
            CHROMIUM,
            *flags,
            f"--user-data-dir={directory / 'profile'}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={target}",
            source.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return target.read_bytes()


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The Persian, Arabic and English pages printed once for the module."""
    english = b'<!DOCTYPE html><html lang="en"><body style="font-family: DejaVu Sans"><h1>Refunds</h1>' + (
        b"<p>Refunds take 14 days. This paragraph is long enough to wrap onto a second line of "
        b"the printed page, so that the text layer has a line break in the middle of it.</p></body></html>"
    )
    pages = {"fa": _html("fa"), "ar": _html("ar"), "en": english}
    return {name: _print_to_pdf(page, tmp_path_factory.mktemp(name)) for name, page in pages.items()}


def _parse(data: bytes) -> ParsedDocument:
    return parse_document(data, content_type=detect_content_type(data))


def _spaced(text: str) -> str:
    """Every run of whitespace as one space: the comparison for a PDF."""
    return " ".join(text.split())


@pytest.mark.parametrize("language", ["fa", "ar"])
def test_html_page_is_the_source(language: str) -> None:
    document = _parse(_html(language))
    assert document.text == "\n\n".join(_blocks(language))
    assert document.headings == frozenset({0})


@pytest.mark.parametrize("language", ["fa", "ar"])
def test_docx_is_the_source(language: str) -> None:
    document = _parse(_docx(language))
    assert document.text == "\n\n".join(_blocks(language))
    assert document.headings == frozenset({0})


@pytest.mark.slow
@pytest.mark.parametrize("language", ["fa", "ar"])
def test_pdf_printed_by_chromium_reads_in_reading_order(language: str, pdfs: dict[str, bytes]) -> None:
    # Regression: pypdf's text of these pages had the shaped letters'
    # presentation forms (U+FExx), each line's runs in visual order with its
    # numbers reversed ("…است؟۳۲۱بازپرداخت در"), and spaces for the ZWNJs.
    document = _parse(pdfs[language])
    source = "\n\n".join(_blocks(language))
    assert _spaced(document.text) == _spaced(source)
    assert "  " not in document.text
    assert document.text.count("\u200c") == source.count("\u200c")
    # The long paragraph wraps: the page has more lines than the source has blocks.
    assert document.text.count("\n") >= len(_blocks(language))
    assert document.page_at(len(document.text) - 1) == 1


@pytest.mark.slow
def test_english_pdf_printed_by_chromium_keeps_pypdfs_text(pdfs: dict[str, bytes]) -> None:
    document = _parse(pdfs["en"])
    pypdf_text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdfs["en"])).pages)
    assert document.text == "\n".join(line.strip() for line in pypdf_text.splitlines() if line.strip())
    assert _spaced(document.text).startswith("Refunds Refunds take 14 days.")


def _piece(text: str, x: float, text_object: int, *, reversed_run: bool = False, y: float = 100) -> Piece:
    """A piece as a PDF draws it: a right-to-left run's characters right to left."""
    clusters = list(reversed(text)) if reversed_run else list(text)
    return Piece(clusters, reversed_run, x, y, 16, text_object)


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        # A number inside a right-to-left line, drawn between the runs around it.
        (
            [
                _piece(" روز", 0, 1, reversed_run=True),
                _piece("۱۲۳", 40, 2),
                _piece("بازپرداخت در ", 60, 3, reversed_run=True),
            ],
            "بازپرداخت در ۱۲۳ روز",
        ),
        # A full stop drawn alone after a number ends the line it closes.
        ([_piece(".", 0, 1), _piece("١٢٣", 5, 2), _piece("عدد ", 30, 3, reversed_run=True)], "عدد ١٢٣."),
        # An English line with a Persian word keeps its order on a Persian page.
        (
            [
                _piece("The word ", 0, 1),
                _piece("دانشیار", 60, 2, reversed_run=True),
                _piece(" means scholar.", 90, 3),
                _piece("یک خط فارسی دیگر", 0, 4, reversed_run=True, y=130),
                _piece("و خط سوم", 0, 5, reversed_run=True, y=160),
            ],
            "The word دانشیار means scholar.\nیک خط فارسی دیگر\nو خط سوم",
        ),
    ],
)
def test_runs_drawn_left_to_right_are_read_in_order(pieces: list[Piece], expected: str) -> None:
    assert logical_text(pieces) == expected


def test_a_cluster_is_never_split_and_presentation_forms_fold() -> None:
    # "هٔ" (heh and its hamza, one /ActualText over two glyphs) stays whole.
    piece = Piece(["هٔ", "خ", "س", "ن"], True, 0, 100, 16, 1)
    assert logical_text([piece]) == "نسخهٔ"
    assert fold_presentation_forms("\ufefb \ufe91\ufe8e\ufead") == "لا بار"
