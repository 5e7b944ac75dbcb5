"""Documents named by the integrator's own id (``external_id``): an upload
that names one the workspace holds replaces that document's content in
place — same resource id, new bytes, re-ingested through the atomic reingest
(the old passages answer until the new ones replace them) — instead of
adding a second document. The same bytes again are left as they are: nothing
is embedded again.

The manifest that tells an integrator's sync job what to upload is
:mod:`resources.manifest`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from rest_framework import serializers
from rest_framework.utils import html

from daneshyar.exceptions import ApplicationError, NotFound, ValidationFailed
from resources.attributes import Metadata
from resources.models import Resource, ResourceFile, ResourceStatus
from resources.quotas import quota_reserve
from resources.tasks import ingest_wake_on_commit
from workspaces.models import Workspace

MAX_EXTERNAL_ID_CHARS = 255

# "Not sent": ``None`` is a value of ``access``. A replacement keeps the
# stored value of a field that was not sent.
UNCHANGED: Any = object()


class DuplicateContent(ApplicationError):
    status_code = 409
    code = "duplicate_content"
    default_message = "The workspace already holds these bytes as another document."


@dataclass(frozen=True)
class External:
    """The integrator's id of a document and, optionally, its version
    (``None``: not sent; a replacement keeps the stored one)."""

    id: str
    version: str | None = None


@dataclass(frozen=True)
class Content:
    """The checked bytes of an upload and the fields it sends. ``metadata``
    ``None`` and ``access`` :data:`UNCHANGED` were not sent."""

    data: bytes
    sha256: str
    content_type: str
    title: str
    filename: str
    title_sent: bool
    metadata: Metadata | None
    access: Any


def external_id_problem(value: Any) -> str | None:
    """Why ``value`` is not an external id (or a version); None when it is."""
    if not isinstance(value, str) or not value.strip():
        return "Expected a non-empty string."
    if len(value) > MAX_EXTERNAL_ID_CHARS:
        return f"At most {MAX_EXTERNAL_ID_CHARS} characters."
    if "\x00" in value:
        return "Must not contain NUL characters."
    return None


def resource_by_external_id(*, workspace: Workspace, external_id: str) -> Resource | None:
    if not external_id:
        return None
    return Resource.objects.filter(workspace=workspace, external_id=external_id).first()


def resource_replace(*, resource: Resource, content: Content, external: External) -> tuple[Resource, bool]:
    """Put ``content`` in place of the resource's, keeping its id; returns
    the resource and whether its bytes changed (then it is queued for a
    fresh ingestion: a ready resource stays ready, and searchable with its
    old passages, until the new ones replace them in one transaction).

    The same bytes again change the title (when one was sent), metadata,
    access and version (when sent) and embed nothing. Bytes another document
    of the workspace holds are a 409 ``duplicate_content`` (one document per
    content in a workspace); a larger document is held to the bytes quota.
    """
    with transaction.atomic():
        locked = Resource.objects.select_for_update().filter(pk=resource.pk).first()
        if locked is None:  # deleted since it was read
            raise NotFound()
        changed = locked.sha256 != content.sha256
        if changed:
            _check_unheld(locked, content.sha256)
            quota_reserve(
                workspace=locked.workspace,
                documents=0,
                size_bytes=max(0, len(content.data) - locked.size_bytes),
            )
            _take_bytes(locked, content)
        elif content.title_sent:
            locked.title = content.title
        _take_fields(locked, content, external)
        locked.save()
        if changed:
            ResourceFile.objects.update_or_create(resource=locked, defaults={"data": content.data})
            ingest_wake_on_commit()
    return locked, changed


def _check_unheld(resource: Resource, sha256: str) -> None:
    holder = (
        Resource.objects.filter(workspace_id=resource.workspace_id, sha256=sha256)
        .exclude(pk=resource.pk)
        .first()
    )
    if holder is not None:
        raise DuplicateContent(
            f"These bytes are already the workspace's document {holder.id}"
            + (f" (external_id {holder.external_id!r})." if holder.external_id else ".")
            + " Delete one of the two, or send different content.",
            details={"resource_id": str(holder.id)},
        )


def _take_bytes(resource: Resource, content: Content) -> None:
    """New bytes, as a reingest queues them (resources.services.resource_reingest)."""
    now = timezone.now()
    resource.sha256 = content.sha256
    resource.size_bytes = len(content.data)
    resource.content_type = content.content_type
    resource.filename = content.filename[:500]
    resource.title = content.title
    # An attempt running on the old bytes (processing) finds them replaced
    # when it stores (resources/ingestion/write.py) and writes nothing; the
    # attempt queued here claims the row as pending meanwhile.
    if resource.status in (ResourceStatus.FAILED, ResourceStatus.PROCESSING):
        resource.status = ResourceStatus.PENDING
        resource.status_changed_at = now
        resource.error_code = ""
        resource.error_message = ""
    resource.attempts = 0
    resource.ingest_heartbeat_at = now
    resource.ingest_retry_at = None


def _take_fields(resource: Resource, content: Content, external: External) -> None:
    if content.metadata is not None:
        resource.metadata = dict(content.metadata)
    if content.access is not UNCHANGED:
        resource.access = content.access
    if external.version is not None:
        resource.external_version = external.version


def resource_adopt(*, resource: Resource, external: External) -> Resource:
    """An upload naming a new external id with bytes the workspace already
    holds in a document without one: that document takes the id (and the
    version), nothing else — as for any upload of the same bytes, the title,
    metadata and access sent are not applied to a document the upload did
    not create. A document already holding another external id is a 409."""
    with transaction.atomic():
        locked = Resource.objects.select_for_update().filter(pk=resource.pk).first()
        if locked is None:
            raise NotFound()
        if locked.external_id and locked.external_id != external.id:
            raise DuplicateContent(
                f"These bytes are already the workspace's document {locked.id} "
                f"(external_id {locked.external_id!r}).",
                details={"resource_id": str(locked.id)},
            )
        locked.external_id = external.id
        if external.version is not None:
            locked.external_version = external.version
        locked.save(update_fields=["external_id", "external_version", "updated_at"])
    return locked


class ExternalIdField(serializers.CharField):
    """An ``external_id`` (or a ``version``) in an upload: a non-empty
    string of at most 255 characters, taken as sent (not trimmed)."""

    def __init__(self, **kwargs: Any):
        super().__init__(trim_whitespace=False, max_length=MAX_EXTERNAL_ID_CHARS, **kwargs)

    def get_value(self, dictionary: Any) -> Any:
        # A form (multipart upload) that sends the field empty: refused as
        # JSON's "" is, not read as leaving it out (DRF's default for forms).
        if html.is_html_input(dictionary) and dictionary.get(self.field_name) == "":
            return ""
        return super().get_value(dictionary)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        value = super().to_internal_value(data)
        problem = external_id_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


def external_from(data: dict[str, Any]) -> External | None:
    """The :class:`External` of an upload's validated fields, if it names one."""
    if "external_id" not in data:
        if "version" in data:
            raise ValidationFailed(
                "The request has invalid fields.", fields={"version": ["Send it with an external_id."]}
            )
        return None
    return External(data["external_id"], data.get("version"))
