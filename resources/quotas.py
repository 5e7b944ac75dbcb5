"""Quotas of an organization: documents and stored bytes over all its
workspaces (docs/ingestion.md, "Quotas").

The organization's own quota (``Organization.quota_documents`` /
``quota_bytes``, set in the console) or else ORG_QUOTA_DOCUMENTS /
ORG_QUOTA_BYTES; 0 in a setting means no quota. Every upload checks them
inside the transaction that writes it, before it writes, with the
organization's row locked: two uploads at once cannot both take the last
room. Usage is counted from the resources themselves, so deleting a
document (or a workspace) frees its share at once.

- 413 ``quota_exceeded``: the upload's bytes do not fit in what is left of
  the bytes quota (a smaller upload may still fit).
- 429 ``quota_exceeded``: the organization holds its quota of documents (or
  the batch would take it past): nothing fits until documents are deleted
  or the quota is raised. ``Retry-After`` (every 429 of the API has one) is
  an hour: when to look again, not a promise.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Sum

from daneshyar.exceptions import ApplicationError
from resources.models import Resource
from workspaces.models import Organization, Workspace

# Waiting frees no documents; every 429 of the API carries Retry-After.
DOCUMENTS_RETRY_AFTER_SECONDS = 3600


class DocumentQuotaExceeded(ApplicationError):
    status_code = 429
    code = "quota_exceeded"
    default_message = "The organization holds its quota of documents."


class BytesQuotaExceeded(ApplicationError):
    status_code = 413
    code = "quota_exceeded"
    default_message = "The upload does not fit in the organization's quota of stored bytes."


@dataclass(frozen=True)
class Quota:
    """An organization's quotas (0: none) and what it uses now."""

    documents: int
    size_bytes: int
    used_documents: int
    used_bytes: int


def organization_quota(organization: Organization) -> Quota:
    """The quotas that apply to ``organization`` and its usage now."""
    usage = Resource.objects.filter(workspace__organization=organization).aggregate(
        documents=Count("pk"), size_bytes=Sum("size_bytes")
    )
    documents = organization.quota_documents
    size_bytes = organization.quota_bytes
    return Quota(
        documents=int(settings.ORG_QUOTA_DOCUMENTS if documents is None else documents),
        size_bytes=int(settings.ORG_QUOTA_BYTES if size_bytes is None else size_bytes),
        used_documents=int(usage["documents"] or 0),
        used_bytes=int(usage["size_bytes"] or 0),
    )


def quota_reserve(*, workspace: Workspace, documents: int, size_bytes: int) -> None:
    """Check that ``documents`` new documents of ``size_bytes`` in all fit
    the organization's quotas; raise 429 or 413 ``quota_exceeded`` if not.

    Call inside the transaction that writes them, before writing: the
    organization's row stays locked until it commits, so concurrent uploads
    are counted one after the other.
    """
    if documents <= 0 and size_bytes <= 0:
        return
    organization = Organization.objects.select_for_update().get(pk=workspace.organization_id)
    quota = organization_quota(organization)
    # A replacement (resources/external.py) adds bytes, no document.
    if documents > 0 and quota.documents and quota.used_documents + documents > quota.documents:
        raise DocumentQuotaExceeded(
            f"The organization holds {quota.used_documents:,} of its {quota.documents:,} documents; "
            f"this upload adds {documents:,}. Delete documents or ask for a higher quota.",
            details=_details("documents", quota.documents, quota.used_documents),
            headers={"Retry-After": str(DOCUMENTS_RETRY_AFTER_SECONDS)},
        )
    if quota.size_bytes and quota.used_bytes + size_bytes > quota.size_bytes:
        raise BytesQuotaExceeded(
            f"The organization stores {quota.used_bytes:,} of its {quota.size_bytes:,} bytes; "
            f"this upload adds {size_bytes:,}. Delete documents or ask for a higher quota.",
            details=_details("bytes", quota.size_bytes, quota.used_bytes),
        )


def _details(quota: str, limit: int, used: int) -> dict[str, str]:
    return {"quota": quota, "limit": str(limit), "used": str(used)}
