"""Database routing: everything on the primary unless a reader asks for the replica.

With ``SEARCH_DATABASE_URL`` set, ``DATABASES["search"]`` is a read-only
streaming replica of ``default``. Nothing is routed to it implicitly: the
search service opts in, per query, with ``using(...)`` and a cursor of that
alias (``retrieval/search/replica.py``), because only it can tolerate reading
a few seconds into the past. Every other read — a chat turn reading the
history it has just appended to, an upload's status, the API key — stays on
the primary, which is what this router returns for reads.

The router also makes sure the replica is never written or migrated: an
object read from the replica and saved goes to the primary (Django would
otherwise write it back where it came from), and ``migrate --database
search`` applies nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import DEFAULT_DB_ALIAS

SEARCH_ALIAS = "search"


class PrimaryRouter:
    def db_for_read(self, model: type[Any], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def db_for_write(self, model: type[Any], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        # The replica holds the same rows as the primary.
        return True

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool:
        return db != SEARCH_ALIAS
