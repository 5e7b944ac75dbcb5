"""Search over OCR'd documents against the same documents uploaded as text
(docs/ocr.md, "Measured").

    .venv/bin/python bench/ocr_search.py --dataset ../shared/datasets/multilingual-dev [--dpi 300 150]

For each language (English, Persian, Arabic) the 30 passages of the
multilingual development set's topics.jsonl (read in place, never copied)
are uploaded twice through the service's ingestion path
(``resources_create_many``, the ingestion task run in this process): once
as UTF-8 text into one workspace, once as a PNG of the passage drawn on a
page by tests/page_images.py (as bench/ocr_quality.py draws them) at each
resolution into another, read by OCR. Each document names its language in
its metadata. Every topic's question in that language then goes through
``retrieval.search.service.search`` (the configured legs, hybrid by
default); recall@5 is the share of questions whose own document is among
the first five distinct documents of the results (recall@1: is the first).

Measured (docs/ocr.md, "Measured"; multilingual-e5-small ONNX int8):
recall@5 and recall@1 1.00 for text and for OCR at 300 and 150 dpi, in
English, Persian and Arabic (the set's ceiling); with --parsinlu, ParsiNLU's
125 Persian questions: recall@5 1.00 both, recall@1 0.936 text, 0.944 OCR.

Writes bench/results/ocr_search.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

REPO = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "fa", "ar")
ORGANIZATION = "bench-ocr-search"
RESULTS = REPO / "bench" / "results" / "ocr_search.json"


def _image(passage: str, dpi: int, language: str) -> bytes:
    """A PNG of the page, or a multi-page TIFF where the passage takes more."""
    from tests.page_images import page_images

    pages = page_images([passage], dpi=dpi, rtl=language != "en", language=language)
    buffer = io.BytesIO()
    if len(pages) > 1:
        pages[0].save(buffer, format="TIFF", save_all=True, append_images=pages[1:], dpi=(dpi, dpi))
    else:
        pages[0].save(buffer, format="PNG", dpi=(dpi, dpi))
    return buffer.getvalue()


def parsinlu(dataset: Path, dpi: int) -> dict[str, Any]:
    """Recall over ParsiNLU's Persian passages (each distinct one a document)
    and its 125 questions, text against OCR."""
    from bench.multilingual import load_reading
    from workspaces.models import Organization, Workspace

    reading = load_reading(dataset)
    passages = list(dict.fromkeys(q.passage for q in reading))
    organization = Organization.objects.get(name=ORGANIZATION)
    out: dict[str, Any] = {"questions": len(reading), "documents": len(passages), "dpi": dpi}
    for name, files in (
        ("text", [p.encode("utf-8") for p in passages]),
        ("ocr", [_image(p, dpi, "fa") for p in passages]),
    ):
        space = Workspace.objects.create(organization=organization, name=f"parsinlu-{name}")
        ids = upload(
            space,
            files,
            "fa",
            "passage.txt" if name == "text" else "passage.tif",
        )
        by_passage = dict(zip(passages, ids, strict=True))
        first, five = recalls(space, [q.question for q in reading], [by_passage[q.passage] for q in reading])
        out[f"recall@1_{name}"], out[f"recall@5_{name}"] = round(first, 3), round(five, 3)
    print(f"ParsiNLU {dpi} dpi: {out}", flush=True)
    return out


def upload(workspace: Any, files: list[bytes], language: str, filename: str) -> list[uuid.UUID]:
    """Upload ``files``, ingested in this process; their ids, in order, all ready."""
    from resources.batch_services import NewDocument, resources_create_many
    from resources.models import Resource, ResourceStatus

    documents = [
        NewDocument(data=data, title=f"topic {n}", filename=filename, metadata={"language": language})
        for n, data in enumerate(files)
    ]
    outcomes = resources_create_many(workspace=workspace, documents=documents)
    ids = [o.resource.id for o in outcomes if o.resource is not None]
    ready = Resource.objects.filter(id__in=ids, status=ResourceStatus.READY).count()
    if len(ids) != len(files) or ready != len(ids):
        raise RuntimeError(f"{workspace.name}: {ready} of {len(files)} documents ready")
    return ids


def recalls(workspace: Any, questions: list[str], ids: list[uuid.UUID]) -> tuple[float, float]:
    """Recall@1 and recall@5 over distinct documents."""
    from retrieval.search.service import search

    first = five = 0
    for question, right in zip(questions, ids, strict=True):
        ranked: list[uuid.UUID] = []
        for passage in search(workspace=workspace, query=question):
            if passage.resource_id not in ranked:
                ranked.append(passage.resource_id)
        first += ranked[:1] == [right]
        five += right in ranked[:5]
    return first / len(questions), five / len(questions)


def run(dataset: Path, dpis: list[int], limit: int) -> list[dict[str, Any]]:
    from bench.multilingual import load_topics
    from workspaces.models import Organization, Workspace

    topics = load_topics(dataset)
    topics = topics[:limit] if limit else topics
    Organization.objects.filter(name=ORGANIZATION).delete()
    organization = Organization.objects.create(name=ORGANIZATION)
    rows = []
    for language in LANGUAGES:
        passages = [t.passages[language] for t in topics]
        questions = [t.questions[language] for t in topics]
        text_space = Workspace.objects.create(organization=organization, name=f"text-{language}")
        texts = upload(text_space, [p.encode("utf-8") for p in passages], language, "topic.txt")
        text_recall = recalls(text_space, questions, texts)
        for dpi in dpis:
            space = Workspace.objects.create(organization=organization, name=f"ocr-{language}-{dpi}")
            started = time.monotonic()
            images = upload(space, [_image(p, dpi, language) for p in passages], language, "topic.png")
            seconds = time.monotonic() - started
            ocr_recall = recalls(space, questions, images)
            row: dict[str, Any] = {
                "language": language,
                "dpi": dpi,
                "documents": len(topics),
                "recall@1_text": round(text_recall[0], 3),
                "recall@1_ocr": round(ocr_recall[0], 3),
                "recall@5_text": round(text_recall[1], 3),
                "recall@5_ocr": round(ocr_recall[1], 3),
                "ingest_seconds_per_page": round(seconds / len(topics), 2),
            }
            row["gap@5"] = round(text_recall[1] - ocr_recall[1], 3)
            rows.append(row)
            print(
                f"{language} {dpi:>3} dpi  recall@5 text {row['recall@5_text']:.3f} "
                f"OCR {row['recall@5_ocr']:.3f} (gap {row['gap@5']:+.3f}); recall@1 text "
                f"{row['recall@1_text']:.3f} OCR {row['recall@1_ocr']:.3f}  "
                f"({len(topics)} documents, {row['ingest_seconds_per_page']:.1f} s a page)",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "multilingual-dev"
    )
    parser.add_argument("--dpi", type=int, nargs="+", default=[300])
    parser.add_argument("--limit", type=int, default=0, help="first N topics")
    parser.add_argument("--parsinlu", action="store_true", help="also ParsiNLU's Persian set, 300 dpi")
    args = parser.parse_args()
    # The ingestion task runs in this process, when each upload commits.
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    _django.setup("ocr_search")
    import logging

    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    from django.conf import settings

    rows = run(args.dataset, args.dpi, args.limit)
    result: dict[str, Any] = {"model": settings.EMBEDDING_MODEL_NAME, "rows": rows}
    if args.parsinlu:
        result["parsinlu"] = parsinlu(args.dataset, 300)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
