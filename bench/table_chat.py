"""Table questions answered from the right row through the service
(docs/ocr.md, "Measured").

    .venv/bin/python bench/table_chat.py [--formats csv xlsx pdf] [--rows 20]

Three tables, written for this bench in English, Persian and Arabic: the
monthly premium of insurance plans, the adult dose of medicines, the filing
deadline of forms; each row named by a colour and a kind (``Amber Family
plan``, ``Jade syrup``, ``Ivory permit renewal``), 40 rows a table,
with a code column. Per
language and format (CSV, XLSX; PDF in English only: a page with the table
ruled, as tests/resources/files.py ``make_table_pdf`` draws it, its text in
Helvetica) one workspace holds the three tables,
uploaded through the service's ingestion path (``resources_create_many``,
ingested in this process). Each row is asked about once, in the table's
language, as a chat turn on the extractive engine (``turn_prepare`` and
``turn_complete``, as bench/conversation_quality.py's ``run_turn``); a turn
is right when its first cited part comes from a passage holding that row
(a line with the row's name and the asked value).

Printed PDFs (``--formats printed-pdf``): each table as an HTML page with
a bordered table (right to left in Persian and Arabic) printed to PDF by
headless Chromium in DejaVu Sans (tests/resources/test_parsing_languages.py
``_print_to_pdf``): a text layer in every language.

Scans (``--formats scan scan-150 scan-noisy scan-fax``): each table drawn as
a ruled table on a US-letter page (tests/page_images.py ``table_image``,
DejaVu Sans 9 points, the first column on the right in Persian and Arabic)
and uploaded as a PNG at 300 dpi, at 150 dpi, or at 300 dpi as a scanner
might give it (bench/ocr_quality.py ``scanned``: turned 0.6 degrees,
blurred, speckled), or as a fax (``faxed``: a 1-bit CCITT G4 TIFF at
200 dpi), read by the service's OCR (resources/parsing/ocr_tables.py).

Measured (docs/ocr.md, "Measured"; 120 questions each, every turn cited):
99.2 % right in English and Persian (CSV and XLSX), 95.0 % (CSV) and 95.8 %
(XLSX) in Arabic, 99.2 % for the English PDF (70.8 % with its table read as
lines of text); printed PDFs 99.2 % English and Persian, 95.8 % Arabic
(70.8 % and 66.7 % with a right-to-left page's tables not looked for);
scans at 300 dpi 99.2 % English, 94.2 % Persian, 95.8 % Arabic (150 dpi:
99.2, 95.0, 95.8; the noisy scan: 99.2, 95.8, 93.3; the fax: 90.8, 66.7,
75.0).

Writes bench/results/table_chat.json (the rows of languages and formats not
run are kept).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

REPO = Path(__file__).resolve().parent.parent
ORGANIZATION = "bench-table-chat"
RESULTS = REPO / "bench" / "results" / "table_chat.json"
COLOURS = {
    "en": ("Amber", "Cobalt", "Crimson", "Ivory", "Jade", "Green", "Yellow", "Orange", "Violet", "Golden"),
    "fa": ("کهربایی", "لاجوردی", "ارغوانی", "عاجی", "یشمی", "سبز", "زرد", "نارنجی", "بنفش", "طلایی"),
    "ar": (
        "الكهرماني",
        "اللازوردي",
        "القرمزي",
        "العاجي",
        "اليشمي",
        "الأخضر",
        "الأصفر",
        "البرتقالي",
        "البنفسجي",
        "الذهبي",
    ),
}
CODE = {"en": "Code", "fa": "کد", "ar": "الرمز"}
# table: per language (header, kinds, question template; {name} is the row's name)
TABLES: dict[str, dict[str, tuple[tuple[str, str], tuple[str, ...], str]]] = {
    "premium": {
        "en": (
            ("Plan", "Monthly premium (EUR)"),
            ("Basic plan", "Family plan", "Senior plan", "Travel plan"),
            "What is the monthly premium of the {name}?",
        ),
        "fa": (
            ("طرح", "حق بیمه ماهانه (یورو)"),
            ("طرح پایه", "طرح خانواده", "طرح سالمندان", "طرح سفر"),
            "حق بیمه ماهانه {name} چقدر است؟",
        ),
        "ar": (
            ("الخطة", "القسط الشهري (يورو)"),
            ("خطة أساسية", "خطة عائلية", "خطة كبار السن", "خطة السفر"),
            "كم القسط الشهري لـ{name}؟",
        ),
    },
    "dosage": {
        "en": (
            ("Medicine", "Adult dose (mg)"),
            ("syrup", "tablets", "drops", "capsules"),
            "What is the adult dose of {name}?",
        ),
        "fa": (
            ("دارو", "دوز بزرگسالان (میلی‌گرم)"),
            ("شربت", "قرص", "قطره", "کپسول"),
            "دوز بزرگسالان {name} چقدر است؟",
        ),
        "ar": (
            ("الدواء", "جرعة البالغين (ملغ)"),
            ("شراب", "أقراص", "قطرات", "كبسولات"),
            "ما جرعة البالغين من {name}؟",
        ),
    },
    "deadline": {
        "en": (
            ("Form", "Filing deadline"),
            ("tax return", "permit renewal", "grant report", "visa application"),
            "When is the filing deadline of the {name}?",
        ),
        "fa": (
            ("فرم", "مهلت ارسال"),
            ("اظهارنامه مالیاتی", "تمدید مجوز", "گزارش کمک‌هزینه", "درخواست ویزا"),
            "مهلت ارسال {name} چه زمانی است؟",
        ),
        "ar": (
            ("النموذج", "الموعد النهائي للتقديم"),
            ("الإقرار الضريبي", "تجديد التصريح", "تقرير المنحة", "طلب التأشيرة"),
            "ما الموعد النهائي لتقديم {name}؟",
        ),
    },
}


def _name(language: str, kind: str, colour: str) -> str:
    return f"{colour} {kind}" if language == "en" else f"{kind} {colour}"


def _value(table: str, n: int) -> str:
    if table == "premium":
        return str(35 + 11 * n)
    if table == "dosage":
        return str(50 + 25 * n)
    return f"2027-{1 + n % 12:02d}-{3 + n:02d}"


def table_rows(table: str, language: str, rows: int) -> tuple[list[list[str]], list[tuple[str, str, str]]]:
    """The table (header first) and (question, row name, value) triples."""
    header, kinds, question = TABLES[table][language]
    names = [_name(language, kind, colour) for kind in kinds for colour in COLOURS[language]][:rows]
    body = [[name, _value(table, n), f"{table[:3].upper()}-{1000 + 37 * n}"] for n, name in enumerate(names)]
    asked = [(question.format(name=name), name, value) for name, value, _ in body]
    return [[*header, CODE[language]], *body], asked


def encoded(rows: list[list[str]], form: str, language: str = "en") -> tuple[bytes, str]:
    if form in ("scan", "scan-noisy", "scan-150", "scan-fax"):
        from bench.ocr_quality import FAX_DPI, faxed, scanned
        from tests.page_images import image_bytes, table_image

        dpi = 150 if form == "scan-150" else 300
        page = table_image(rows, dpi=dpi, rtl=language != "en", language=language)
        if form == "scan-noisy":
            page = scanned(page, seed=len(rows))
        if form == "scan-fax":  # a 1-bit TIFF as fax servers store them
            tiff = io.BytesIO()
            faxed(page, seed=len(rows), dpi=dpi).save(
                tiff, format="TIFF", compression="group4", dpi=(FAX_DPI, FAX_DPI)
            )
            return tiff.getvalue(), "table.tif"
        return image_bytes([page], dpi=dpi), "table.png"
    if form == "printed-pdf":
        import tempfile
        from pathlib import Path

        from tests.resources.test_parsing_languages import _print_to_pdf

        direction = "ltr" if language == "en" else "rtl"
        cells = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
        head = f'<!DOCTYPE html><html lang="{language}" dir="{direction}">'
        body = '<body style="font-family: DejaVu Sans"><table style="border-collapse: collapse" border="1">'
        page = f"{head}{body}{cells}</table></body></html>"
        with tempfile.TemporaryDirectory() as directory:
            return _print_to_pdf(page.encode(), Path(directory)), "table.pdf"
    if form == "pdf":
        from tests.resources.files import make_table_pdf

        return make_table_pdf(rows, row_height=16), "table.pdf"
    if form == "csv":
        buffer = io.StringIO()
        csv.writer(buffer).writerows(rows)
        return buffer.getvalue().encode("utf-8"), "table.csv"
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue(), "table.xlsx"


def holds_row(text: str, name: str, value: str) -> bool:
    return any(name in line and value in line for line in text.splitlines())


def measure(organization: Any, api_key: Any, language: str, form: str, rows: int) -> dict[str, Any]:
    from bench.conversation_quality import run_turn
    from resources.batch_services import NewDocument, resources_create_many
    from retrieval.models import Passage
    from workspaces.models import Workspace

    workspace = Workspace.objects.create(organization=organization, name=f"{language}-{form}")
    documents, asked = [], []
    for table in TABLES:
        content, questions = table_rows(table, language, rows)
        data, filename = encoded(content, form, language)
        documents.append(
            NewDocument(data=data, title=table, filename=filename, metadata={"language": language})
        )
        asked += questions
    resources_create_many(workspace=workspace, documents=documents)
    passages = Passage.objects.filter(resource__workspace=workspace).count()
    right = cited = 0
    for n, (question, name, value) in enumerate(asked):
        messages = [{"role": "user", "content": question}]
        _, reply = run_turn(api_key, workspace, messages, f"{language}-{form}-{n}", "extractive")
        parts = [p for p in reply.response.get("parts", []) if p.get("source")]
        if parts:
            cited += 1
            text = Passage.objects.get(pk=parts[0]["source"]["passage_id"]).text
            right += holds_row(text, name, value)
    row = {
        "language": language,
        "format": form,
        "questions": len(asked),
        "passages": passages,
        "cited": cited,
        "first_citation_right_row": round(right / len(asked), 3),
    }
    print(
        f"{language} {form:<4}  first citation holds the row: {row['first_citation_right_row']:.1%} "
        f"of {len(asked)} (cited {cited}; {passages} passages)",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    formats = ["csv", "xlsx", "pdf", "printed-pdf", "scan", "scan-150", "scan-noisy", "scan-fax"]
    parser.add_argument("--formats", nargs="+", default=formats[:3], choices=formats)
    parser.add_argument("--languages", nargs="+", default=["en", "fa", "ar"], choices=["en", "fa", "ar"])
    parser.add_argument("--rows", type=int, default=40, help="rows a table, at most 40")
    args = parser.parse_args()
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    _django.setup("table_chat")
    import logging

    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    from workspaces import services
    from workspaces.models import ApiKeyScope, Organization

    Organization.objects.filter(name=ORGANIZATION).delete()
    organization = Organization.objects.create(name=ORGANIZATION)
    api_key = services.api_key_create(
        organization=organization, name="bench", scope=ApiKeyScope.ADMIN
    ).api_key
    rows = [
        measure(organization, api_key, language, form, args.rows)
        for language in args.languages
        for form in args.formats
        if form != "pdf" or language == "en"  # the PDF's font writes Latin letters only
    ]
    # Rows of the languages and formats not run this time stay as they were.
    measured = {(row["language"], row["format"]) for row in rows}
    kept = json.loads(RESULTS.read_text(encoding="utf-8"))["rows"] if RESULTS.exists() else []
    rows = [row for row in kept if (row["language"], row["format"]) not in measured] + rows
    RESULTS.write_text(json.dumps({"rows": rows}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
