from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from workspaces import services
from workspaces.models import ApiKey, ApiKeyScope, Organization, Workspace


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin[Organization]):
    list_display = ["name", "id", "created_at"]
    search_fields = ["name", "id"]
    readonly_fields = ["id", "created_at", "updated_at"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin[Workspace]):
    list_display = [
        "name",
        "organization",
        "top_k",
        "widened_top_k",
        "per_resource_k",
        "history_turns",
        "created_at",
    ]
    list_filter = ["organization"]
    search_fields = ["name", "id", "organization__name"]
    readonly_fields = ["id", "created_at", "updated_at"]
    list_select_related = ["organization"]


class ApiKeyCreateForm(forms.ModelForm[ApiKey]):
    workspaces = forms.ModelMultipleChoiceField(
        queryset=Workspace.objects.select_related("organization"),
        required=False,
        help_text="Leave empty to allow every workspace of the organization.",
    )

    class Meta:
        model = ApiKey
        fields = ["organization", "name", "scope"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        organization = cleaned.get("organization")
        chosen = cleaned.get("workspaces") or []
        if organization is not None:
            foreign = [w.name for w in chosen if w.organization_id != organization.pk]
            if foreign:
                raise forms.ValidationError(f"Workspaces of another organization: {', '.join(foreign)}")
        return cleaned


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin[ApiKey]):
    list_display = ["name", "prefix", "organization", "scope", "is_active", "last_used_at", "created_at"]
    list_filter = ["scope", "organization", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix", "organization__name"]
    list_select_related = ["organization"]
    readonly_fields = [
        "id",
        "prefix",
        "organization",
        "scope",
        "allowed_workspace_ids",
        "last_used_at",
        "created_at",
    ]
    fields = [
        "id",
        "name",
        "prefix",
        "organization",
        "scope",
        "allowed_workspace_ids",
        "revoked_at",
        "last_used_at",
        "created_at",
    ]
    actions = ["revoke_keys"]

    @admin.display(boolean=True, description="active")
    def is_active(self, obj: ApiKey) -> bool:
        return obj.is_active

    def get_form(
        self, request: HttpRequest, obj: ApiKey | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            kwargs["form"] = ApiKeyCreateForm
            kwargs["fields"] = ["organization", "name", "scope", "workspaces"]
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> Any:
        if obj is None:
            return ["organization", "name", "scope", "workspaces"]
        return self.fields

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> Any:
        return [] if obj is None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = services.api_key_create(
            organization=form.cleaned_data["organization"],
            name=form.cleaned_data["name"],
            scope=form.cleaned_data["scope"] or ApiKeyScope.CHAT,
            workspace_ids=[w.pk for w in form.cleaned_data.get("workspaces") or []],
        )
        # The admin continues with this instance (log entry, redirect).
        obj.pk = issued.api_key.pk
        obj._state.adding = False
        obj.refresh_from_db()
        request._issued_api_key = issued.plaintext  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        plaintext = getattr(request, "_issued_api_key", None)
        if plaintext is None:
            return super().response_add(request, obj, post_url_continue)
        # Shown in this response only: never stored, never put in a cookie.
        context = {
            **self.admin_site.each_context(request),
            "title": "API key created",
            "api_key": obj,
            "plaintext": plaintext,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/workspaces/apikey/created.html", context)

    @admin.action(description="Revoke selected keys")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).", messages.SUCCESS)
