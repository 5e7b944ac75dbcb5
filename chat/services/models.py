"""The generation models this deployment serves, with what each can do."""

from __future__ import annotations

import logging
from typing import TypedDict

from django.conf import settings

from chat.backends import get_backend
from daneshyar.exceptions import ApplicationError

logger = logging.getLogger(__name__)


class Capabilities(TypedDict):
    generative: bool
    forms: bool
    streaming: bool
    context_length: int | None


class ModelData(TypedDict):
    id: str
    backend: str
    default: bool
    capabilities: Capabilities


def model_list() -> list[ModelData]:
    """``GET /api/v1/models/``: the registry (settings.GENERATION_MODELS)."""
    items: list[ModelData] = []
    for entry in settings.GENERATION_MODELS:
        backend = get_backend(str(entry["id"]))
        try:
            context_length = backend.context_length()
        except ApplicationError as exc:
            # A server that is down reports nothing now; the listing still answers.
            logger.info("context length of %s unknown: %s", entry["id"], exc.message)
            context_length = None
        items.append(
            {
                "id": str(entry["id"]),
                "backend": str(entry["backend"]),
                "default": bool(entry["default"]),
                "capabilities": {
                    "generative": backend.generative,
                    "forms": backend.supports_forms,
                    "streaming": backend.supports_streaming,
                    "context_length": context_length,
                },
            }
        )
    return items
