"""Admin console: a resource's passages as retrieval holds them (read-only).

The resource page in the console links here (``?resource=<id>``):
passages are retrieval's data, so retrieval shows them, paged and searchable.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from retrieval.models import Passage
from workspaces.admin import OrganizationScopedAdmin, ScopedRelatedFilter


@admin.register(Passage)
class PassageAdmin(OrganizationScopedAdmin):
    organization_path = "workspace__organization"
    list_display = ["ordinal", "resource", "page", "token_count", "text"]
    list_display_links = None
    list_filter = [("workspace__organization", ScopedRelatedFilter)]
    search_fields = ["=resource__id", "text"]
    search_help_text = "A resource id, or words of the passage text."
    list_select_related = ["resource"]
    list_per_page = 50
    show_full_result_count = False
    ordering = ["resource", "ordinal"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Passage]:
        # Vectors are 384 floats a row: never load them for a listing.
        return super().get_queryset(request).defer("embedding", "search_vector")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
