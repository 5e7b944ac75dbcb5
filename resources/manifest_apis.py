"""The sync manifest endpoints (docs/ingestion.md, "The sync manifest"):
``POST …/sync/`` compares an integrator's manifest with the workspace and
writes nothing; ``POST …/sync/delete/`` deletes documents by external id.
Admin keys only (403 for ``chat`` keys, 401 for end-user tokens); a foreign
workspace is a 404, as everywhere."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import ok
from daneshyar.schema import envelope
from resources import manifest
from workspaces.access import WorkspaceApi


class SyncGoneSerializer(serializers.Serializer[Any]):
    external_id = serializers.CharField()
    resource_id = serializers.UUIDField()

    class Meta:
        ref_name = "SyncGoneDocument"


class SyncManifestApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    class InputSerializer(serializers.Serializer[Any]):
        documents = serializers.ListField(
            child=inline_serializer(
                "SyncManifestDocument",
                {
                    "external_id": serializers.CharField(max_length=255),
                    "sha256": serializers.CharField(required=False, help_text="64 hex digits."),
                    "version": serializers.CharField(required=False, max_length=255),
                },
            ),
            max_length=manifest.MAX_MANIFEST_DOCUMENTS,
        )
        complete = serializers.BooleanField(
            required=False, default=False, help_text="The manifest lists the whole source: report `gone`."
        )

        class Meta:
            ref_name = "SyncManifestInput"

    class OutputSerializer(serializers.Serializer[Any]):
        new = serializers.ListField(child=serializers.CharField())
        changed = serializers.ListField(child=serializers.CharField())
        unchanged = serializers.ListField(child=serializers.CharField())
        gone = SyncGoneSerializer(many=True)

        class Meta:
            ref_name = "SyncManifest"

    @extend_schema(
        operation_id="sync_manifest",
        summary="Compare a source's manifest with the workspace",
        description=(
            "The integrator's sync job sends what its source holds: per document its `external_id` "
            "and either the `sha256` of its bytes or its `version` (at most 10,000 documents; larger "
            'sources send parts with `"complete": false`). The answer names, in the manifest\'s order, '
            "the `new` ones (no document of the workspace has the external id), the `changed` ones "
            "(another sha256 than the stored bytes', or another version than the stored one) and the "
            "`unchanged` ones; with `complete: true`, also the workspace's documents with an "
            "external id the manifest does not list (`gone`). Writes nothing: upload the new and "
            "changed documents with their `external_id`, then delete the gone ones with "
            "`POST …/sync/delete/`. A duplicate external id or an entry of the wrong shape is a 400 "
            "naming it (`documents[3].sha256`)."
        ),
        tags=["Resources"],
        request=InputSerializer,
        responses=envelope("SyncManifestResult", OutputSerializer()),
        examples=[
            OpenApiExample(
                "Manifest",
                value={
                    "documents": [
                        {
                            "external_id": "wiki/1201",
                            "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                        },
                        {"external_id": "wiki/1202", "version": "17"},
                    ],
                    "complete": True,
                },
                request_only=True,
            )
        ],
    )
    def post(self, request: Request, workspace_id: Any) -> Response:
        entries, complete = manifest.manifest_parse(request.data)
        diff = manifest.manifest_diff(workspace=self.workspace, entries=entries, complete=complete)
        gone = [{"external_id": eid, "resource_id": str(rid)} for eid, rid in diff.gone]
        return ok({"new": diff.new, "changed": diff.changed, "unchanged": diff.unchanged, "gone": gone})


class SyncDeleteApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    class InputSerializer(serializers.Serializer[Any]):
        external_ids = serializers.ListField(
            child=serializers.CharField(max_length=255),
            min_length=1,
            max_length=manifest.MAX_MANIFEST_DOCUMENTS,
        )

        class Meta:
            ref_name = "SyncDeleteInput"

    class OutputSerializer(serializers.Serializer[Any]):
        deleted = SyncGoneSerializer(many=True)
        not_found = serializers.ListField(
            child=serializers.CharField(), help_text="External ids no document of the workspace has."
        )

        class Meta:
            ref_name = "SyncDeleted"

    @extend_schema(
        operation_id="external_ids_delete",
        summary="Delete documents by external id",
        description=(
            "Delete the workspace's documents with these external ids (at most 10,000), with their "
            "passages: they leave retrieval at once, in one transaction. The answer names each "
            "deleted document, and the external ids no document has (`not_found`: already deleted, "
            "or never uploaded). A duplicate or malformed id is a 400 naming it "
            "(`external_ids[2]`); nothing is deleted."
        ),
        tags=["Resources"],
        request=InputSerializer,
        responses=envelope("SyncDeleteResult", OutputSerializer()),
    )
    def post(self, request: Request, workspace_id: Any) -> Response:
        external_ids = manifest.external_ids_parse(request.data)
        deleted, missing = manifest.external_ids_delete(workspace=self.workspace, external_ids=external_ids)
        rows = [{"external_id": eid, "resource_id": str(rid)} for eid, rid in deleted]
        return ok({"deleted": rows, "not_found": missing})
