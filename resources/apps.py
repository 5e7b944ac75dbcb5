from __future__ import annotations

from django.apps import AppConfig


class ResourcesConfig(AppConfig):
    name = "resources"
    verbose_name = "Documents"

    def ready(self) -> None:
        from django.conf import settings

        from daneshyar.middleware import register_body_limit
        from resources.metadata_keys import metadata_keys_problems
        from workspaces.metadata_keys import metadata_keys_check_register

        # The bulk upload (resources/urls.py) takes a body of any type up to
        # its own limit; its view checks the exact one.
        register_body_limit("/resources/batch/", lambda: settings.BATCH_UPLOAD_MAX_BYTES)
        # What a workspace may declare of its resources' metadata is this
        # app's (resources/metadata_keys.py); workspaces asks it.
        metadata_keys_check_register(metadata_keys_problems)
        # The web sources' tasks (Celery discovers resources/tasks.py only).
        from resources.sources import tasks  # noqa: F401
