from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")

app = Celery("daneshyar")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
