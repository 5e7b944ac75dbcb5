"""Routes of the chat app, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from chat.apis import certificates, chat, end_user_tokens, feedback, guard, models, sessions
from daneshyar.api import WORKSPACE_ROUTE

SESSION = f"{WORKSPACE_ROUTE}sessions/<uuid:session_id>/"
MESSAGE = f"{SESSION}messages/<uuid:message_id>/"

urlpatterns: list[URLPattern] = [
    path("models/", models.ModelListApi.as_view(), name="model-list"),
    path("certificates/keys", certificates.CertificateKeysApi.as_view(), name="certificate-keys"),
    path("certificates/verify", certificates.CertificateVerifyApi.as_view(), name="certificate-verify"),
    path(f"{WORKSPACE_ROUTE}chat/", chat.ChatApi.as_view(), name="chat"),
    path(
        f"{WORKSPACE_ROUTE}end-user-tokens/",
        end_user_tokens.EndUserTokenApi.as_view(),
        name="end-user-tokens",
    ),
    path(f"{WORKSPACE_ROUTE}guard-rules/", guard.GuardRulesApi.as_view(), name="guard-rules"),
    path(f"{WORKSPACE_ROUTE}chat/stream/", chat.ChatStreamApi.as_view(), name="chat-stream"),
    path(f"{WORKSPACE_ROUTE}sessions/", sessions.SessionListApi.as_view(), name="session-list"),
    path(SESSION, sessions.SessionDetailApi.as_view(), name="session-detail"),
    path(f"{SESSION}messages/", sessions.SessionMessagesApi.as_view(), name="session-messages"),
    path(f"{MESSAGE}sources/", sessions.MessageSourcesApi.as_view(), name="message-sources"),
    path(f"{MESSAGE}feedback/", feedback.FeedbackApi.as_view(), name="message-feedback"),
]
