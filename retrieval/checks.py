"""System checks of retrieval, run by manage.py (check, migrate, runserver) and at start."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error

from retrieval.models import EMBEDDING_DIMENSIONS


def embedding_dimensions_match_schema(app_configs: Any, **kwargs: Any) -> list[Error]:
    if settings.EMBEDDING_DIMENSIONS != EMBEDDING_DIMENSIONS:
        return [
            Error(
                f"EMBEDDING_DIMENSIONS={settings.EMBEDDING_DIMENSIONS} but the passage table stores "
                f"{EMBEDDING_DIMENSIONS}-dimensional vectors.",
                hint="Change the column with a migration and re-embed (docs/configuration.md).",
                id="retrieval.E001",
            )
        ]
    return []
