"""Sessions and their messages: list, read, rename, delete (an end user's
own, or any with an admin key), and the passages a reply cites."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat import selectors
from chat.models import Message, Session
from chat.serializers import MessageSchema, SessionSchema, end_user_id_errors, message_data, session_detail
from chat.services import sessions as session_services
from daneshyar.api import StringField, ok
from daneshyar.exceptions import ValidationFailed
from daneshyar.schema import list_envelope
from daneshyar.views import DetailMixin, ListMixin, Operation, RowMixin, SerializerClass
from resources.models import Resource
from retrieval.filters import Access, access_expression
from retrieval.serializers import bbox_field
from workspaces.access import EndUserApi, WorkspaceApi, end_user_resolve
from workspaces.principals import EndUser

USER_PARAM = OpenApiParameter(
    "external_user_id",
    str,
    description="The end user. Required for chat keys; admin keys may omit it; with an end-user token "
    "it may be omitted (the token's) and, when sent, must be the token's (403 otherwise).",
)


def _end_user(view: WorkspaceApi, request: Request) -> str | None:
    """``external_user_id`` from the query: required for chat keys; a token's own."""
    value = end_user_resolve(view.principal, request.query_params.get("external_user_id"))
    assert value is None or isinstance(value, str)
    errors = end_user_id_errors(value) if value is not None else []
    if errors:
        raise ValidationFailed("Invalid external_user_id.", fields={"external_user_id": errors})
    if value is None and not view.principal.is_admin:
        raise ValidationFailed(
            "external_user_id is required.", fields={"external_user_id": ["This field is required."]}
        )
    return value


def _session(view: WorkspaceApi, request: Request, session_id: str) -> Session:
    return selectors.session_get(
        workspace=view.workspace, session_id=session_id, external_user_id=_end_user(view, request)
    )


class SessionApi(RowMixin, EndUserApi):
    tags = ["Sessions"]
    row_serializer: ClassVar[SerializerClass] = SessionSchema
    schema_name = "Session"
    parameters = [USER_PARAM]

    def row(self, **path: Any) -> Session:
        return _session(self, self.request, path["session_id"])

    def represent(self, row: Session) -> Any:
        return session_detail(row)

    def represent_rows(self, rows: list[Any]) -> Any:
        return [session_detail(s) for s in rows]


class SessionListApi(ListMixin, SessionApi):
    ordering = ("-updated_at", "-id")
    list_operation = Operation(
        "sessions_list",
        "List sessions",
        "Sessions, most recently active first. Chat keys name the end user (`external_user_id`, "
        "required for them); admin keys may omit it to list every end user's sessions.",
    )

    def rows(self, owner: Any) -> QuerySet[Session]:
        return selectors.session_list(
            workspace=self.workspace, external_user_id=_end_user(self, self.request)
        )


class SessionDetailApi(DetailMixin, SessionApi):
    class UpdateSerializer(serializers.Serializer[Any]):
        title = StringField(min_length=1, max_length=200)

        class Meta:
            ref_name = "SessionUpdateInput"

    update_serializer = UpdateSerializer
    update_partial = False
    retrieve_operation = Operation(
        "sessions_get",
        "Get a session",
        "One session of the end user named by `external_user_id`; a session of another end user "
        "is 404, as if it did not exist.",
    )
    update_operation = Operation(
        "sessions_update",
        "Rename a session",
        "Change a session's `title` (1 to 200 characters); answers the updated session.",
    )
    destroy_operation = Operation(
        "sessions_delete", "Delete a session", "Delete the session and its messages. 204."
    )

    def update(self, row: Session, data: Any) -> Session:
        return session_services.session_update(session=row, title=data["title"])

    def destroy(self, row: Session) -> None:
        session_services.session_delete(session=row)


class SessionMessagesApi(ListMixin, SessionApi):
    row_serializer = MessageSchema
    schema_name = "Message"
    ordering = ("sequence",)
    list_operation = Operation(
        "sessions_messages",
        "Read a session's messages",
        "The session's messages, oldest first, each in the chat reply's shape (assistant messages"
        " with `response`, `grounding` and `model`).",
    )

    def owner(self, **path: Any) -> Session:
        return self.row(**path)

    def rows(self, owner: Session) -> QuerySet[Message]:
        return selectors.message_list(session=owner)

    def represent_rows(self, rows: list[Any]) -> Any:
        return [message_data(m) for m in rows]


class SourceSchema(serializers.Serializer[Any]):
    passage_id = serializers.UUIDField()
    resource_id = serializers.UUIDField()
    resource_title = serializers.CharField()
    page = serializers.IntegerField(allow_null=True, help_text="1-based, when the document has pages.")
    bbox = bbox_field()
    text = serializers.CharField(help_text="The passage as retrieved.")

    class Meta:
        ref_name = "MessageSource"


class MessageSourcesApi(EndUserApi):
    """What a client shows when the user opens a citation: readable by the
    end user who owns the session, unlike the resource's passage list."""

    @extend_schema(
        operation_id="sessions_message_sources",
        summary="Read a reply's sources",
        tags=["Sessions"],
        parameters=[USER_PARAM],
        responses=list_envelope("MessageSourceList", SourceSchema),
        description="The passages an assistant message cites, in the order it first cites them "
        "(each once; next_cursor is always null). A passage whose document was deleted or "
        "re-ingested since is left out, and so is one outside an end-user token's resource_ids or "
        "groups.",
    )
    def get(self, request: Request, workspace_id: str, session_id: str, message_id: str) -> Response:
        session = _session(self, request, session_id)
        # A token narrowed to some documents reads no other document's text,
        # even where an earlier turn of the session (asked with a key) cited it.
        # Nor a document its groups do not open (retrieval/filters.py).
        principal = self.principal
        allowed = principal.resource_ids if isinstance(principal, EndUser) else None
        readable = (
            access_expression(Access(groups=principal.groups), table=Resource._meta.db_table)
            if isinstance(principal, EndUser)
            else None
        )
        items = selectors.message_sources(
            session=session, message_id=message_id, resource_ids=allowed or None, readable=readable
        )
        return ok({"items": items, "next_cursor": None})
