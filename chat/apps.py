from __future__ import annotations

from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Chat"

    def ready(self) -> None:
        from chat.backends import generation_readiness
        from chat.mcp_server.errors import MCP_PATH, mcp_error_body
        from chat.openai_api.errors import OPENAI_PATH, openai_error_body
        from daneshyar.exceptions import register_error_shape
        from daneshyar.health import register_check

        register_check("generation_backend", generation_readiness)
        # Under its base URL, errors take OpenAI's shape, also before a view runs.
        register_error_shape(OPENAI_PATH, openai_error_body)
        # The MCP route's errors are JSON-RPC errors, also before its view runs.
        register_error_shape(MCP_PATH, mcp_error_body)
