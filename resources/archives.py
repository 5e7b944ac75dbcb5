"""Archives of documents: the bulk upload endpoint's and the console's.

An archive is checked before anything is decompressed (:func:`open_archive`,
with the bounds of :mod:`resources.parsing.archive`); reading an entry
afterwards yields at most its declared size (``zipfile`` stops there and
checks the CRC). A DOCX or an XLSX is a zip too, but a document:
:func:`is_document_archive` tells them apart.

An archive may carry a manifest, ``manifest.json`` at its root (not a
document itself): per document, by its path in the archive, a ``title``,
``metadata``, ``access``, and the integrator's ``external_id`` and
``version`` (resources/external.py)::

    {"documents": {"handbook/parking.md": {"title": "Parking",
                                           "metadata": {"site": "north"},
                                           "access": {"groups": ["staff"]}}}}

It is read and checked whole before any document is (:func:`archive_manifest`):
a malformed one, or one naming a path that is not a document of the archive
(a typo would otherwise leave a document open to every end user), refuses
the archive with a 400 naming the problem.
"""

from __future__ import annotations

import json
import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from daneshyar.exceptions import UnsupportedMediaType, ValidationFailed
from resources.attributes import (
    Access,
    Metadata,
    access_normalize,
    attributes_problems,
    json_field,
    prefixed,
    shown_key,
    storable,
)
from resources.external import external_id_problem
from resources.parsing import ParseError, detect_content_type
from resources.parsing.archive import archive_open

ZIP_MAGIC = b"PK\x03\x04"
MANIFEST_NAME = "manifest.json"
MANIFEST_ENTRY_KEYS = ("title", "metadata", "access", "external_id", "version")
# As long as a title given at upload may be (Resource.title).
MAX_TITLE_CHARS = 500


class ArchiveRefused(Exception):
    """``over_limit``: refused for its size (else damaged, too complex,
    encrypted or compressed in a way we do not read)."""

    def __init__(self, message: str, *, over_limit: bool = False):
        self.message = message
        self.over_limit = over_limit
        super().__init__(message)


@dataclass(frozen=True)
class ManifestEntry:
    """What the manifest says of one document (checked)."""

    title: str = ""
    metadata: Metadata = field(default_factory=dict)
    access: Access = None
    # The integrator's id and version (resources/external.py); "" when not set.
    external_id: str = ""
    version: str | None = None
    # The keys the entry sent (a replacement keeps the others' stored values).
    sent: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ArchiveDocument:
    path: str  # inside the archive
    data: bytes | None  # None: over MAX_UPLOAD_BYTES, not read
    size: int
    manifest: ManifestEntry = ManifestEntry()


def open_archive(data: bytes) -> zipfile.ZipFile:
    """The zip in ``data``, opened only if it is within the ingestion's
    bounds (:func:`resources.parsing.archive.archive_open`, the INGEST_MAX_*
    settings), so an archive is refused exactly when a DOCX of the same shape
    would fail in the worker."""
    try:
        return archive_open(data)
    except ParseError as exc:
        raise ArchiveRefused(exc.message, over_limit=exc.code == "file_too_large_uncompressed") from exc


def skipped_entry(path: str) -> bool:
    """Folders, the files archivers add beside documents (macOS forks, dot
    files), and the manifest."""
    name = posixpath.basename(path.rstrip("/"))
    return (
        path.endswith("/")
        or path.startswith("__MACOSX/")
        or name.startswith(".")
        or not name
        or path == MANIFEST_NAME
    )


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    try:
        with archive.open(info) as member:
            return member.read()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveRefused(f"The archive entry {info.filename!r} is damaged.") from exc


def archive_documents(archive: zipfile.ZipFile) -> Iterator[ArchiveDocument]:
    """The documents of an opened archive, one at a time, with what the
    manifest says of each; raises :class:`ArchiveRefused` when an entry
    turns out damaged, and :class:`ValidationFailed` before the first
    document when the manifest is malformed (:func:`archive_manifest`)."""
    manifest = archive_manifest(archive)
    for info in archive.infolist():
        if skipped_entry(info.filename):
            continue
        entry = manifest.get(info.filename, ManifestEntry())
        if info.file_size > settings.MAX_UPLOAD_BYTES:
            yield ArchiveDocument(info.filename, None, info.file_size, entry)
            continue
        yield ArchiveDocument(info.filename, _read(archive, info), info.file_size, entry)


def document_count(archive: zipfile.ZipFile) -> int:
    """How many documents :func:`archive_documents` would yield."""
    return sum(not skipped_entry(info.filename) for info in archive.infolist())


def _manifest_refused(problems: dict[str, list[str]]) -> ValidationFailed:
    shown = "; ".join(f"{path}: {' '.join(messages)}" for path, messages in list(problems.items())[:3])
    return ValidationFailed(f"The archive's {MANIFEST_NAME} is invalid ({shown}).", fields=problems)


def archive_manifest(archive: zipfile.ZipFile) -> dict[str, ManifestEntry]:
    """The manifest's entries by path; empty when the archive has none.
    :class:`ValidationFailed` naming each problem (``manifest`` for the
    file itself, ``manifest.documents["a.md"].metadata.price``)."""
    info = next((i for i in archive.infolist() if i.filename == MANIFEST_NAME), None)
    if info is None:
        return {}
    if info.file_size > settings.MAX_UPLOAD_BYTES:
        raise _manifest_refused({"manifest": [f"Over {settings.MAX_UPLOAD_BYTES:,} bytes."]})
    try:
        value = json_field(_read(archive, info).decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _manifest_refused({"manifest": [f"Not valid UTF-8 JSON: {exc}"]}) from None
    if not isinstance(value, dict) or set(value) - {"documents"}:
        raise _manifest_refused({"manifest": ['Expected an object {"documents": {path: {...}}}.']})
    documents = value.get("documents", {})
    if not isinstance(documents, dict):
        raise _manifest_refused({"manifest.documents": ["Expected an object keyed by path in the archive."]})
    paths = {i.filename for i in archive.infolist() if not skipped_entry(i.filename)}
    problems: dict[str, list[str]] = {}
    entries: dict[str, ManifestEntry] = {}
    named: set[str] = set()
    for path, entry in documents.items():
        where = manifest_path(path)
        found = _entry_problems(entry) if path in paths else {"": ["No such document in the archive."]}
        if not found and entry.get("external_id") in named:
            found = {"external_id": ["Named by two documents of the manifest."]}
        if found:
            problems |= prefixed(where, found)
            continue
        named.add(entry.get("external_id", ""))
        entries[path] = ManifestEntry(
            title=entry.get("title", ""),
            metadata=dict(entry.get("metadata", {})),
            access=access_normalize(entry.get("access")),
            external_id=entry.get("external_id", ""),
            version=entry.get("version"),
            sent=frozenset(entry),
        )
    if problems:
        raise _manifest_refused(problems)
    return entries


def manifest_path(path: str) -> str:
    """How a 400 names a document's entry of the manifest."""
    return f"manifest.documents[{json.dumps(path)}]"


def _entry_problems(entry: Any) -> dict[str, list[str]]:
    if not isinstance(entry, dict):
        return {"": ["Expected an object of title, metadata and access."]}
    problems = {
        shown_key(str(key)): [f"Unknown key; one of {', '.join(MANIFEST_ENTRY_KEYS)}."]
        for key in entry
        if key not in MANIFEST_ENTRY_KEYS
    }
    title = entry.get("title", "")
    if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS or not storable(title):
        problems["title"] = [f"Expected a string of at most {MAX_TITLE_CHARS} characters."]
    for key in ("external_id", "version"):
        problem = external_id_problem(entry[key]) if key in entry else None
        if problem:
            problems[key] = [problem]
    if "version" in entry and "external_id" not in entry:
        problems["version"] = ["Send it with an external_id."]
    attributes = attributes_problems(metadata=entry.get("metadata", {}), access=entry.get("access"))
    return problems | attributes


def is_document_archive(data: bytes, *, filename: str, claimed_type: str) -> bool:
    """A zip that is not a DOCX or XLSX package."""
    if not data.startswith(ZIP_MAGIC):
        return False
    try:
        detect_content_type(data, filename=filename, claimed_type=claimed_type)
    except UnsupportedMediaType:
        return True
    return False
