"""Test helpers for chat.

``ingest_text`` creates a *ready* resource whose passages are exactly the
text's paragraphs, embedded with the real embedder, so that a test controls
how many passages exist (the retrieval rules are counted in passages). The
real upload → worker → passages path is exercised end to end in
test_local_backend.py and in tests/resources."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.http import StreamingHttpResponse

from resources.models import Resource, ResourceStatus
from retrieval.embeddings import get_embedder
from retrieval.models import Passage
from workspaces.models import Workspace


def ingest_text(workspace: Workspace, title: str, text: str) -> Resource:
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    data = text.encode()
    resource = Resource.objects.create(
        workspace=workspace,
        title=title,
        filename=f"{title}.txt",
        content_type="text/plain",
        size_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        status=ResourceStatus.READY,
        passage_count=len(paragraphs),
    )
    vectors = get_embedder().embed_documents(paragraphs)
    offset = 0
    rows = []
    for ordinal, (paragraph, vector) in enumerate(zip(paragraphs, vectors, strict=True)):
        start = text.index(paragraph, offset)
        offset = start + len(paragraph)
        rows.append(
            Passage(
                workspace=workspace,
                resource=resource,
                ordinal=ordinal,
                text=paragraph,
                char_start=start,
                char_end=offset,
                token_count=len(paragraph.split()),
                embedding=vector,
                embedding_model=settings.EMBEDDING_MODEL_NAME,
            )
        )
    Passage.objects.bulk_create(rows)
    return resource


def answer(*parts: tuple[str, int | None]) -> str:
    """A raw model reply with the given (text, passage number) parts."""
    return json.dumps({"type": "answer", "parts": [{"text": t, "passage": p} for t, p in parts]})


def sse_events(chunks: Iterator[bytes]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Parse a text/event-stream body into (event, data) pairs."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            event, data = "message", ""
            for line in block.decode().splitlines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data += line[6:]
            if data:
                yield event, json.loads(data)


def stream_of(response: Any) -> Iterator[bytes]:
    assert isinstance(response, StreamingHttpResponse), response
    content = response.streaming_content
    assert isinstance(content, Iterator), content  # a sync response: the test client's
    return content
