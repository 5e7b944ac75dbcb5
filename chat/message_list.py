"""Conversations in the OpenAI chat-messages format (``messages``).

A chat request may carry the conversation instead of a single ``message``::

    [{"role": "system", "content": "…"},            # optional, first only
     {"role": "user", "content": "…"},
     {"role": "assistant", "content": "…"},
     …,
     {"role": "user", "content": "…"}]               # the question

``content`` is a string or a list of ``{"type": "text", "text": …}`` parts
(joined with newlines). Roles alternate user/assistant after the optional
system message (``developer``, the newer name OpenAI clients send, is taken
as ``system``), and the last message is the question. Every error names the
offending place (``messages[2].content``), the same in the native API and the
OpenAI-compatible endpoint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chat.contract import ChatMessage
from daneshyar.exceptions import ValidationFailed

MAX_MESSAGES = 201  # a system message and 100 turns
MAX_CONTENT_CHARS = 32_000
SYSTEM_ROLES = frozenset({"system", "developer"})


@dataclass(frozen=True)
class Conversation:
    """A parsed ``messages`` list: the integrator's note, the earlier turns and the question."""

    system: str | None
    history: list[tuple[str, str]]  # (user, assistant) pairs, oldest first
    question: str

    @classmethod
    def single(cls, question: str) -> Conversation:
        """A lone question (a ``message``): no note, no history."""
        return cls(system=None, history=[], question=question)

    @property
    def history_offset(self) -> int:
        """The index of the first history message in ``messages`` (after the
        system message, if any): error field names count from the request."""
        return 1 if self.system is not None else 0


def conversation_parse(messages: Any, *, field: str = "messages") -> Conversation:
    """Validate ``messages``; raise 400 naming every offending place."""
    if not isinstance(messages, list):
        raise _invalid({field: ["Expected a list of messages."]})
    if not messages:
        raise _invalid({field: ["At least one message is needed: the question, from the user."]})
    if len(messages) > MAX_MESSAGES:
        raise _invalid({field: [f"At most {MAX_MESSAGES} messages."]})
    errors: dict[str, list[str]] = {}
    parsed: list[tuple[str, str]] = []
    for index, item in enumerate(messages):
        place = f"{field}[{index}]"
        if not isinstance(item, dict):
            errors[place] = ["Expected an object with role and content."]
            continue
        role = item.get("role")
        if role in SYSTEM_ROLES:
            role = "system"
        if role not in ("system", "user", "assistant"):
            errors[f"{place}.role"] = [
                f"Unsupported role {role!r}: use system (first message only), user or assistant."
            ]
            continue
        content = _content(item.get("content"), f"{place}.content", errors)
        if content is None:
            continue
        if len(content) > MAX_CONTENT_CHARS:
            errors[f"{place}.content"] = [
                f"Ensure this field has no more than {MAX_CONTENT_CHARS} characters."
            ]
        elif role != "assistant" and not content.strip():
            errors[f"{place}.content"] = ["The message is empty."]
        parsed.append((role, content))
    if errors:
        raise _invalid(errors)
    return _shape(parsed, field)


def _unstorable(text: str) -> list[str]:
    """What DRF's CharField refuses and PostgreSQL cannot store: NUL, and
    lone surrogates (not encodable as UTF-8)."""
    problems = []
    if "\x00" in text:
        problems.append("Null characters are not allowed.")
    surrogate = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    if surrogate is not None:
        problems.append(f"Surrogate characters are not allowed: U+{ord(surrogate):X}.")
    return problems


def _content(value: Any, place: str, errors: dict[str, list[str]]) -> str | None:
    if isinstance(value, str):
        if problems := _unstorable(value):
            errors[place] = problems
            return None
        return value
    if isinstance(value, list):
        texts: list[str] = []
        for index, part in enumerate(value):
            if not isinstance(part, dict):
                errors[f"{place}[{index}]"] = ['Expected a part {"type": "text", "text": …}.']
                return None
            kind = part.get("type")
            if kind != "text":
                errors[f"{place}[{index}].type"] = [
                    f"Unsupported content part type {kind!r}: only text parts are accepted."
                ]
                return None
            text = part.get("text")
            if not isinstance(text, str):
                errors[f"{place}[{index}].text"] = ["Expected a string."]
                return None
            if problems := _unstorable(text):
                errors[f"{place}[{index}].text"] = problems
                return None
            texts.append(text)
        if not texts:
            errors[place] = ["Expected at least one text part."]
            return None
        return "\n".join(texts)
    errors[place] = ["Expected a string or a list of text parts."]
    return None


def _shape(parsed: list[tuple[str, str]], field: str) -> Conversation:
    system: str | None = None
    start = 0
    if parsed[0][0] == "system":
        system, start = parsed[0][1], 1
    turns = parsed[start:]
    for offset, (role, _) in enumerate(turns):
        index = start + offset
        if role == "system":
            raise _invalid({f"{field}[{index}].role": ["A system message may only come first."]})
        expected = "user" if offset % 2 == 0 else "assistant"
        if role != expected:
            raise _invalid(
                {
                    f"{field}[{index}].role": [
                        f"Expected {expected}: after the optional system message, user and assistant "
                        "messages alternate, starting and ending with user."
                    ]
                }
            )
    if not turns:
        raise _invalid({field: ["The last message must be the question, from the user."]})
    if turns[-1][0] != "user":
        raise _invalid({f"{field}[{len(parsed) - 1}].role": ["The last message must be from the user."]})
    history = [(turns[i][1], turns[i + 1][1]) for i in range(0, len(turns) - 1, 2)]
    return Conversation(system=system, history=history, question=turns[-1][1])


def _invalid(fields: dict[str, list[str]]) -> ValidationFailed:
    return ValidationFailed("The request has invalid fields.", fields=fields)


def messages_hash(messages: Sequence[ChatMessage]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``messages``: sorted keys, no
    whitespace, UTF-8. What ``provenance.messages_hash`` proves."""
    canonical = json.dumps(
        [{"role": m["role"], "content": m["content"]} for m in messages],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
