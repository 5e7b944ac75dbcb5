from __future__ import annotations

from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        from django.conf import settings

        from daneshyar.middleware import register_body_limit
        from evaluations.item_lines import MAX_IMPORT_BYTES

        # An import of test items (…/test-sets/{id}/import/) is a JSONL or
        # CSV body over MAX_JSON_BODY_BYTES, up to its own bound, which its
        # view checks: the API's parser answers 413 past it, the console's
        # page (a file upload, under the uploads' limit as before) a 400.
        register_body_limit("/import/", lambda: max(MAX_IMPORT_BYTES, settings.MAX_UPLOAD_BYTES))
