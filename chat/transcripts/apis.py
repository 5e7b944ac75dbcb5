"""Transcript export and end-user deletion (spec: "Transcript export and end-user data").

Both need an ``admin`` key; the workspace is resolved first (``WorkspaceApi``),
so a foreign one is a 404 for every key, never a 403.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat.serializers import end_user_id_errors
from chat.transcripts import export, retention
from chat.transcripts.redaction import default_redactor
from daneshyar.api import query_data
from daneshyar.exceptions import ValidationFailed
from workspaces.access import WorkspaceApi

# "2026-01-02T03:04:05+01:00" sent unencoded arrives with a space for the "+".
_SPACED_OFFSET = re.compile(r"^(.*\d) (\d{2}:?\d{2})$")


class IsoDateTimeQueryField(serializers.DateTimeField):
    """ISO 8601 datetime; naive values are UTC; an unencoded ``+`` offset is tolerated."""

    def to_internal_value(self, value: Any) -> dt.datetime:
        if isinstance(value, str):
            value = _SPACED_OFFSET.sub(r"\1+\2", value.strip())
        parsed = super().to_internal_value(value)
        if timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed, dt.UTC)
        return parsed


class TranscriptExportApi(WorkspaceApi):
    admin_methods = frozenset({"GET"})

    class FilterSerializer(serializers.Serializer[Any]):
        external_user_id = serializers.CharField(required=False, min_length=1, max_length=255)
        updated_since = IsoDateTimeQueryField(required=False, input_formats=["iso-8601"])
        # Not a ChoiceField: "redact=" (empty) must be an error, never a silent plain export.
        redact = serializers.CharField(required=False, allow_blank=True, help_text='Only "pii".')
        pseudonymize = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Replace every external_user_id with a keyed HMAC, stable across exports.",
        )
        include_console = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Include the sessions of the admin console's playground (end users named "
            '"console:<username>"). Off by default; an external_user_id naming one exports it anyway.',
        )

        class Meta:
            ref_name = "TranscriptExportFilter"

        def validate_redact(self, value: str) -> str:
            if value != "pii":
                raise serializers.ValidationError('Unknown redaction; the only one is "pii".')
            return value

    @extend_schema(
        operation_id="transcripts_export",
        summary="Export transcripts",
        description=(
            "Every session of the workspace as NDJSON, streamed, one line per session with its "
            "messages (admin keys). Filter by `external_user_id` or `updated_since` (incremental "
            "export); `redact=pii` masks personal data in message content and ends with a report "
            "line; `pseudonymize=true` replaces end-user ids."
        ),
        tags=["Transcripts"],
        parameters=[FilterSerializer],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                response=OpenApiTypes.STR,
                description=(
                    'One JSON object per line: {"type": "session", ...} per session, oldest activity '
                    'first; with redact=pii a final {"type": "report", "counts", "paths"}. '
                    "Assistant messages carry model, degraded, provenance, guard and access (the "
                    "filters, groups and token resources their turn retrieved within). "
                    "See docs/transcripts.md."
                ),
            )
        },
    )
    def get(self, request: Request, workspace_id: Any) -> StreamingHttpResponse:
        params = self.FilterSerializer(data=query_data(request))
        params.is_valid(raise_exception=True)
        data = params.validated_data
        sessions = export.transcript_session_list(
            workspace=self.workspace,
            filters=export.ExportFilters(
                external_user_id=data.get("external_user_id"),
                updated_since=data.get("updated_since"),
                include_console=data["include_console"],
            ),
        )
        redactor = default_redactor if data.get("redact") == "pii" else None
        pseudonym = (
            export.pseudonymizer(organization_id=self.workspace.organization_id)
            if data["pseudonymize"] or redactor is not None
            else None
        )
        response = StreamingHttpResponse(
            export.transcript_export_lines(
                sessions=sessions,
                redactor=redactor,
                pseudonym=pseudonym if data["pseudonymize"] else None,
                # redact=pii: an external_user_id that is contact data gets its pseudonym.
                pii_pseudonym=pseudonym,
            ),
            content_type="application/x-ndjson; charset=utf-8",
        )
        response["Cache-Control"] = "no-store"
        response["X-Content-Type-Options"] = "nosniff"
        return response


class EndUserDeleteApi(WorkspaceApi):
    admin_methods = frozenset({"DELETE"})

    @extend_schema(
        operation_id="end_users_delete",
        summary="Delete an end user's data",
        description=(
            "Delete every session and message of one end user (`external_user_id`) in the workspace, "
            "feedback included (admin keys). 204, also when there was nothing to delete."
        ),
        tags=["Transcripts"],
        request=None,
        responses={204: None},
    )
    def delete(self, request: Request, workspace_id: Any, external_user_id: str) -> Response:
        errors = end_user_id_errors(external_user_id)
        if errors:
            raise ValidationFailed("Invalid external_user_id.", fields={"external_user_id": errors})
        retention.end_user_data_delete(workspace=self.workspace, external_user_id=external_user_id)
        return Response(status=204)
