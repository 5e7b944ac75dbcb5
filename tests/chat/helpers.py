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

from django.http import StreamingHttpResponse

from chat.models import Grounding, Message, Session
from chat.services.messages import ReplyRecord, StoredQuestion, reply_store
from chat.services.questions import question_store
from resources.models import Resource, ResourceStatus
from retrieval.embeddings import get_embedder
from retrieval.models import Passage
from retrieval.passage_analysis import passages_analysis
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
    # By the workspace's model, as ingestion embeds (retrieval/indexing.py).
    embedder = get_embedder(workspace.embedding_model)
    vectors = embedder.embed_passages(paragraphs)
    offset = 0
    rows = []
    analysed = passages_analysis(paragraphs)
    for ordinal, (paragraph, vector, analysis) in enumerate(zip(paragraphs, vectors, analysed, strict=True)):
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
                embedding_model=embedder.model_name,
                **analysis,
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


def chat_data(tenant: Any, path: str = "chat/", **body: Any) -> dict[str, Any]:
    """A turn posted with ``tenant``'s admin key as end user ``u1`` to
    ``path`` of its workspace (``chat/`` by default): the envelope's data,
    after checking for a 200."""
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/{path}", {"external_user_id": "u1", **body}, format="json"
    )
    assert response.status_code == 200, response.json()
    data: dict[str, Any] = response.json()["data"]
    return data


def traced_turn(
    tenant: Any, message: str, session: str | None = None
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The reply, the prompt trace and the session of one turn (``session``: continue it)."""
    body: dict[str, Any] = {"message": message, "include_prompt_trace": True}
    if session is not None:
        body["session_id"] = session
    data = chat_data(tenant, **body)
    return data["assistant_message"], data["prompt_trace"], data["session"]["id"]


def cited_resources(assistant: dict[str, Any]) -> set[str]:
    """The ids of the documents a reply cites."""
    return {p["source"]["resource_id"] for p in assistant["response"]["parts"] if p["source"]}


def stream_events(tenant: Any, **body: Any) -> list[tuple[str, dict[str, Any]]]:
    """A turn streamed like :func:`chat_data`: its (event, data) pairs, the
    last of them checked to be the final ``message``."""
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/stream/",
        {"external_user_id": "u1", **body},
        format="json",
    )
    events = list(sse_events(stream_of(response)))
    assert events and events[-1][0] == "message", events
    return events


# Three clinic guidelines, each with a sentence about patients over 75
# (the follow-up tests: tests/chat/test_conversation*.py).
STATINS = (
    "Statin therapy for adults with diabetes.\n\n"
    "Start a moderate-intensity statin for adults with diabetes aged 40 to 75, "
    "whatever their cholesterol.\n\n"
    "For patients over 75, continue a statin already taken, and discuss benefits and risks before "
    "starting one.\n\n"
    "Check a lipid panel before starting a statin and again after 4 to 12 weeks."
)
BLOOD_PRESSURE = (
    "Blood pressure targets for adults with diabetes.\n\n"
    "Aim for a blood pressure below 130/80 mmHg in adults with diabetes.\n\n"
    "For patients over 75, a systolic target below 140 mmHg is reasonable; watch for dizziness on standing."
)
VACCINES = (
    "Vaccination of adults with diabetes.\n\n"
    "Adults with diabetes need a yearly influenza vaccine, and the hepatitis B series when under 60.\n\n"
    "For patients over 75, give the pneumococcal vaccine and offer the RSV vaccine."
)
CLINIC_GUIDELINES = {"Statins": STATINS, "Blood pressure": BLOOD_PRESSURE, "Vaccines": VACCINES}


def answer_store(stored: StoredQuestion, text: str, *, model: str = "scripted") -> Message:
    """A general-knowledge answer ``text`` to ``stored``, as the turn service stores one."""
    return reply_store(
        question=stored,
        reply=ReplyRecord(
            content=text,
            response={"type": "answer", "parts": [{"text": text, "source": None}], "form": None},
            grounding=Grounding.GENERAL_KNOWLEDGE,
            model=model,
            prompt_tokens=None,
            completion_tokens=None,
            generation_ms=1,
            retrieved=[],
            invalid_citations=[],
            is_fallback=False,
        ),
    )


def stored_session(workspace: Workspace, *, turns: int, filler: str, model: str = "scripted") -> Session:
    """A session of end user ``u1`` holding ``turns`` stored turns: question
    ``turn {i} {filler}``, answer ``answer {i}``."""
    session_id = None
    for index in range(turns):
        stored = question_store(
            workspace=workspace,
            external_user_id="u1",
            session_id=session_id,
            content=f"turn {index} " + filler,
        )
        session_id = stored.session.id
        answer_store(stored, f"answer {index}", model=model)
    assert session_id is not None
    return Session.objects.get(id=session_id)
