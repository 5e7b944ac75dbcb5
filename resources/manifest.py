"""The sync manifest: an integrator's job keeps a workspace in step with its
own source (a wiki, a drive, a CMS) by external id (docs/ingestion.md,
"The sync manifest"). Not web sources (resources/sources/), which fetch
pages themselves.

The job posts what its source holds, ``{external_id, sha256 | version}``
per document; :func:`manifest_diff` answers which are new, changed, unchanged
and (for a complete manifest) gone, and writes nothing. The job uploads the
new and changed ones with their ``external_id`` (each replaces its document
in place, :mod:`resources.external`), then confirms the deletions with
:func:`external_ids_delete`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from daneshyar.exceptions import ValidationFailed
from daneshyar.transactions import atomic_retried
from resources.events import resource_deleted_emit
from resources.external import MAX_EXTERNAL_ID_CHARS, external_id_problem
from resources.models import Resource
from workspaces.models import Workspace

# Documents one manifest (or one deletion) may name; a larger source is
# diffed in parts with "complete": false, then deleted by its own list.
MAX_MANIFEST_DOCUMENTS = 10_000
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ENTRY_KEYS = ("external_id", "sha256", "version")


@dataclass(frozen=True)
class ManifestEntry:
    """One document of the source: its id and its hash or its version."""

    external_id: str
    sha256: str = ""
    version: str = ""


@dataclass
class ManifestDiff:
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # (external_id, resource id) of the workspace's documents the manifest omits.
    gone: list[tuple[str, uuid.UUID]] = field(default_factory=list)


def _entry(index: int, item: Any, seen: set[str], problems: dict[str, list[str]]) -> ManifestEntry | None:
    where = f"documents[{index}]"
    if not isinstance(item, dict):
        problems[where] = ['Expected an object {"external_id", "sha256"} or {"external_id", "version"}.']
        return None
    for key in item:
        if key not in _ENTRY_KEYS:
            problems[f"{where}.{key}"] = [f"Unknown key; one of {', '.join(_ENTRY_KEYS)}."]
    external_id: str = item.get("external_id", "")
    sha256, version = item.get("sha256"), item.get("version")
    problem = external_id_problem(external_id)
    if problem:
        problems[f"{where}.external_id"] = [problem]
    elif external_id in seen:
        problems[f"{where}.external_id"] = ["Named twice in this manifest."]
    else:
        seen.add(external_id)
    if (sha256 is None) == (version is None):
        problems[where] = ["Send exactly one of sha256 and version."]
    elif sha256 is not None and not (isinstance(sha256, str) and _SHA256.fullmatch(sha256.lower())):
        problems[f"{where}.sha256"] = ["Expected the 64 hexadecimal digits of a SHA-256."]
    elif version is not None and external_id_problem(version):
        problems[f"{where}.version"] = [f"Expected a non-empty string of at most {MAX_EXTERNAL_ID_CHARS}."]
    if any(p.startswith(where) for p in problems):
        return None
    return ManifestEntry(external_id, (sha256 or "").lower(), version or "")


def manifest_parse(body: Any) -> tuple[list[ManifestEntry], bool]:
    """The entries and ``complete`` of a manifest body; a 400 naming each
    problem (``documents[3].sha256``) otherwise."""
    if not isinstance(body, dict):
        raise ValidationFailed('Send an object {"documents": [...], "complete": true|false}.')
    problems: dict[str, list[str]] = {
        key: ["Unknown field."] for key in body if key not in ("documents", "complete")
    }
    documents, complete = body.get("documents"), body.get("complete", False)
    if not isinstance(complete, bool):
        problems["complete"] = ["Expected true or false."]
    if not isinstance(documents, list):
        problems["documents"] = ["Expected a list of documents (it may be empty)."]
        documents = []
    elif len(documents) > MAX_MANIFEST_DOCUMENTS:
        problems["documents"] = [f"At most {MAX_MANIFEST_DOCUMENTS:,} documents per manifest."]
        documents = []
    seen: set[str] = set()
    entries = [_entry(index, item, seen, problems) for index, item in enumerate(documents)]
    if problems:
        raise ValidationFailed("The manifest is invalid.", fields=problems)
    return [e for e in entries if e is not None], complete


def external_ids_parse(body: Any) -> list[str]:
    """The ``external_ids`` of a deletion body; a 400 naming each problem."""
    if not isinstance(body, dict) or set(body) - {"external_ids"}:
        raise ValidationFailed('Send an object {"external_ids": [...]}.')
    ids = body.get("external_ids")
    if not isinstance(ids, list) or not ids:
        raise ValidationFailed(
            "The request is invalid.", fields={"external_ids": ["Expected a non-empty list."]}
        )
    if len(ids) > MAX_MANIFEST_DOCUMENTS:
        message = f"At most {MAX_MANIFEST_DOCUMENTS:,} per request."
        raise ValidationFailed("The request is invalid.", fields={"external_ids": [message]})
    problems: dict[str, list[str]] = {}
    seen: set[str] = set()
    for index, value in enumerate(ids):
        problem = external_id_problem(value) or ("Named twice." if value in seen else None)
        if problem:
            problems[f"external_ids[{index}]"] = [problem]
        else:
            seen.add(value)
    if problems:
        raise ValidationFailed("The request is invalid.", fields=problems)
    return ids


def manifest_diff(*, workspace: Workspace, entries: Sequence[ManifestEntry], complete: bool) -> ManifestDiff:
    """What the workspace holds against the manifest, in the manifest's order
    (``gone`` by external id). Changed: a ``sha256`` other than the stored
    bytes', or a ``version`` other than the stored one (or none stored).
    Writes nothing."""
    stored = {
        external_id: (sha256, version, resource_id)
        for external_id, sha256, version, resource_id in Resource.objects.filter(workspace=workspace)
        .exclude(external_id="")
        .values_list("external_id", "sha256", "external_version", "id")
    }
    diff = ManifestDiff()
    for entry in entries:
        held = stored.get(entry.external_id)
        if held is None:
            diff.new.append(entry.external_id)
        elif (entry.sha256 and entry.sha256 != held[0]) or (entry.version and entry.version != held[1]):
            diff.changed.append(entry.external_id)
        else:
            diff.unchanged.append(entry.external_id)
    if complete:
        listed = {entry.external_id for entry in entries}
        diff.gone = sorted((eid, held[2]) for eid, held in stored.items() if eid not in listed)
    return diff


def external_ids_delete(
    *, workspace: Workspace, external_ids: Sequence[str]
) -> tuple[list[tuple[str, uuid.UUID]], list[str]]:
    """Delete the workspace's documents with these external ids, with their
    passages (they leave retrieval in the same transaction). Returns the
    deleted ``(external_id, resource id)`` pairs and the ids not found."""

    def delete() -> dict[str, uuid.UUID]:
        # The documents' rows are locked first, in one order. An ingestion
        # writing one of their passages checks its foreign key at commit
        # (Django's constraints are deferred), which needs that row: it waits
        # until this deletion is done, and then fails, the document gone.
        # Unlocked, it could commit between the DELETE of passages, which did
        # not see its uncommitted one, and this transaction's commit, whose
        # own check would then find a passage of a deleted document.
        rows = list(
            Resource.objects.select_for_update()
            .filter(workspace=workspace, external_id__in=list(external_ids))
            .order_by("id")
            .only("id", "workspace_id", "external_id", "title", "status", "error_code", "passage_count")
        )
        Resource.objects.filter(pk__in=[row.id for row in rows]).delete()
        for row in rows:  # each subscriber hears of each document gone (workspaces/webhooks)
            resource_deleted_emit(row)
        return {row.external_id: row.id for row in rows}

    # Run again when it crossed an ingestion's passage writes (daneshyar/transactions.py).
    found = atomic_retried(delete)
    deleted = [(eid, found[eid]) for eid in external_ids if eid in found]
    return deleted, [eid for eid in external_ids if eid not in found]
