from __future__ import annotations

from django.apps import AppConfig


class DaneshyarConfig(AppConfig):
    name = "daneshyar"
    verbose_name = "Daneshyar"
