"""Routes of the OpenAI-compatible endpoint, relative to /api/v1/: the base
URL an OpenAI client is given is ``…/workspaces/{workspace_id}/openai/v1``."""

from __future__ import annotations

from django.urls import URLPattern, path

from chat.openai_api import apis
from daneshyar.api import WORKSPACE_ROUTE

urlpatterns: list[URLPattern] = [
    path(f"{WORKSPACE_ROUTE}openai/v1/models", apis.OpenAIModelsApi.as_view(), name="openai-models"),
    path(
        f"{WORKSPACE_ROUTE}openai/v1/chat/completions",
        apis.ChatCompletionsApi.as_view(),
        name="openai-chat-completions",
    ),
]
