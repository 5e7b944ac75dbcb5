"""The answer to a "which one do you mean?" form (clarify.py): which document
the user chose.

**Whether the previous reply asked back** is read from what is stored with
it, never from its wording: its form's one field carries ``choices``, each
option's value a document's id. A conversation the client sends as
``messages`` (the OpenAI-compatible endpoint, or ``messages`` on the native
one) brings the reply as text only; there the options are the numbered list
the reply's text ends with (:func:`numbered`), each label read back as the
ready document it names (its title, or the start of a title cut with an
ellipsis). A form stored before options carried values (one ``subject``
field of titles) is read back the same way.

**The choice** is the option whose value (the document's id) the message
is, or — for a client that sends text — whose number in the list it is,
whose whole label, or a start of it, it is, or whose own words (shared by
no other option) are the only words it has: "2", "Toaster T2", "toast",
"the toaster". The message may be a form answer, ``subject: <value>``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chat.contract import CHOICE_TYPES, FormChoice, FormField, Reply, ResponseType
from chat.output import MAX_LABEL_CHARS, ParsedReply
from chat.prompting import HistoryTurn
from chat.text import content_words
from resources.models import Resource
from resources.selectors import ready_resources_labelled
from resources.titles import shorten
from retrieval.filters import OPEN, Access, access_expression
from retrieval.search import ScoredPassage
from workspaces.models import Workspace

# The name of the form's one field.
FIELD_NAME = "subject"
ELLIPSIS = "\u2026"
# A typed start of a label must be this long to choose (a letter or two chooses nothing).
MIN_PREFIX_CHARS = 3

_ITEM = re.compile(r"^\s*(\d+)[.)]\s+(\S.*?)\s*$")
_NUMBER = re.compile(r"^#?\s*(\d+)\s*[.)]?$")
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"


@dataclass(frozen=True)
class Option:
    """An option of the form: the document it stands for, and its label."""

    resource_id: uuid.UUID
    label: str


def numbered(question: str, labels: Sequence[str]) -> str:
    """The form as text: the question, a blank line, then the options as a
    numbered list (``1. Kettle K1``), one a line."""
    lines = [f"{number}. {label}" for number, label in enumerate(labels, start=1)]
    return "\n".join([question, "", *lines])


def numbered_labels(text: str) -> list[str]:
    """The labels of the numbered list ``text`` ends with (numbered 1, 2, …,
    at least two, after a question); ``[]`` when it ends with none."""
    lines = text.rstrip().splitlines()
    items: list[tuple[int, str]] = []
    for line in reversed(lines):
        match = _ITEM.match(line)
        if match is None:
            break
        items.append((int(match.group(1)), match.group(2)))
    items.reverse()
    if len(items) < 2 or len(items) == len(lines):
        return []
    if [number for number, _ in items] != list(range(1, len(items) + 1)):
        return []
    return [label for _, label in items]


def chosen_option(
    message: str, previous: HistoryTurn | None, *, workspace: Workspace, access: Access = OPEN
) -> Option | None:
    """The option ``message`` chooses from the form the ``previous`` turn's
    reply asked with (rules above); None when it asked none or the message
    chooses none of its options."""
    options = asked_options(previous, workspace=workspace, access=access) if previous is not None else []
    return option_chosen(message, options) if options else None


def asked_options(turn: HistoryTurn, *, workspace: Workspace, access: Access = OPEN) -> list[Option]:
    """The options of the form ``turn``'s reply asked with; ``[]`` when it did
    not ask which document (rules above). A label is read back only as a
    document ``access`` may read (retrieval/filters.py)."""
    if turn.form_options:
        by_value = [_option(value, label) for value, label in turn.form_options]
        options = [o for o in by_value if o is not None]
        if len(options) == len(by_value):
            return options
        if turn.form_fields != (FIELD_NAME,):
            return []
        labels = [label for _, label in turn.form_options]
    elif turn.form_fields:
        return []
    else:
        labels = numbered_labels(turn.answer)
    if len(labels) < 2:
        return []
    found = ready_resources_labelled(
        workspace=workspace,
        labels=labels,
        readable=access_expression(access, table=Resource._meta.db_table),
    )
    if any(label not in found for label in labels):
        return []
    return [Option(found[label], label) for label in labels]


def option_chosen(message: str, options: Sequence[Option]) -> Option | None:
    """The option ``message`` chooses (rules above), or ``None``."""
    text = answer_text(message)
    if not text or not options:
        return None
    value = option_id(text)
    if value is not None:
        return next((o for o in options if o.resource_id == value), None)
    number = _NUMBER.match(text)
    if number is not None:
        index = int(number.group(1))
        return options[index - 1] if 1 <= index <= len(options) else None
    typed = _plain(text)
    labels = [_plain(o.label) for o in options]
    for fits in (
        [typed == label for label in labels],
        [len(typed) >= MIN_PREFIX_CHARS and label.startswith(typed) for label in labels],
        # The whole title of a label that was cut.
        [o.label.endswith(ELLIPSIS) and typed.startswith(_plain(o.label)) for o in options],
    ):
        found = [option for option, fit in zip(options, fits, strict=True) if fit]
        if len(found) == 1:
            return found[0]
        if found:
            return None  # the text fits several options: none is chosen
    return _by_own_words(text, options)


def answer_text(message: str) -> str:
    """The chosen option in a follow-up: the message itself, or the value of
    a ``subject`` form answer ("subject: Kettle K1"), without quotes."""
    text = message.strip()
    match = re.match(rf"^\s*{FIELD_NAME}\s*[:=]\s*(.+)$", text, re.IGNORECASE | re.DOTALL)
    return (match.group(1) if match else text).strip().strip(_QUOTES).strip()


def _by_own_words(text: str, options: Sequence[Option]) -> Option | None:
    """The one option whose label has every content word of ``text``, one of
    them shared by no other option's label."""
    typed = content_words(text)
    if not typed:
        return None
    words = [content_words(o.label) for o in options]
    found = []
    for index, own in enumerate(words):
        others = set().union(*(w for i, w in enumerate(words) if i != index))
        if typed <= own and typed - others:
            found.append(options[index])
    return found[0] if len(found) == 1 else None


def _plain(text: str) -> str:
    """A label or a typed answer as compared: case and spacing folded, the
    ellipsis of a cut label and closing punctuation dropped."""
    return " ".join(text.casefold().split()).rstrip(f"{ELLIPSIS}.!?\u061f ").strip()


def _option(value: str, label: str) -> Option | None:
    resource_id = option_id(value)
    return Option(resource_id, label) if resource_id is not None else None


def option_id(text: str) -> uuid.UUID | None:
    """The document id an option's value (or a typed answer) is, or None."""
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        return None


def with_document_choices(reply: ParsedReply, passages: Sequence[ScoredPassage]) -> ParsedReply:
    """A form a generative model wrote, its options read as documents: when
    its one field's options each name a different retrieved document (as a
    typed answer chooses an option, :func:`option_chosen`, among the
    documents' titles), each option carries that document's id
    (``choices``) and the text ends with the options numbered, as the
    extractive engine's form does, so the choice is read by id. Any other
    reply, or a form whose options are not all documents, is unchanged."""
    form = reply.response.get("form")
    if reply.response["type"] != ResponseType.FORM or not form or len(form["fields"]) != 1:
        return reply
    field = form["fields"][0]
    labels = field.get("options") or []
    if field["type"] not in CHOICE_TYPES or len(labels) < 2 or field.get("choices"):
        return reply
    documents = [
        Option(resource_id, title)
        for resource_id, title in dict.fromkeys((p.resource_id, p.resource_title) for p in passages)
        if title.strip()
    ]
    chosen = [option_chosen(label, documents) for label in labels]
    if any(o is None for o in chosen) or len({o.resource_id for o in chosen if o}) != len(labels):
        return reply
    choices: list[FormChoice] = [
        {"value": str(o.resource_id), "label": label} for o, label in zip(chosen, labels, strict=True) if o
    ]
    fields: list[FormField] = [{**field, "choices": choices}]
    response: Reply = {**reply.response, "form": {**form, "fields": fields}}
    return replace(reply, response=response, content=numbered(reply.content, labels))


def labels_told_apart(labels: Sequence[str], names: Sequence[str]) -> list[str]:
    """Options' ``labels`` (each cut from its whole ``names``) told apart: two
    labels that a cut made the same are cut at the contract's bound instead,
    and numbered if still the same."""
    folded = [label.casefold() for label in labels]
    labels = [
        shorten(name, MAX_LABEL_CHARS) if folded.count(key) > 1 else label
        for name, label, key in zip(names, labels, folded, strict=True)
    ]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        count = seen[label.casefold()] = seen.get(label.casefold(), 0) + 1
        out.append(label if count == 1 else f"{shorten(label, MAX_LABEL_CHARS - 8)} ({count})")
    return out
