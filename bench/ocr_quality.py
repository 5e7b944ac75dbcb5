"""OCR quality: character error rate per language and resolution, and table
questions answered from the right row (docs/ocr.md, "Measured").

    .venv/bin/python bench/ocr_quality.py [--dataset ../shared/datasets/multilingual-dev] [--dpi 300 150]

Pages: the 30 passages of the multilingual development set's topics.jsonl
(read in place, never copied) in English, Persian and Arabic, five
passages a page, drawn by tests/page_images.py (DejaVu Sans, 12 points, a
US-letter page, shaped by HarfBuzz through Pillow's libraqm: clean pages,
as a flatbed scanner would see a printed one) at each resolution, and read
by the service's own OCR (resources/parsing/ocr.py, the document's
language choosing the model). The character error rate is the edit
distance between what was read and the page's passages (runs of whitespace
counted as one space) over the passages' length, summed over the pages.
With ``--scan`` the 300-dpi pages are read again as a scanner would give
them (``scanned``: turned by 0.6 degrees, blurred by a pixel, speckled with
Gaussian noise of standard deviation 25 grey levels, a fixed seed) and as a
fax would (``faxed``: 200 dpi, turned 0.4 degrees, 1-bit, line noise).

Tables: a CSV of 60 products (name, price, stock, warehouse) parsed and
chunked as an upload is (resources/parsing/tables.py, the configured
embedding model's tokenizer and CHUNK_SIZE_TOKENS), each passage embedded
by the configured model; for each product a question in English and one in
Persian (the price, the stock) is right when the passage ranked first by
cosine similarity holds that product's row.

Writes bench/results/ocr_quality.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "fa", "ar")
PER_PAGE = 5
RESULTS = REPO / "bench" / "results" / "ocr_quality.json"


def _setup() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import django

    django.setup()


def scanned(image: Any, seed: int) -> Any:
    """``image`` as a flatbed scan of the printed page might come: a little
    turned, blurred and noisy."""
    import numpy
    from PIL import Image, ImageFilter

    turned = image.rotate(0.6, resample=Image.Resampling.BICUBIC, fillcolor=255)
    blurred = numpy.asarray(turned.filter(ImageFilter.GaussianBlur(1)), dtype=numpy.float32)
    noisy = blurred + numpy.random.default_rng(seed).normal(0, 25, blurred.shape)
    return Image.fromarray(numpy.clip(noisy, 0, 255).astype(numpy.uint8), mode="L")


FAX_DPI = 200


def faxed(image: Any, seed: int, dpi: int = 300) -> Any:
    """``image`` (drawn at ``dpi``) as a fax machine sends the printed page:
    at FAX_DPI (a fax's fine mode, about 200 dots an inch), turned 0.4
    degrees, each dot black or white from a fixed threshold over the page's
    grey and a little sensor noise (standard deviation 20 grey levels), with
    one dot in 2,000 flipped (line noise); a 1-bit image."""
    import numpy
    from PIL import Image

    size = (round(image.size[0] * FAX_DPI / dpi), round(image.size[1] * FAX_DPI / dpi))
    small = image.convert("L").resize(size, Image.Resampling.BILINEAR)
    turned = small.rotate(0.4, resample=Image.Resampling.BILINEAR, fillcolor=255)
    rng = numpy.random.default_rng(seed)
    grey = numpy.asarray(turned, dtype=numpy.float32) + rng.normal(0, 20, (size[1], size[0]))
    black = (grey < 128) ^ (rng.random(grey.shape) < 0.0005)
    return Image.fromarray(numpy.where(black, 0, 255).astype(numpy.uint8), mode="L").convert("1")


def character_error_rates(dataset: Path, dpis: list[int], scan: bool = False) -> list[dict[str, Any]]:
    from bench.multilingual import load_topics
    from resources.parsing.ocr import ocr_budget, ocr_page
    from tests.page_images import character_error_rate, page_images

    topics = load_topics(dataset)
    rows = []
    for language in LANGUAGES:
        passages = [topic.passages[language] for topic in topics]
        kinds = [(dpi, "clean") for dpi in dpis] + ([(300, "scan"), (300, "fax")] if scan else [])
        for dpi, kind in kinds:
            errors = characters = pages = 0.0
            started = time.monotonic()
            for first in range(0, len(passages), PER_PAGE):
                group = passages[first : first + PER_PAGE]
                images = page_images(group, dpi=dpi, rtl=language != "en", language=language)
                if kind == "scan":
                    images = [scanned(image, seed=first + n) for n, image in enumerate(images)]
                elif kind == "fax":
                    images = [faxed(image, seed=first + n, dpi=dpi) for n, image in enumerate(images)]
                with ocr_budget(language=language):
                    read = "\n\n".join(region.text for image in images for region in ocr_page(image))
                expected = "\n\n".join(group)
                length = len(" ".join(expected.split()))
                errors += character_error_rate(read, expected) * length
                characters += length
                pages += len(images)
            seconds = time.monotonic() - started
            rows.append(
                {
                    "language": language,
                    "dpi": dpi,
                    "scan": kind != "clean",
                    "kind": kind,
                    "pages": int(pages),
                    "characters": int(characters),
                    "cer": round(errors / characters, 4),
                    "seconds_per_page": round(seconds / pages, 2),
                }
            )
            print(
                f"{language}  {dpi:>3} dpi {kind:<5}  CER {errors / characters:6.2%}  "
                f"({int(pages)} pages, {int(characters)} characters, {seconds / pages:.1f} s a page)",
                flush=True,
            )
    return rows


PRODUCTS = [
    f"{color} {thing}"
    for color in ("Amber", "Cobalt", "Crimson", "Ivory", "Jade", "Onyx")
    for thing in (
        "Kettle",
        "Juicer",
        "Blender",
        "Toaster",
        "Grinder",
        "Mixer",
        "Steamer",
        "Fryer",
        "Press",
        "Scale",
    )
]
CITIES = ("Tehran", "Shiraz", "Tabriz", "Isfahan", "Mashhad")


def _table() -> tuple[bytes, list[tuple[str, str]]]:
    """The CSV, and (question, the row it asks about) pairs."""
    lines = ["Product,Price (EUR),Stock,Warehouse"]
    questions = []
    for n, product in enumerate(PRODUCTS):
        row = f"{product} | {40 + 7 * n} | {(n * 13) % 50} | {CITIES[n % len(CITIES)]}"
        lines.append(row.replace(" | ", ","))
        questions += [
            (f"How much does the {product} cost?", row),
            (f"How many {product} units are in stock?", row),
            (f"قیمت {product} چقدر است؟", row),
            (f"چند عدد {product} در انبار موجود است؟", row),
        ]
    return "\n".join(lines).encode(), questions


def table_questions() -> dict[str, Any]:
    import numpy

    from resources.ingestion import resource_chunks
    from retrieval.embeddings import get_embedder

    data, questions = _table()
    chunks = resource_chunks(data=data, content_type="text/csv")
    embedder = get_embedder()
    passages = numpy.array(embedder.embed_passages([chunk.text for chunk in chunks]))
    asked = numpy.array(embedder.embed_queries([question for question, _ in questions]))
    top = (asked @ passages.T).argmax(axis=1)
    right = [row in chunks[int(index)].text for (_, row), index in zip(questions, top, strict=True)]
    english = [ok for (question, _), ok in zip(questions, right, strict=True) if question.isascii()]
    persian = [ok for (question, _), ok in zip(questions, right, strict=True) if not question.isascii()]
    with_header = all(chunk.text.split("\n")[1].startswith("Product | Price") for chunk in chunks)
    result = {
        "rows": len(PRODUCTS),
        "passages": len(chunks),
        "every_passage_has_the_header": with_header,
        "questions_en": len(english),
        "right_row_first_en": round(sum(english) / len(english), 3),
        "questions_fa": len(persian),
        "right_row_first_fa": round(sum(persian) / len(persian), 3),
        "embedding_model": embedder.model_name,
    }
    print(
        f"tables: {len(PRODUCTS)} rows in {len(chunks)} passages (header in each: {with_header}); "
        f"right row ranked first: English {result['right_row_first_en']:.0%}, "
        f"Persian {result['right_row_first_fa']:.0%} ({embedder.model_name})"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "multilingual-dev"
    )
    parser.add_argument("--dpi", type=int, nargs="+", default=[300, 150])
    parser.add_argument("--no-tables", action="store_true")
    parser.add_argument("--scan", action="store_true", help="also read the 300-dpi pages as noisy scans")
    args = parser.parse_args()
    _setup()
    import pytesseract

    rows = character_error_rates(args.dataset, args.dpi, scan=args.scan)
    result: dict[str, Any] = {"tesseract": str(pytesseract.get_tesseract_version()), "cer": rows}
    if not args.no_tables:
        result["tables"] = table_questions()
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
