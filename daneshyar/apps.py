from __future__ import annotations

from django.apps import AppConfig


class DaneshyarConfig(AppConfig):
    name = "daneshyar"
    verbose_name = "Daneshyar"

    def ready(self) -> None:
        from daneshyar import checks  # noqa: F401  (registers system checks)
