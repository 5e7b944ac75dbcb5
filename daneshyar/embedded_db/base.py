"""Django database backend: PostgreSQL, started on demand from the wheel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.backends.postgresql import base

from daneshyar.embedded_db.server import ensure_server


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = super().get_connection_params()
        data_dir = Path(self.settings_dict["OPTIONS"].get("embedded_data_dir", ""))
        settings = self.settings_dict["OPTIONS"].get("embedded_server_settings") or {}
        params.pop("embedded_data_dir", None)
        params.pop("embedded_server_settings", None)
        params["host"] = ensure_server(data_dir, settings=settings)
        params["user"] = "postgres"
        params.pop("port", None)
        return params
