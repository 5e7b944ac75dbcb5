"""Routes of the chat app, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from chat import apis
from daneshyar.api import WORKSPACE_ROUTE

urlpatterns: list[URLPattern] = [
    path("models/", apis.ModelListApi.as_view(), name="model-list"),
    path("certificates/keys", apis.CertificateKeysApi.as_view(), name="certificate-keys"),
    path("certificates/verify", apis.CertificateVerifyApi.as_view(), name="certificate-verify"),
    path(f"{WORKSPACE_ROUTE}chat/", apis.ChatApi.as_view(), name="chat"),
    path(f"{WORKSPACE_ROUTE}guard-rules/", apis.GuardRulesApi.as_view(), name="guard-rules"),
    path(f"{WORKSPACE_ROUTE}chat/stream/", apis.ChatStreamApi.as_view(), name="chat-stream"),
    path(f"{WORKSPACE_ROUTE}sessions/", apis.SessionListApi.as_view(), name="session-list"),
    path(
        f"{WORKSPACE_ROUTE}sessions/<uuid:session_id>/",
        apis.SessionDetailApi.as_view(),
        name="session-detail",
    ),
    path(
        f"{WORKSPACE_ROUTE}sessions/<uuid:session_id>/messages/",
        apis.SessionMessagesApi.as_view(),
        name="session-messages",
    ),
    path(
        f"{WORKSPACE_ROUTE}sessions/<uuid:session_id>/messages/<uuid:message_id>/feedback/",
        apis.FeedbackApi.as_view(),
        name="message-feedback",
    ),
]
