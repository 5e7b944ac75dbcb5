"""The MCP server's route, relative to /api/v1/: one URL per workspace."""

from __future__ import annotations

from django.urls import URLPattern, path

from chat.mcp_server import apis
from daneshyar.api import WORKSPACE_ROUTE

urlpatterns: list[URLPattern] = [
    path(f"{WORKSPACE_ROUTE}mcp/", apis.McpApi.as_view(), name="mcp"),
]
