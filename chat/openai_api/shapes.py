"""OpenAI's shapes for what the chat service produces: completions, stream
chunks, model lists and errors (the wire format the official SDKs parse)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework.request import Request

from chat.contract import MessageData, Part, Reply
from chat.openai_api.errors import openai_error_body
from chat.output import part_spans

OBJECT_COMPLETION = "chat.completion"
OBJECT_CHUNK = "chat.completion.chunk"


def completion_id(question_id: object) -> str:
    return f"chatcmpl-{str(question_id).replace('-', '')}"


def citation_annotations(
    request: Request, workspace_id: object, reply: Reply | None, content: str
) -> list[dict[str, Any]]:
    """Each cited part as an OpenAI ``url_citation``: where it stands in
    ``content``, its document's title, and the URL of its passages."""
    if reply is None:
        return []
    parts: list[Part] = reply["parts"]
    out: list[dict[str, Any]] = []
    for part, (start, end) in zip(parts, part_spans([p["text"] for p in parts]), strict=True):
        source = part["source"]
        if source is None:
            continue
        path = (
            f"/api/v1/workspaces/{workspace_id}/resources/{source['resource_id']}/passages/"
            f"#{source['passage_id']}"
        )
        out.append(
            {
                "type": "url_citation",
                "url_citation": {
                    "start_index": start,
                    "end_index": end,
                    "title": source["resource_title"],
                    "url": request.build_absolute_uri(path),
                },
            }
        )
    return out


def daneshyar_object(session_id: object, message: Mapping[str, Any]) -> dict[str, Any]:
    """What the chat.completion cannot say in OpenAI's own fields."""
    return {
        "session_id": str(session_id),
        "message_id": message["id"],
        "response": message.get("response"),
        "grounding": message.get("grounding"),
        "degraded": message.get("degraded", False),
        "provenance": message.get("provenance"),
    }


def usage(prompt_tokens: int | None, completion_tokens: int | None) -> dict[str, int]:
    prompt, completion = prompt_tokens or 0, completion_tokens or 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion(
    *,
    request: Request,
    workspace_id: object,
    session_id: object,
    question_id: object,
    created: int,
    message: MessageData,
    prompt_tokens: int | None,
    completion_tokens: int | None,
) -> dict[str, Any]:
    reply = message.get("response")
    return {
        "id": completion_id(question_id),
        "object": OBJECT_COMPLETION,
        "created": created,
        "model": message.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": message["content"],
                    "refusal": None,
                    "annotations": citation_annotations(request, workspace_id, reply, message["content"]),
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage(prompt_tokens, completion_tokens),
        "daneshyar": daneshyar_object(session_id, message),
    }


def chunk(
    *,
    question_id: object,
    created: int,
    model: str,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    extra: dict[str, Any] | None = None,
) -> bytes:
    body: dict[str, Any] = {
        "id": completion_id(question_id),
        "object": OBJECT_CHUNK,
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    if extra:
        body.update(extra)
    return data_line(body)


def data_line(body: Any) -> bytes:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


def error_object(
    status: int, code: str, message: str, fields: Mapping[str, list[str]] | None
) -> dict[str, Any]:
    """``{"error": {"message", "type", "code", "param"}}`` (chat/openai_api/errors.py
    builds it: errors raised before a view runs take this shape too)."""
    return openai_error_body(status, code, message, fields)
