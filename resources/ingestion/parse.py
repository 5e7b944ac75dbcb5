"""The per-document phase: parse and chunk one resource (titling it from
its text when it has no title, resources/titles.py), or fail it when it
cannot be read."""

from __future__ import annotations

import functools

from django.conf import settings

from resources.chunking import Chunk, chunk_document
from resources.heartbeat import heartbeat_while
from resources.ingestion.claim import heartbeat
from resources.ingestion.turns import turn_start
from resources.ingestion.write import chunking_params, resource_fail, workspace_language
from resources.models import Resource
from resources.parsing import ParsedDocument, ParseError, TurnOver, parse_document
from resources.parsing.detect import IMAGES, PDF
from resources.parsing.ocr import MODELS as OCR_MODELS
from resources.titles import content_title, is_untitled

# The formats with pages OCR may read (images, scanned PDF pages).
OCR_TYPES = frozenset((*IMAGES, PDF))


def heartbeat_interval() -> float:
    """How often a running parse refreshes its heartbeat: well within the stale age."""
    return float(min(60.0, settings.INGEST_STALE_AFTER_SECONDS / 5))


def resource_prepare(*, resource: Resource, data: bytes) -> list[Chunk] | None:
    """The per-document part of an ingestion: parse and chunk, or fail the
    document (``None``) when it cannot be read. One resource at a time, in
    the single path and in batches alike; anything but a document error
    propagates (a retry), :class:`TurnOver` too (a turn of its OCR done:
    resources/ingestion/turns.py)."""
    language = ocr_language(resource)
    try:
        with heartbeat_while(
            functools.partial(heartbeat, resource.pk),
            interval=heartbeat_interval(),
            limit=settings.INGEST_PARSE_TIMEOUT_SECONDS,
        ):
            turn = turn_start(resource, language=language) if resource.content_type in OCR_TYPES else None
            document = parse_document(data, content_type=resource.content_type, language=language, turn=turn)
            chunks = document_chunks(document)
    except TurnOver:
        raise
    except ParseError as exc:
        resource_fail(resource_id=resource.pk, code=exc.code, message=exc.message)
        return None
    resource_title_from(resource=resource, document=document)
    return chunks


def ocr_language(resource: Resource) -> str | None:
    """The language a document's images are read in (docs/ocr.md, "Which
    language"): its ``metadata.language`` (BCP 47, e.g. ``fa``), else the
    language most of its workspace's passages are in (for the formats OCR
    may read), else none (OCR_LANGUAGES)."""
    language = (resource.metadata or {}).get("language")
    if isinstance(language, str) and language.split("-")[0].lower() in OCR_MODELS:
        return language
    if resource.content_type in OCR_TYPES:
        return workspace_language(resource.workspace_id)
    return None


def resource_title_from(*, resource: Resource, document: ParsedDocument) -> None:
    """Title an untitled resource from its text (written at once: a title is
    not retrieval's, so it need not wait for the passages)."""
    if not is_untitled(resource.title, resource.filename):
        return
    title = content_title(document)
    if title is not None and title != resource.title:
        Resource.objects.filter(pk=resource.pk).update(title=title)
        resource.title = title


def resource_chunks(*, data: bytes, content_type: str) -> list[Chunk]:
    """Parse and chunk a document for the embedding model in use."""
    return document_chunks(parse_document(data, content_type=content_type))


def document_chunks(document: ParsedDocument) -> list[Chunk]:
    """Chunk a parsed document for the embedding model in use."""
    params = chunking_params()
    chunks = chunk_document(
        document, tokenizer=params.tokenizer, size=params.size, overlap=settings.CHUNK_OVERLAP_TOKENS
    )
    if not chunks:
        raise ParseError("empty_document", "The document contains no extractable text.")
    return chunks
