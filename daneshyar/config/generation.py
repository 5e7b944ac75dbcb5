"""``GENERATION_MODELS``: the generation models served, as listed by
GET /api/v1/models/."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured

BACKENDS = ("extractive", "local", "openai")


def _model(
    model_id: str, backend: str, *, default: bool = False, context_length: int | None = None
) -> dict[str, object]:
    return {"id": model_id, "backend": backend, "default": default, "context_length": context_length}


def model_registry(
    configured: Any,
    *,
    backend: str,
    openai_model: str,
    openai_extra_models: list[str],
    openai_context_length: int,
    local_model_id: str,
    extractive_model_id: str,
) -> list[dict[str, object]]:
    """GENERATION_MODELS as given (``configured``: the parsed JSON, or
    ``None``), else the models of GENERATION_BACKEND.

    The extractive engine is always served: it is what a turn falls back to
    when generation is unavailable (Workspace.on_generation_unavailable).
    """
    if configured is not None:
        models = _configured_models(configured)
    else:
        openai_length = openai_context_length or None
        if backend == "openai":
            models = [_model(openai_model, "openai", default=True, context_length=openai_length)]
            models += [_model(m, "openai", context_length=openai_length) for m in openai_extra_models]
        elif backend == "local":
            models = [_model(local_model_id, "local", default=True)]
        else:
            models = [
                _model(extractive_model_id, "extractive", default=True),
                _model(local_model_id, "local"),
            ]
    if not any(m["backend"] == "extractive" for m in models):
        models.append(_model(extractive_model_id, "extractive"))
    defaults = [m for m in models if m["default"]]
    if len(defaults) > 1:
        raise ImproperlyConfigured("GENERATION_MODELS needs at least one model and at most one default")
    if not defaults:
        models[0]["default"] = True
    ids = [m["id"] for m in models]
    if len(set(ids)) != len(ids):
        raise ImproperlyConfigured("GENERATION_MODELS has duplicate ids")
    return models


def _configured_models(configured: Any) -> list[dict[str, object]]:
    if not isinstance(configured, list) or not all(
        isinstance(m, dict)
        and isinstance(m.get("id"), str)
        and m.get("backend") in BACKENDS
        and isinstance(m.get("context_length", 0), int)
        for m in configured
    ):
        raise ImproperlyConfigured(
            'GENERATION_MODELS must be a JSON list of {"id": str, "backend": "extractive"|"local"|'
            '"openai", "default"?: bool, "context_length"?: int}'
        )
    return [
        {
            "id": m["id"],
            "backend": m["backend"],
            "default": bool(m.get("default")),
            "context_length": m.get("context_length") or None,
        }
        for m in configured
    ]
