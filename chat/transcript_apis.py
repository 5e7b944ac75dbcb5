"""Transcript export, end-user deletion and feedback (spec: "Transcript export and end-user data")."""

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
from rest_framework.views import APIView

from chat import feedback as feedback_services
from chat import retention, transcripts
from chat.models import Feedback, FeedbackRating
from chat.redaction import default_redactor
from daneshyar.api import ok
from daneshyar.exceptions import ValidationFailed
from daneshyar.schema import envelope
from workspaces.models import ApiKey
from workspaces.permissions import HasApiKey, IsAdminKey
from workspaces.selectors import workspace_get

# "2026-01-02T03:04:05+01:00" sent unencoded arrives with a space for the "+".
_SPACED_OFFSET = re.compile(r"^(.*\d) (\d{2}:?\d{2})$")


def _key(request: Request) -> ApiKey:
    assert isinstance(request.auth, ApiKey)
    return request.auth


class IsoDateTimeQueryField(serializers.DateTimeField):
    """ISO 8601 datetime; naive values are UTC; an unencoded ``+`` offset is tolerated."""

    def to_internal_value(self, value: Any) -> dt.datetime:
        if isinstance(value, str):
            value = _SPACED_OFFSET.sub(r"\1+\2", value.strip())
        parsed = super().to_internal_value(value)
        if timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed, dt.UTC)
        return parsed


class TranscriptExportApi(APIView):
    permission_classes = [IsAdminKey]

    class FilterSerializer(serializers.Serializer[Any]):
        external_user_id = serializers.CharField(required=False, min_length=1, max_length=255)
        updated_since = IsoDateTimeQueryField(required=False, input_formats=["iso-8601"])
        # Not a ChoiceField: "redact=" (empty) must be an error, never a silent plain export.
        redact = serializers.CharField(required=False, allow_blank=True, help_text='Only "pii".')

        class Meta:
            ref_name = "TranscriptExportFilter"

        def validate_redact(self, value: str) -> str:
            if value != "pii":
                raise serializers.ValidationError('Unknown redaction; the only one is "pii".')
            return value

    @extend_schema(
        operation_id="transcripts_export",
        parameters=[FilterSerializer],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                response=OpenApiTypes.STR,
                description=(
                    'One JSON object per line: {"type": "session", ...} per session, oldest activity '
                    'first; with redact=pii a final {"type": "report", "counts", "paths"}. '
                    "See docs/transcripts.md."
                ),
            )
        },
    )
    def get(self, request: Request, workspace_id: Any) -> StreamingHttpResponse:
        workspace = workspace_get(api_key=_key(request), workspace_id=workspace_id)
        params = self.FilterSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        sessions = transcripts.transcript_session_list(
            workspace=workspace,
            filters=transcripts.ExportFilters(
                external_user_id=data.get("external_user_id"), updated_since=data.get("updated_since")
            ),
        )
        redactor = default_redactor if data.get("redact") == "pii" else None
        response = StreamingHttpResponse(
            transcripts.transcript_export_lines(sessions=sessions, redactor=redactor),
            content_type="application/x-ndjson; charset=utf-8",
        )
        response["Cache-Control"] = "no-store"
        response["X-Content-Type-Options"] = "nosniff"
        return response


class EndUserDeleteApi(APIView):
    permission_classes = [IsAdminKey]

    @extend_schema(operation_id="end_users_delete", request=None, responses={204: None})
    def delete(self, request: Request, workspace_id: Any, external_user_id: str) -> Response:
        workspace = workspace_get(api_key=_key(request), workspace_id=workspace_id)
        if not 1 <= len(external_user_id) <= 255:
            raise ValidationFailed(
                "Invalid external_user_id.",
                fields={"external_user_id": ["Must be 1 to 255 characters."]},
            )
        retention.end_user_data_delete(workspace=workspace, external_user_id=external_user_id)
        return Response(status=204)


class FeedbackOutputSerializer(serializers.ModelSerializer[Feedback]):
    message_id = serializers.UUIDField(source="message.id", read_only=True)
    session_id = serializers.UUIDField(source="message.session_id", read_only=True)

    class Meta:
        model = Feedback
        fields = [
            "id",
            "session_id",
            "message_id",
            "external_user_id",
            "rating",
            "comment",
            "created_at",
            "updated_at",
        ]
        ref_name = "Feedback"


class FeedbackApi(APIView):
    permission_classes = [HasApiKey]

    class InputSerializer(serializers.Serializer[Any]):
        external_user_id = serializers.CharField(min_length=1, max_length=255)
        rating = serializers.ChoiceField(choices=FeedbackRating.choices)
        comment = serializers.CharField(required=False, allow_blank=True, max_length=4000, default="")

        class Meta:
            ref_name = "FeedbackInput"

    @extend_schema(
        operation_id="feedback_upsert",
        request=InputSerializer,
        responses={
            201: envelope("FeedbackCreated", FeedbackOutputSerializer),
            200: envelope("FeedbackReplaced", FeedbackOutputSerializer),
        },
    )
    def post(self, request: Request, workspace_id: Any, session_id: Any, message_id: Any) -> Response:
        workspace = workspace_get(api_key=_key(request), workspace_id=workspace_id)
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        feedback, created = feedback_services.feedback_upsert(
            workspace=workspace,
            session_id=session_id,
            message_id=message_id,
            external_user_id=body.validated_data["external_user_id"],
            rating=body.validated_data["rating"],
            comment=body.validated_data["comment"],
        )
        return ok(FeedbackOutputSerializer(feedback).data, status=201 if created else 200)
