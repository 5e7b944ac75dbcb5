"""Writes for organizations, workspaces and API keys."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from daneshyar.exceptions import ValidationFailed
from daneshyar.transactions import atomic_retried
from workspaces.keys import display_prefix, generate_key, hash_key
from workspaces.models import ApiKey, ApiKeyScope, Organization, Workspace

WORKSPACE_SETTINGS = (
    "history_turns",
    "top_k",
    "widened_top_k",
    "per_resource_k",
    "retention_days",
    "on_generation_unavailable",
    "no_answer_text",
    "small_talk_text",
    "texts",
    "answerability_threshold",
    "allowed_origins",
    "metadata_keys",
)
WORKSPACE_FIELDS = ("name", "system_prompt", *WORKSPACE_SETTINGS)


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str


def organization_create(*, name: str) -> Organization:
    return Organization.objects.create(name=name)


def workspace_create(*, organization: Organization, name: str, **fields: Any) -> Workspace:
    workspace = Workspace(organization=organization, name=name)
    for field, value in fields.items():
        if field not in WORKSPACE_FIELDS:
            raise ValueError(f"unknown workspace field {field!r}")
        setattr(workspace, field, value)
    workspace.full_clean()
    workspace.save()
    return workspace


def workspace_update(*, workspace: Workspace, **fields: Any) -> Workspace:
    for field, value in fields.items():
        if field not in WORKSPACE_FIELDS:
            raise ValueError(f"unknown workspace field {field!r}")
        setattr(workspace, field, value)
    workspace.full_clean()
    workspace.save(update_fields=[*fields, "updated_at"])
    return workspace


def workspace_delete(*, workspace: Workspace) -> None:
    """Delete the workspace with its resources, passages, sessions and
    messages. Its row is locked first: an ingestion's new passages check
    their workspace at commit (deferred constraints), so none can commit
    between the DELETE of passages and this commit (resources/manifest.py,
    ``external_ids_delete``, says why that matters); run again when it
    crossed an ingestion's writes (daneshyar/transactions.py)."""

    def delete() -> None:
        if list(Workspace.objects.select_for_update().filter(pk=workspace.pk).values_list("pk")):
            workspace.delete()

    atomic_retried(delete)


def api_key_create(
    *,
    organization: Organization,
    name: str,
    scope: str = ApiKeyScope.CHAT,
    workspace_ids: Iterable[uuid.UUID] = (),
) -> IssuedKey:
    """Issue a key. The plaintext exists only in the returned value."""
    if scope not in ApiKeyScope.values:
        raise ValidationFailed(f"Unknown scope {scope!r}.", fields={"scope": ["Must be chat or admin."]})
    allowed = list(dict.fromkeys(workspace_ids))
    if allowed:
        found = set(
            Workspace.objects.filter(organization=organization, id__in=allowed).values_list("id", flat=True)
        )
        missing = [str(w) for w in allowed if w not in found]
        if missing:
            raise ValidationFailed(
                "Some workspaces do not belong to this organization.",
                fields={"workspace_ids": [f"Unknown workspace {w}." for w in missing]},
            )
    plaintext = generate_key()
    api_key = ApiKey.objects.create(
        organization=organization,
        name=name,
        scope=scope,
        key_hash=hash_key(plaintext),
        prefix=display_prefix(plaintext),
        allowed_workspace_ids=allowed,
    )
    return IssuedKey(api_key=api_key, plaintext=plaintext)


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    with transaction.atomic():
        # Revoking twice keeps the first timestamp.
        ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    api_key.refresh_from_db(fields=["revoked_at"])
    return api_key


def workspace_embedding_model_lock(*, workspace_id: uuid.UUID) -> str | None:
    """Lock the workspace's row for a change of its embedding model, in the
    caller's transaction (``FOR NO KEY UPDATE``: ingestion's ``FOR SHARE``
    waits, a chat turn's foreign-key checks do not); the model it is
    searched with now, or None when it is gone."""
    locked = Workspace.objects.select_for_update(no_key=True).filter(pk=workspace_id)
    model: str | None = locked.values_list("embedding_model", flat=True).first()
    return model


def workspace_embedding_model_set(*, workspace_id: uuid.UUID, model: str) -> None:
    """The workspace is searched with ``model`` from the caller's commit on
    (retrieval/reembedding.py switches it once every passage has its vector)."""
    Workspace.objects.filter(pk=workspace_id).update(embedding_model=model)
