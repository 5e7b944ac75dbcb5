from __future__ import annotations

from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Chat"

    def ready(self) -> None:
        from chat.backends import generation_readiness
        from daneshyar.health import register_check

        register_check("generation_backend", generation_readiness)
