"""The per-document phase: parse and chunk one resource, or fail it when
it cannot be read."""

from __future__ import annotations

import functools

from django.conf import settings

from resources.chunking import Chunk, chunk_document
from resources.heartbeat import heartbeat_while
from resources.ingestion.claim import heartbeat
from resources.ingestion.write import chunking_params, resource_fail
from resources.models import Resource
from resources.parsing import ParseError, parse_document


def heartbeat_interval() -> float:
    """How often a running parse refreshes its heartbeat: well within the stale age."""
    return float(min(60.0, settings.INGEST_STALE_AFTER_SECONDS / 5))


def resource_prepare(*, resource: Resource, data: bytes) -> list[Chunk] | None:
    """The per-document part of an ingestion: parse and chunk, or fail the
    document (``None``) when it cannot be read. One resource at a time, in
    the single path and in batches alike; anything but a document error
    propagates (a retry)."""
    try:
        with heartbeat_while(
            functools.partial(heartbeat, resource.pk),
            interval=heartbeat_interval(),
            limit=settings.INGEST_PARSE_TIMEOUT_SECONDS,
        ):
            return resource_chunks(data=data, content_type=resource.content_type)
    except ParseError as exc:
        resource_fail(resource_id=resource.pk, code=exc.code, message=exc.message)
        return None


def resource_chunks(*, data: bytes, content_type: str) -> list[Chunk]:
    """Parse and chunk a document for the embedding model in use."""
    params = chunking_params()
    document = parse_document(data, content_type=content_type)
    chunks = chunk_document(
        document, tokenizer=params.tokenizer, size=params.size, overlap=settings.CHUNK_OVERLAP_TOKENS
    )
    if not chunks:
        raise ParseError("empty_document", "The document contains no extractable text.")
    return chunks
