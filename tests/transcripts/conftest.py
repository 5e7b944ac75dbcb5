from __future__ import annotations

import json
import uuid
from typing import Any

from rest_framework.test import APIClient

from tests.responses import streamed


def export(
    client: APIClient, workspace_id: uuid.UUID | str, **params: str
) -> tuple[Any, list[dict[str, Any]]]:
    """GET the export; the response and its NDJSON lines parsed (empty on errors)."""
    response = client.get(f"/api/v1/workspaces/{workspace_id}/transcripts/", params)
    if not getattr(response, "streaming", False):
        return response, []
    body = streamed(response).decode()
    assert body == "" or body.endswith("\n")
    return response, [json.loads(line) for line in body.splitlines()]
