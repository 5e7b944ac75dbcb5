"""The bulk upload endpoint (``POST …/resources/batch/``; spec "Resources"):
many documents in one request, one outcome each. The bodies it reads are
:mod:`resources.bulk`'s."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import ok
from daneshyar.schema import envelope
from resources import batch_services, bulk
from resources.apis import ResourceOutputSerializer
from workspaces.access import WorkspaceApi
from workspaces.idempotency import idempotent
from workspaces.ratelimit import rate_limit_upload

BulkTextSerializerList = bulk.BulkTextSerializer(many=True)


class ResourceBatchItemOutputSerializer(serializers.Serializer[Any]):
    index = serializers.IntegerField(help_text="Position of the document in the request.")
    name = serializers.CharField(allow_null=True, help_text="Path inside the zip; null for text items.")
    outcome = serializers.ChoiceField(choices=["created", "existing", "replaced", "rejected"])
    resource = ResourceOutputSerializer(allow_null=True)
    error = inline_serializer(
        "ResourceBatchItemError",
        {
            "code": serializers.CharField(),
            "message": serializers.CharField(),
            "fields": serializers.DictField(
                child=serializers.ListField(child=serializers.CharField()), required=False
            ),
        },
        allow_null=True,
    )

    class Meta:
        ref_name = "ResourceBatchItem"


class ResourceBatchApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})
    # The upload limit counts documents: one at the door (an exhausted
    # bucket refuses the body unread), the others once the body is read.
    upload_methods = frozenset({"POST"})
    parser_classes = [
        bulk.BulkJsonParser,
        bulk.NdjsonParser,
        bulk.JsonLinesParser,
        bulk.ZipParser,
        bulk.LegacyZipParser,
        MultiPartParser,
    ]

    class ZipUploadSerializer(serializers.Serializer[Any]):
        file = serializers.FileField(help_text="A zip archive of documents.")

        class Meta:
            ref_name = "ResourceBatchZipUpload"

    class OutputSerializer(serializers.Serializer[Any]):
        created = serializers.IntegerField()
        existing = serializers.IntegerField()
        replaced = serializers.IntegerField()
        rejected = serializers.IntegerField()
        documents = ResourceBatchItemOutputSerializer(many=True)

        class Meta:
            ref_name = "ResourceBatch"

    @extend_schema(
        operation_id="resources_create_batch",
        summary="Upload many documents",
        tags=["Resources"],
        description=(
            "Upload many small documents in one request: a JSON array or NDJSON "
            "(`application/x-ndjson`) of `{title, text, metadata?, access?}` objects, or a zip archive "
            "of documents (`application/zip` body, or multipart `file`), optionally with a "
            '`manifest.json` at its root: `{"documents": {"<path in the zip>": {"title"?, "metadata"?, '
            '"access"?}}}`. At most BATCH_UPLOAD_MAX_DOCUMENTS documents and BATCH_UPLOAD_MAX_BYTES '
            "bytes per request (413 beyond), each document at most MAX_UPLOAD_BYTES. 202 with one "
            "entry per document, in order: `created` (a new resource, `pending`), `existing` (the "
            "same bytes are already in the workspace, or earlier in this request: that resource, "
            "with its stored title, metadata and access), `replaced` (a document's `external_id`, "
            "a member of a JSON or NDJSON document or of a zip manifest's entry, named a document of "
            "the workspace, whose content it replaced in place as the single upload does) or "
            "`rejected` (a type that is not accepted, "
            "or over MAX_UPLOAD_BYTES: `error` says which; nothing stored for it). A body that "
            "cannot be read, a document without `text` or with `metadata`/`access` of the wrong "
            "shape, or a malformed manifest, is one 4xx (400 names each problem in `fields`, e.g. "
            '`[2].text`, `[3].metadata.price`, `manifest.documents["a.md"].access`) and stores '
            "nothing."
        ),
        request={
            "application/json": BulkTextSerializerList,
            "application/x-ndjson": OpenApiTypes.STR,
            "application/zip": OpenApiTypes.BINARY,
            "multipart/form-data": ZipUploadSerializer,
        },
        responses={202: envelope("ResourceBatchCreated", OutputSerializer())},
        examples=[
            OpenApiExample(
                "One text",
                value={"title": "Claims", "text": "How to file a claim…"},
                request_only=True,
                media_type="application/json",
            )
        ],
    )
    @idempotent
    def post(self, request: Request, workspace_id: Any) -> Response:
        items = bulk.bulk_items(request.data, declared=self.workspace.metadata_keys)
        rate_limit_upload(
            request, principal=self.principal, workspace=self.workspace, documents=len(items), counted=1
        )
        documents = [item.document for item in items if item.document is not None]
        outcomes = iter(batch_services.resources_create_many(workspace=self.workspace, documents=documents))
        rows: list[dict[str, Any]] = []
        counts = {"created": 0, "existing": 0, "replaced": 0, "rejected": 0}
        for index, item in enumerate(items):
            if item.document is not None:
                outcome = next(outcomes)
                state, resource, error = outcome.outcome, outcome.resource, outcome.error
            else:
                state, resource, error = "rejected", None, item.error
            counts[state] += 1
            rows.append(
                {
                    "index": index,
                    "name": item.name,
                    "outcome": state,
                    "resource": ResourceOutputSerializer(resource).data if resource is not None else None,
                    "error": _error_body(error),
                }
            )
        return ok({**counts, "documents": rows}, status=202)


def _error_body(error: Any) -> dict[str, Any] | None:
    if error is None:
        return None
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.fields:
        body["fields"] = error.fields
    return body
