from __future__ import annotations

from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "workspaces"
    verbose_name = "Tenancy"

    def ready(self) -> None:
        from corsheaders.signals import check_request_enabled

        from workspaces.cors import cors_allowed

        check_request_enabled.connect(cors_allowed, dispatch_uid="workspaces.cors")
