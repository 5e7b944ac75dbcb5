from __future__ import annotations

from django.urls import URLPattern, path

from chat import apis

urlpatterns: list[URLPattern] = [
    path("chat/", apis.ChatApi.as_view(), name="chat"),
    path("chat/stream/", apis.ChatStreamApi.as_view(), name="chat-stream"),
    path("sessions/", apis.SessionListApi.as_view(), name="session-list"),
    path("sessions/<uuid:session_id>/", apis.SessionDetailApi.as_view(), name="session-detail"),
    path("sessions/<uuid:session_id>/messages/", apis.SessionMessagesApi.as_view(), name="session-messages"),
]
