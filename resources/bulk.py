"""The bodies of a bulk upload (``POST …/resources/batch/``): parsers for
NDJSON and raw zip bodies, and the documents a parsed body holds.

A body is read whole, up to BATCH_UPLOAD_MAX_BYTES, before anything is
stored; a body that cannot be read, or a document that does not fit the
schema (no ``text``, not an object), is one 4xx naming each problem, and
stores nothing. A document the service refuses for its content (a type that
is not accepted, over MAX_UPLOAD_BYTES) is refused alone: the others are
stored.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from daneshyar.exceptions import (
    ApplicationError,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationFailed,
    flatten_fields,
)
from daneshyar.parsers import json_loads
from resources import archives
from resources.attribute_fields import AccessField, MetadataField
from resources.attributes import declared_problems, prefixed
from resources.batch_services import NewDocument
from resources.external import External, ExternalIdField, external_from
from resources.services import text_title

NDJSON_TYPES = ("application/x-ndjson", "application/jsonl")
ZIP_TYPES = ("application/zip", "application/x-zip-compressed")


@dataclass(frozen=True)
class ZipBody:
    """A raw zip body. Its ``str`` (what the Idempotency-Key fingerprint
    hashes) is the digest of its bytes, not the bytes."""

    data: bytes

    def __str__(self) -> str:
        return "zip:" + hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class BulkItem:
    """One document of a body, or why it was refused before storing."""

    name: str | None
    document: NewDocument | None = None
    error: ApplicationError | None = None


def _read_bounded(stream: IO[bytes] | None) -> bytes:
    limit = settings.BATCH_UPLOAD_MAX_BYTES
    data = stream.read(limit + 1) if stream is not None else b""
    if len(data) > limit:
        raise PayloadTooLarge(f"The request body is over the limit of {limit:,} bytes.")
    return data


class BulkJsonParser(BaseParser):
    """A JSON array, read up to BATCH_UPLOAD_MAX_BYTES (the route's own limit,
    in place of MAX_JSON_BODY_BYTES)."""

    media_type = "application/json"

    def parse(  # type: ignore[override]  # a list of documents, not a mapping
        self, stream: Any, media_type: Any = None, parser_context: Any = None
    ) -> Any:
        try:
            return json_loads(_read_bounded(stream))
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc


class NdjsonParser(BaseParser):
    """One JSON object per line (blank lines skipped)."""

    media_type = NDJSON_TYPES[0]

    def parse(  # type: ignore[override]  # a list of documents, not a mapping
        self, stream: Any, media_type: Any = None, parser_context: Any = None
    ) -> list[Any]:
        items: list[Any] = []
        for number, line in enumerate(_read_bounded(stream).split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                items.append(json_loads(line))
            except ValueError as exc:
                raise ParseError(f"line {number} is not JSON ({exc}).") from exc
        return items


class JsonLinesParser(NdjsonParser):
    media_type = NDJSON_TYPES[1]


class ZipParser(BaseParser):
    """A zip archive of documents as the raw body."""

    media_type = ZIP_TYPES[0]

    def parse(  # type: ignore[override]  # the archive's bytes, not a mapping
        self, stream: Any, media_type: Any = None, parser_context: Any = None
    ) -> ZipBody:
        return ZipBody(_read_bounded(stream))


class LegacyZipParser(ZipParser):
    media_type = ZIP_TYPES[1]


class TextDocumentSerializer(serializers.Serializer[Any]):
    # A document sent as text: the JSON body of POST …/resources/
    # (resources/apis.py) and each item of a batch. (Comments, not a
    # docstring: drf-spectacular would publish it as the schema's description.)
    title = serializers.CharField(required=False, allow_blank=True, max_length=500)
    text = serializers.CharField(trim_whitespace=False)
    metadata = MetadataField(required=False)
    access = AccessField(required=False)
    external_id = ExternalIdField(required=False)
    version = ExternalIdField(required=False)


class BulkTextSerializer(TextDocumentSerializer):
    class Meta:
        ref_name = "ResourceBatchTextItem"


def _too_many(count: int) -> PayloadTooLarge:
    limit = settings.BATCH_UPLOAD_MAX_DOCUMENTS
    return PayloadTooLarge(f"The request holds {count:,} documents; the limit is {limit:,} per request.")


def bulk_items(data: Any, *, declared: dict[str, str] | None = None) -> list[BulkItem]:
    """The documents of a parsed body: a list of ``{title, text}`` (JSON or
    NDJSON), a :class:`ZipBody`, or a multipart form whose ``file`` is a zip.
    ``declared``: the workspace's metadata keys, which every document's
    metadata is held to (a 400 naming each that breaks them)."""
    items = _items(data)
    problems: dict[str, list[str]] = {}
    for index, item in enumerate(items):
        if item.document is None:
            continue
        prefix = (
            f"[{index}].metadata" if item.name is None else archives.manifest_path(item.name) + ".metadata"
        )
        problems |= prefixed(prefix, declared_problems(item.document.metadata, declared or {}))
    if problems:
        raise ValidationFailed("The request has invalid documents.", fields=problems)
    return items


def _items(data: Any) -> list[BulkItem]:
    if isinstance(data, ZipBody):
        return _zip_items(data.data)
    if isinstance(data, Mapping) and "file" in data:
        file = data["file"]
        if not isinstance(file, UploadedFile):
            raise ValidationFailed("`file` must be a file.", fields={"file": ["Send a zip archive."]})
        if file.size is not None and file.size > settings.BATCH_UPLOAD_MAX_BYTES:
            raise PayloadTooLarge(
                f"The file is {file.size:,} bytes; the limit is {settings.BATCH_UPLOAD_MAX_BYTES:,} bytes."
            )
        return _zip_items(file.read(settings.BATCH_UPLOAD_MAX_BYTES + 1))
    if not isinstance(data, list):
        raise ValidationFailed(
            "Send a JSON array or NDJSON of {title, text} objects, or a zip archive of documents."
        )
    if not data:
        raise ValidationFailed("The request holds no documents.")
    if len(data) > settings.BATCH_UPLOAD_MAX_DOCUMENTS:
        raise _too_many(len(data))
    items: list[BulkItem] = []
    problems: dict[str, list[str]] = {}
    named: set[str] = set()
    for index, entry in enumerate(data):
        item, fields = _text_item(entry)
        items.append(item)
        problems.update(flatten_fields({index: fields}))
        external = item.document.external if item.document is not None else None
        if external is not None:
            if external.id in named:
                problems[f"[{index}].external_id"] = ["Named twice in this request."]
            named.add(external.id)
    if problems:
        # A malformed document is a client's bug: refuse the request, naming
        # every one, rather than store its neighbours and hide it in a 202.
        raise ValidationFailed("The request has invalid documents.", fields=problems)
    return items


def _text_item(entry: Any) -> tuple[BulkItem, Any]:
    """The document of one ``{title, text, metadata?, access?}`` entry, or
    its field errors (as DRF nests them: ``metadata`` → ``price``)."""
    if not isinstance(entry, dict):
        return BulkItem(None), ["Each document must be an object {title, text}."]
    item = BulkTextSerializer(data=entry)
    if not item.is_valid():
        return BulkItem(None), item.errors
    data = item.validated_data
    text: str = data["text"]
    try:
        external = external_from(data)
    except ValidationFailed as exc:
        return BulkItem(None), exc.fields
    document = NewDocument(
        data=text.encode("utf-8"),
        title=text_title(text, data.get("title", "")),
        metadata=data.get("metadata", {}),
        access=data.get("access"),
        external=external,
        kept=frozenset(name for name in ("metadata", "access") if name not in data),
    )
    return BulkItem(None, document), {}


def _zip_items(data: bytes) -> list[BulkItem]:
    if len(data) > settings.BATCH_UPLOAD_MAX_BYTES:
        raise PayloadTooLarge(f"The archive is over the limit of {settings.BATCH_UPLOAD_MAX_BYTES:,} bytes.")
    if not data.startswith(archives.ZIP_MAGIC):
        raise UnsupportedMediaType("The body is not a zip archive.")
    try:
        archive = archives.open_archive(data)
    except archives.ArchiveRefused as exc:
        raise (PayloadTooLarge if exc.over_limit else ValidationFailed)(exc.message) from exc
    items: list[BulkItem] = []
    with archive:
        count = archives.document_count(archive)
        if count > settings.BATCH_UPLOAD_MAX_DOCUMENTS:
            raise _too_many(count)
        try:
            for document in archives.archive_documents(archive):
                if document.data is None:
                    limit = settings.MAX_UPLOAD_BYTES
                    error = PayloadTooLarge(
                        f"The file is {document.size:,} bytes; the limit is {limit:,} bytes."
                    )
                    items.append(BulkItem(document.path, error=error))
                    continue
                manifest = document.manifest
                new = NewDocument(
                    data=document.data,
                    title=manifest.title or document.path,
                    filename=posixpath.basename(document.path),
                    metadata=manifest.metadata,
                    access=manifest.access,
                    external=External(manifest.external_id, manifest.version)
                    if manifest.external_id
                    else None,
                    kept=frozenset({"metadata", "access"} - manifest.sent),
                )
                items.append(BulkItem(document.path, new))
        except archives.ArchiveRefused as exc:
            raise ValidationFailed(exc.message) from exc
    if not items:
        raise ValidationFailed("The archive holds no documents.")
    return items
