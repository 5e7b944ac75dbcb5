"""A stored reply becomes a test item (the console's "Add to test set" on the
dashboard's lists, and ``POST …/test-sets/{id}/items/`` with
``from_message_id``).

The item's question is the user message the reply answered; when the
reply was a follow-up, the item is the conversation up to that question
(``messages``, as the chat endpoint takes it), so a run asks it in the same
context. The item keeps its source (``TestItem.source_message``): deleting
the end user's data (``end_user_data_delete``) or the retention sweep of
expired sessions deletes the messages, and with them the items built from
their text and those items' results in the runs (docs/evaluation.md).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from rest_framework import serializers

from chat.message_list import conversation_parse
from chat.models import CONSOLE_USER_PREFIX, Feedback, FeedbackRating, Message, MessageRole
from chat.outcomes import ReplyOutcome, message_outcome
from daneshyar.api import uuid_or_404
from daneshyar.exceptions import ApplicationError, NotFound, ValidationFailed
from evaluations.items import ItemInputSerializer, item_create
from evaluations.models import ExpectedOutcome, TestItem, TestSet
from workspaces.models import Workspace

# The reply outcomes after which the curator most likely wanted an answer
# (the dashboard lists them: a no-answer, a question back, a fallback); an
# answer without a citation, not disliked, more likely should have been the
# no-answer reply.
_WANTED_AN_ANSWER = frozenset(
    {ReplyOutcome.NO_ANSWER, ReplyOutcome.FORM, ReplyOutcome.FALLBACK, ReplyOutcome.CITED}
)


def reply_get(*, workspace: Workspace, message_id: object) -> Message:
    """A reply (an assistant message) of the workspace; anything else is a 404."""
    found = (
        Message.objects.filter(
            session__workspace=workspace, id=uuid_or_404(message_id), role=MessageRole.ASSISTANT
        )
        .exclude(session__external_user_id__startswith=f"{CONSOLE_USER_PREFIX}evaluation-")
        .select_related("session")
        .first()
    )
    if found is None:
        raise NotFound()
    return found


def default_expected_outcome(*, outcome: str, disliked: bool) -> str:
    """What the reply should have been, as the form preselects it."""
    if disliked or outcome in _WANTED_AN_ANSWER:
        return ExpectedOutcome.ANSWER
    return ExpectedOutcome.NO_ANSWER


def reply_conversation(reply: Message) -> dict[str, Any]:
    """``question``, or ``messages`` for a follow-up: the session up to the
    user message ``reply`` answered (a 400 when there is none)."""
    earlier = list(
        Message.objects.filter(session_id=reply.session_id, sequence__lt=reply.sequence)
        .order_by("sequence")
        .values_list("role", "content")
    )
    if not earlier or earlier[-1][0] != MessageRole.USER or not earlier[-1][1].strip():
        raise ValidationFailed(
            "The reply answers no stored question.",
            fields={"from_message_id": ["The reply answers no stored question."]},
        )
    if len(earlier) == 1:
        return {"question": earlier[0][1]}
    messages: list[dict[str, str]] = []
    if reply.session.system_note:
        messages.append({"role": "system", "content": reply.session.system_note})
    messages += [{"role": role, "content": content} for role, content in earlier]
    try:
        conversation_parse(messages, field="from_message_id")
    except ApplicationError:
        # A history the chat endpoint would not take back (turns out of
        # order): the question alone.
        return {"question": earlier[-1][1]}
    return {"messages": messages}


def reply_conversation_or_none(reply: Message) -> dict[str, Any] | None:
    """``reply_conversation``, or None when the reply answers no stored question."""
    try:
        return reply_conversation(reply)
    except ValidationFailed:
        return None


@transaction.atomic
def item_from_reply(
    *, test_set: TestSet, reply: Message, expected_resource_ids: list[Any], expected_outcome: str
) -> TestItem:
    """A new item of ``test_set`` from ``reply``'s question (or conversation)."""
    data: dict[str, Any] = {
        **reply_conversation(reply),
        "expected_resource_ids": [uuid.UUID(str(i)) for i in expected_resource_ids],
        "expected_outcome": expected_outcome,
    }
    item = item_create(test_set=test_set, data=data)
    item.source_message = reply
    item.save(update_fields=["source_message"])
    return item


def reply_default_outcome(reply: Message) -> str:
    """The expected outcome the form preselects for ``reply``: from how it
    ended (``chat.outcomes.reply_outcome``) and whether its user disliked it."""
    disliked = Feedback.objects.filter(message=reply, rating=FeedbackRating.DOWN).exists()
    return default_expected_outcome(outcome=message_outcome(message=reply), disliked=disliked)


class ItemCreateSerializer(ItemInputSerializer):
    """``POST …/test-sets/{id}/items/``: an item, or with ``from_message_id``
    one built from a stored reply (its question or conversation)."""

    from_message_id = serializers.UUIDField(
        required=False,
        help_text="A reply (an assistant message) of this workspace: the item is its question, or the "
        "conversation up to it for a follow-up, and is deleted with its end user's data. Instead of "
        "question and messages.",
    )

    class Meta:
        ref_name = "TestItemCreateInput"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "from_message_id" not in attrs:
            return super().validate(attrs)
        if attrs.get("question", "").strip() or attrs.get("messages") is not None:
            raise serializers.ValidationError(
                {"from_message_id": ["Send from_message_id instead of question and messages, not with them."]}
            )
        return attrs


def item_create_any(*, workspace: Workspace, test_set: TestSet, data: dict[str, Any]) -> TestItem:
    """The POST's item: from a reply (another workspace's is a 404) or as written."""
    if "from_message_id" not in data:
        return item_create(test_set=test_set, data=data)
    return item_from_reply(
        test_set=test_set,
        reply=reply_get(workspace=workspace, message_id=data["from_message_id"]),
        expected_resource_ids=data.get("expected_resource_ids", []),
        expected_outcome=data.get("expected_outcome", ExpectedOutcome.ANSWER),
    )
