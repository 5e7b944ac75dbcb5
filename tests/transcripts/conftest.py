from __future__ import annotations

import json
from typing import Any

from rest_framework.test import APIClient


def export(client: APIClient, workspace_id: Any, **params: str) -> tuple[Any, list[dict[str, Any]]]:
    """GET the export; the response and its NDJSON lines parsed (empty on errors)."""
    response = client.get(f"/api/v1/workspaces/{workspace_id}/transcripts/", params)
    if not getattr(response, "streaming", False):
        return response, []
    body = b"".join(response.streaming_content).decode()
    assert body == "" or body.endswith("\n")
    return response, [json.loads(line) for line in body.splitlines()]
