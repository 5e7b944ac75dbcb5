from __future__ import annotations

import hashlib
import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from daneshyar.exceptions import ApplicationError
from resources import services
from resources.attributes import access_problems, declared_problems, json_field, metadata_problems
from resources.models import Resource
from resources.parsing import detect_content_type
from resources.quotas import quota_reserve
from workspaces.admin import OrganizationScopedAdmin, ScopedRelatedFilter
from workspaces.models import Workspace


class ResourceUploadForm(forms.ModelForm[Resource]):
    """The admin's upload: the same checks and service as the API."""

    workspace = forms.ModelChoiceField(queryset=Workspace.objects.select_related("organization"))
    title = forms.CharField(max_length=500, required=False, help_text="Defaults to the file name.")
    file = forms.FileField(allow_empty_file=True, help_text="Plain text, Markdown, HTML, PDF or DOCX.")

    class Meta:
        model = Resource
        fields = ["workspace", "title"]

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > settings.MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
            )
        data = upload.read()
        try:
            detect_content_type(data, filename=upload.name or "", claimed_type=upload.content_type or "")
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc
        self.cleaned_data["data"] = data
        return upload

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        workspace, data = cleaned.get("workspace"), cleaned.get("data")
        if workspace is None or data is None:
            return cleaned
        sha256 = hashlib.sha256(data).hexdigest()
        if Resource.objects.filter(workspace=workspace, sha256=sha256).exists():
            return cleaned  # the existing resource: no quota needed
        try:
            # The upload checks again when it writes; this one makes a form error.
            with transaction.atomic():
                quota_reserve(workspace=workspace, documents=1, size_bytes=len(data))
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc
        return cleaned


def _parsed(raw: str) -> Any:
    try:
        return json_field(raw)
    except ValueError as exc:
        raise forms.ValidationError(f"Not valid JSON: {exc}") from None


def _refuse(problems: dict[str, list[str]]) -> None:
    if problems:
        raise forms.ValidationError(
            [
                f"{path}: {' '.join(messages)}" if path else " ".join(messages)
                for path, messages in problems.items()
            ]
        )


class ResourceAttributesForm(forms.ModelForm[Resource]):
    """The change page: a resource's ``metadata`` and ``access`` as JSON,
    checked by ``resources.attributes`` as on the API (a form error, never a
    500) and written by ``services.resource_update`` (no re-embedding)."""

    metadata = forms.CharField(
        required=False,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 80, "class": "vLargeTextField"}),
        help_text='A JSON object, e.g. {"customer": "4821", "year": 2024, "tags": ["claims"]}: at most 32 '
        "keys of letters, digits, _ . -; each value a string, a number, a boolean or a list of strings. "
        "Empty: {}.",
    )
    access = forms.CharField(
        required=False,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80, "class": "vLargeTextField"}),
        help_text='null (or empty): every end user of the workspace; {"groups": ["staff"]}: only end '
        "users holding one of these groups; [] in groups: no end user.",
    )

    class Meta:
        model = Resource
        fields = ["metadata", "access"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial["metadata"] = json.dumps(self.instance.metadata, ensure_ascii=False, indent=2)
            self.initial["access"] = json.dumps(self.instance.access, ensure_ascii=False)

    def clean_metadata(self) -> Any:
        raw = self.cleaned_data.get("metadata") or ""
        value = _parsed(raw) if raw else {}
        _refuse(metadata_problems(value))
        _refuse(declared_problems(value, self.instance.workspace.metadata_keys))
        return value

    def clean_access(self) -> Any:
        raw = self.cleaned_data.get("access") or ""
        value = _parsed(raw) if raw else None
        _refuse(access_problems(value))
        return value


@admin.register(Resource)
class ResourceAdmin(OrganizationScopedAdmin):
    organization_path = "workspace__organization"
    list_display = [
        "title",
        "workspace",
        "status",
        "error_code",
        "passage_count",
        "content_type",
        "size_bytes",
        "attempts",
        "created_at",
    ]
    list_filter = [
        "status",
        "error_code",
        "content_type",
        ("workspace__organization", ScopedRelatedFilter),
    ]
    search_fields = ["title", "filename", "sha256", "id", "workspace__name"]
    list_select_related = ["workspace"]
    readonly_fields = [
        "id",
        "workspace",
        "title",
        "filename",
        "content_type",
        "size_bytes",
        "sha256",
        "status",
        "error_code",
        "error_message",
        "passages",
        "attempts",
        "status_changed_at",
        "ingest_heartbeat_at",
        "created_at",
        "updated_at",
    ]
    actions = ["reingest_resources"]

    # Editable on the change page (ResourceAttributesForm); the rest is read-only.
    attribute_fields = ["metadata", "access"]

    def get_form(
        self, request: HttpRequest, obj: Resource | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        kwargs["form"] = ResourceUploadForm if obj is None else ResourceAttributesForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Resource | None = None) -> Any:
        if obj is None:
            return ["workspace", "title", "file"]
        return [*self.readonly_fields, *self.attribute_fields]

    def get_readonly_fields(self, request: HttpRequest, obj: Resource | None = None) -> Any:
        return [] if obj is None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: Resource, form: Any, change: bool) -> None:
        if change:
            # Only metadata and access are editable; the service writes just those.
            services.resource_update(
                resource=obj, metadata=form.cleaned_data["metadata"], access=form.cleaned_data["access"]
            )
            return
        upload = form.cleaned_data["file"]
        outcome = services.resource_create(
            workspace=form.cleaned_data["workspace"],
            upload=services.Upload(
                data=form.cleaned_data["data"],
                title=form.cleaned_data.get("title") or "",
                filename=(upload.name or "").rsplit("/", 1)[-1],
                claimed_type=upload.content_type or "",
            ),
        )
        if not outcome.created:
            self.message_user(request, "The same file is already in this workspace.", messages.WARNING)
        # The admin continues with this instance (log entry, redirect).
        obj.pk = outcome.resource.pk
        obj._state.adding = False
        obj.refresh_from_db()

    def delete_model(self, request: HttpRequest, obj: Resource) -> None:
        services.resource_delete(resource=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Resource]) -> None:
        for resource in queryset:
            services.resource_delete(resource=resource)

    @admin.action(description="Reingest selected resources", permissions=["change"])
    def reingest_resources(self, request: HttpRequest, queryset: QuerySet[Resource]) -> None:
        count = 0
        for resource in queryset:
            services.resource_reingest(resource=resource)
            count += 1
        self.message_user(request, f"Queued {count} resource(s) for ingestion.", messages.SUCCESS)

    @admin.display(description="passages")
    def passages(self, obj: Resource) -> str:
        """The passage count, linking to retrieval's read-only passage list."""
        if not obj.passage_count:
            return "No passages."
        url = reverse("admin:retrieval_passage_changelist") + f"?resource={obj.pk}"
        return format_html('<a href="{}">{} passage(s) →</a>', url, obj.passage_count)
