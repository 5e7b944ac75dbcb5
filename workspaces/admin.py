from __future__ import annotations

from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from workspaces import services
from workspaces.models import (
    ApiKey,
    ApiKeyScope,
    Organization,
    RateLimitOverrides,
    StaffMembership,
    Workspace,
)
from workspaces.staff import StaffScope, staff_scope


def limit_choices(field: forms.Field, scope: StaffScope) -> None:
    """Narrow a form field choosing organizations or workspaces to ``scope``."""
    if scope.everything or not isinstance(field, forms.ModelChoiceField):
        return
    queryset = field.queryset
    if queryset is None:
        return
    if queryset.model is Organization:
        field.queryset = queryset.filter(scope.q("pk"))
    elif queryset.model is Workspace:
        field.queryset = queryset.filter(scope.q("organization"))


class ScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A filter on an organization or a workspace whose choices are those in
    the staff account's scope, read from their own (small) table.
    (``RelatedOnlyFieldListFilter`` would scan the whole listed table, every
    passage or message, for the choices.)"""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> Any:
        ordering = self.field_admin_ordering(field, request, model_admin)
        scope = staff_scope(request.user)
        model = field.related_model
        limit = Q()
        if model is Organization:
            limit = scope.q("pk")
        elif model is Workspace:
            limit = scope.q("organization")
        return field.get_choices(include_blank=False, ordering=ordering, limit_choices_to=limit)


class OrganizationScopedAdmin(admin.ModelAdmin[Any]):
    """The admin of tenant data, seen through the staff account's scope
    (``workspaces.staff``): a staff account limited to one organization sees
    only its rows in lists, filters, forms and pages, and another
    organization's object is a 404, exactly like a missing one.

    ``organization_path`` leads from the model to its organization. Filters
    on organizations and workspaces use :class:`ScopedRelatedFilter`, so
    that their choices never name another organization's.
    """

    organization_path: ClassVar[str] = "organization"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).filter(staff_scope(request.user).q(self.organization_path))

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        scope = staff_scope(request.user)
        if scope.everything:
            return form

        class ScopedForm(form):  # type: ignore[misc,valid-type]
            def __init__(self, *args: Any, **kw: Any) -> None:
                super().__init__(*args, **kw)
                for field in self.fields.values():
                    limit_choices(field, scope)

        return ScopedForm

    def _get_obj_does_not_exist_redirect(self, request: HttpRequest, opts: Any, object_id: str) -> Any:
        # Django redirects to the admin index with "doesn't exist"; outside
        # the scope it is a 404 like every other tenant boundary.
        raise Http404


# The per-minute limits an operator sets on an organization or a workspace.
RATE_LIMIT_FIELDS = tuple(field.name for field in RateLimitOverrides._meta.local_fields)


def operator_fields(model: Any, *, editable_by_tenant: tuple[str, ...] | None = None) -> list[str]:
    """The fields of ``model`` only an account that sees every organization
    may change: the limits the deployment sets on a tenant (rate limits,
    quotas), so that an account limited to its own organization cannot
    raise them. With ``editable_by_tenant``, every field but those (what a
    new limit is called does not matter then: it is the operator's)."""
    names = [field.name for field in model._meta.concrete_fields if field.editable]
    if editable_by_tenant is not None:
        return [name for name in names if name not in editable_by_tenant]
    return [name for name in names if name in RATE_LIMIT_FIELDS or "quota" in name]


@admin.register(Organization)
class OrganizationAdmin(OrganizationScopedAdmin):
    organization_path = "pk"
    list_display = ["name", "id", "quota_documents", "quota_bytes", "created_at"]
    search_fields = ["name", "id"]
    readonly_fields = ["id", "created_at", "updated_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # An account limited to one organization cannot make another.
        return staff_scope(request.user).everything and super().has_add_permission(request)

    def get_readonly_fields(self, request: HttpRequest, obj: Organization | None = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if staff_scope(request.user).limited:
            # Its own organization's name, nothing the operator decides
            # (rate limits, quotas: what it may take of the deployment).
            operator = operator_fields(Organization, editable_by_tenant=("name",))
            fields += [f for f in operator if f not in fields]
        return fields


@admin.register(Workspace)
class WorkspaceAdmin(OrganizationScopedAdmin):
    list_display = [
        "name",
        "organization",
        "top_k",
        "widened_top_k",
        "per_resource_k",
        "history_turns",
        "embedding_model",
        "created_at",
    ]
    list_filter = [("organization", ScopedRelatedFilter)]
    search_fields = ["name", "id", "organization__name"]
    # The model its searches use; a change of the model is carried out by the
    # worker (the re-embedding's progress: the console's ingestion page).
    readonly_fields = ["id", "embedding_model", "created_at", "updated_at"]
    list_select_related = ["organization"]

    def get_readonly_fields(self, request: HttpRequest, obj: Workspace | None = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if staff_scope(request.user).limited:
            fields += [f for f in operator_fields(Workspace) if f not in fields]
        return fields


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


class ApiKeyChangeForm(forms.ModelForm[ApiKey]):
    class Meta:
        model = ApiKey
        fields = ["name", "revoked_at"]

    def clean_revoked_at(self) -> Any:
        revoked_at = self.cleaned_data.get("revoked_at")
        if self.instance.revoked_at is not None and revoked_at != self.instance.revoked_at:
            # Whoever held the key may still have it: issue a new key instead.
            raise forms.ValidationError("A revoked key stays revoked; issue a new key instead.")
        return revoked_at


@admin.register(ApiKey)
class ApiKeyAdmin(OrganizationScopedAdmin):
    list_display = ["name", "prefix", "organization", "scope", "is_active", "last_used_at", "created_at"]
    list_filter = [
        "scope",
        ("organization", ScopedRelatedFilter),
        ("revoked_at", admin.EmptyFieldListFilter),
    ]
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
        else:
            kwargs["form"] = ApiKeyChangeForm
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

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).", messages.SUCCESS)


class StaffMembershipForm(forms.ModelForm[StaffMembership]):
    class Meta:
        model = StaffMembership
        fields = ["user", "organization"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Superusers are never limited: only plain staff accounts are offered.
        self.fields["user"].queryset = get_user_model().objects.filter(  # type: ignore[attr-defined]
            is_staff=True, is_superuser=False
        )
        self.fields["organization"].required = True


@admin.register(StaffMembership)
class StaffMembershipAdmin(admin.ModelAdmin[StaffMembership]):
    """Who is limited to which organization: superusers only, so that a
    limited account can never widen its own scope."""

    form = StaffMembershipForm
    list_display = ["user", "organization", "updated_at"]
    list_select_related = ["user", "organization"]
    search_fields = ["user__username", "organization__name"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(getattr(request.user, "is_superuser", False))
