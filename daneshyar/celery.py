from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")

app = Celery("daneshyar")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _refuse_an_image_build(**kwargs: Any) -> None:
    """An image build runs without the secrets (daneshyar/config/keys.py); a worker never does."""
    from django.conf import settings

    if settings.BUILD_ONLY:
        # SystemExit: Celery logs and ignores an exception raised in a signal handler.
        raise SystemExit("DANESHYAR_BUILD is for building the image only; unset it to run a worker")
