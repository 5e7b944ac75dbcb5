"""Sessions and messages made directly with the ORM (the chat endpoint lives elsewhere)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from django.utils import timezone
from factory.declarations import Sequence, SubFactory
from factory.django import DjangoModelFactory

from chat.models import Feedback, Grounding, Message, MessageRole, Session
from workspaces.models import Workspace


class SessionFactory(DjangoModelFactory[Session]):
    class Meta:
        model = Session

    workspace = SubFactory("tests.factories.WorkspaceFactory")
    external_user_id = Sequence(lambda n: f"user-{n}")
    title = Sequence(lambda n: f"Conversation {n}")


class MessageFactory(DjangoModelFactory[Message]):
    class Meta:
        model = Message

    session = SubFactory(SessionFactory)
    sequence = Sequence(lambda n: n)
    role = MessageRole.USER
    content = "Hello"


def answer_response(*parts: tuple[str, dict[str, str] | None], form: Any = None) -> dict[str, Any]:
    return {
        "type": "form" if form else "answer",
        "parts": [{"text": text, "source": source} for text, source in parts],
        "form": form,
    }


def conversation(
    workspace: Workspace,
    *,
    external_user_id: str = "alice",
    title: str = "A conversation",
    turns: list[tuple[str, dict[str, Any]]] | None = None,
    updated_at: dt.datetime | None = None,
) -> tuple[Session, list[Message]]:
    """A session with user/assistant turns; ``turns`` is [(question, response JSON)]."""
    session = SessionFactory.create(workspace=workspace, external_user_id=external_user_id, title=title)
    turns = turns or [("What is the refund window?", answer_response(("Thirty days.", None)))]
    messages: list[Message] = []
    for question, response in turns:
        messages.append(
            MessageFactory.create(
                session=session, sequence=len(messages), role=MessageRole.USER, content=question
            )
        )
        text = " ".join(part["text"] for part in response["parts"])
        messages.append(
            MessageFactory.create(
                session=session,
                sequence=len(messages),
                role=MessageRole.ASSISTANT,
                content=text,
                response=response,
                grounding="documents",
                model="test-model",
            )
        )
    Session.objects.filter(pk=session.pk).update(
        message_count=len(messages), updated_at=updated_at or timezone.now()
    )
    session.refresh_from_db()
    return session, messages


def replies_of_every_outcome(workspace: Workspace) -> dict[str, Message]:
    """One stored reply for each outcome of ``chat.outcomes.ReplyOutcome``
    (keyed by its value), each in a session of its own end user (the value)."""
    source = {"resource_id": str(uuid.uuid4()), "resource_title": "Policy", "passage_id": str(uuid.uuid4())}
    form = {
        "title": "Contact",
        "fields": [{"name": "email", "label": "E-mail", "type": "email", "required": True}],
    }
    cases = {
        "cited": answer_response(("Thirty days.", source), ("Anything else?", None)),
        "no_citation": answer_response(("I do not know.", None)),
        "form": answer_response(("Who are you?", None), form=form),
        "fallback": answer_response(("Sorry, try again.", None)),
        "degraded": answer_response(("Thirty days.", source)),
        "guard_flagged": answer_response(("Your claim is approved.", source)),
        "guard_blocked": answer_response(("We will call you.", None)),
        "no_answer": answer_response(("The documents don't say.", None)),
        "small_talk": answer_response(("Hello! Ask me anything.", None)),
    }
    replies = {}
    actions = {"guard_flagged": "flag", "guard_blocked": "block"}
    for name, response in cases.items():
        _, messages = conversation(workspace, external_user_id=name, turns=[(f"{name}?", response)])
        guard = {"action": actions[name], "rule_ids": ["r"]} if name in actions else None
        Message.objects.filter(pk=messages[1].pk).update(
            is_fallback=name == "fallback", degraded=name == "degraded", guard=guard
        )
        if name in ("no_answer", "small_talk"):
            # grounding "none": the documents don't say (an answerability was
            # assessed), or small talk (none was).
            Message.objects.filter(pk=messages[1].pk).update(
                grounding=Grounding.NONE, answerability=0.1 if name == "no_answer" else None
            )
        replies[name] = Message.objects.get(pk=messages[1].pk)
    return replies


def feedback(message: Message, *, rating: str = "up", comment: str = "") -> Feedback:
    return Feedback.objects.create(
        message=message, external_user_id=message.session.external_user_id, rating=rating, comment=comment
    )
