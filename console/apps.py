from __future__ import annotations

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The curation console: pages inside the Django admin (same login) that
    bring chat, retrieval and resources together per workspace."""

    name = "console"
    verbose_name = "Curation console"

    def ready(self) -> None:
        from django.contrib import admin

        # The admin's index links to the console (the template adds one block).
        admin.site.index_template = "console/admin_index.html"
