from __future__ import annotations

from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Evaluations"
