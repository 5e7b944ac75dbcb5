"""Feedback on an assistant message (one per end user, replaced when sent again)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat.models import Feedback, FeedbackRating
from chat.serializers import ExternalUserIdField
from chat.services import feedback as feedback_services
from daneshyar.api import StringField, ok
from daneshyar.schema import also_answers, envelope
from workspaces.access import EndUserApi, with_end_user
from workspaces.idempotency import idempotency_stored, idempotent


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


class FeedbackApi(EndUserApi):
    class InputSerializer(serializers.Serializer[Any]):
        external_user_id = ExternalUserIdField(
            help_text="The end user. With an end-user token it may be omitted (the token's)."
        )
        rating = serializers.ChoiceField(choices=FeedbackRating.choices)
        comment = StringField(required=False, allow_blank=True, max_length=4000, default="")

        class Meta:
            ref_name = "FeedbackInput"

    @extend_schema(
        operation_id="feedback_upsert",
        summary="Rate a reply",
        description=(
            "The end user's rating of an assistant message (`up` or `down`, with an optional "
            "comment). One per message and end user: 201 the first time, 200 when it replaces the "
            "earlier one."
        ),
        tags=["Feedback"],
        request=InputSerializer,
        responses={
            201: envelope("FeedbackCreated", FeedbackOutputSerializer),
            200: envelope("FeedbackReplaced", FeedbackOutputSerializer),
        },
    )
    @also_answers(403)  # another end user's id with an end-user token
    @idempotent
    def post(self, request: Request, workspace_id: Any, session_id: Any, message_id: Any) -> Response:
        body = self.InputSerializer(data=with_end_user(request.data, self.principal))
        body.is_valid(raise_exception=True)
        feedback, created = feedback_services.feedback_upsert(
            workspace=self.workspace,
            session_id=session_id,
            message_id=message_id,
            external_user_id=body.validated_data["external_user_id"],
            rating=body.validated_data["rating"],
            comment=body.validated_data["comment"],
        )
        idempotency_stored(
            request, external_user_id=feedback.external_user_id, session_id=feedback.message.session_id
        )
        return ok(FeedbackOutputSerializer(feedback).data, status=201 if created else 200)
