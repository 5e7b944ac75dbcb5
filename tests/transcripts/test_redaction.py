from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from chat.models import Message, Session
from chat.transcripts import export as transcripts
from chat.transcripts.redaction import RuleRedactor
from chat.transcripts.traversal import RedactionReport, redact_message
from tests.conftest import Tenant
from tests.transcripts.conftest import export
from tests.transcripts.factories import answer_response, conversation, feedback

EMAIL = "jane.doe+claims@example.org"
PHONE = "+44 20 7946 0958"
CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"
POLICY = "POL-88812345678"
PLANTED = [EMAIL, PHONE, CARD, IBAN, "88812345678", "7946 0958", "0532 0130"]

SOURCE = {
    "resource_id": "0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10",
    "resource_title": "Claims 2024",
    "passage_id": "p-12345678",
}
FORM: dict[str, Any] = {
    "title": "Claim form",
    "fields": [{"name": "policy_number", "label": "Policy number", "type": "text", "required": True}],
}


@pytest.mark.parametrize(
    ("text", "expected", "kinds"),
    [
        (f"write to {EMAIL}.", "write to [EMAIL].", {"email": 1}),
        (f"call {PHONE} now", "call [PHONE] now", {"phone": 1}),
        ("call 555-123-4567 or (030) 1234 5678", "call [PHONE] or [PHONE]", {"phone": 2}),
        (f"card {CARD}", "card [NUMBER]", {"number": 1}),
        ("card 4111-1111-1111-1111!", "card [NUMBER]!", {"number": 1}),
        (f"policy {POLICY}", "policy POL-[NUMBER]", {"number": 1}),
        ("account 12345678901", "account [NUMBER]", {"number": 1}),
        (f"IBAN {IBAN} PLEASE", "IBAN [IBAN] PLEASE", {"iban": 1}),
        ("iban GB82WEST12345698765432.", "iban [IBAN].", {"iban": 1}),
    ],
)
def test_rule_redactor_replaces_each_kind_with_its_placeholder(
    text: str, expected: str, kinds: dict[str, int]
) -> None:
    redacted, findings = RuleRedactor()(text)
    assert redacted == expected
    assert dict(findings) == kinds


@pytest.mark.parametrize(
    "text",
    [
        "Claims are paid within 30 days, up to 1500000 EUR, since 2024.",
        "On 2024-01-15 at 10:30 the rate was 3.75%.",
        "Resource 0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10 has 12 pages.",
        "Send the form; no personal data here.",
    ],
)
def test_rule_redactor_leaves_ordinary_text_alone(text: str) -> None:
    assert RuleRedactor()(text) == (text, {})


def test_invalid_iban_checksum_is_not_called_an_iban() -> None:
    redacted, findings = RuleRedactor()("DE00 3704 0044 0532 0130 00")
    assert "[IBAN]" not in redacted
    assert "iban" not in findings


def test_redact_message_visits_text_only_and_never_mutates_its_input() -> None:
    message: dict[str, Any] = {
        "id": "m1",
        "role": "assistant",
        "content": f"mail {EMAIL}",
        "created_at": "2026-01-01T00:00:00Z",
        "response": {**answer_response((f"mail {EMAIL}", SOURCE)), "form": FORM},
        "feedback": [{"external_user_id": "bob@example.org", "rating": "up", "comment": f"call {PHONE}"}],
    }
    before = copy.deepcopy(message)
    report = RedactionReport()

    out = redact_message(message, path="sessions[0].messages[1]", redactor=RuleRedactor(), report=report)

    assert message == before
    assert out["content"] == "mail [EMAIL]"
    assert out["response"]["parts"][0] == {"text": "mail [EMAIL]", "source": SOURCE}
    assert out["response"]["form"] == FORM
    assert out["feedback"][0] == {
        "external_user_id": "bob@example.org",
        "rating": "up",
        "comment": "call [PHONE]",
    }
    assert report.as_line() == {
        "type": "report",
        "counts": {"email": 2, "phone": 1},
        "paths": [
            "sessions[0].messages[1].content",
            "sessions[0].messages[1].response.parts[0].text",
            "sessions[0].messages[1].feedback[0].comment",
        ],
    }


def test_report_paths_are_capped_but_counts_are_not() -> None:
    report = RedactionReport(max_paths=2)
    for i in range(5):
        report.add(f"sessions[{i}].messages[0].content", {"email": 1})
    line = report.as_line()
    assert line["counts"] == {"email": 5}
    assert len(line["paths"]) == 2
    assert line["paths_truncated"] == 3


def _structure(line: dict[str, Any]) -> str:
    """Everything but the redactable text, serialized: must be byte-for-byte equal."""
    skeleton = copy.deepcopy(line)
    skeleton.pop("title")
    for message in skeleton["messages"]:
        message.pop("content")
        for part in (message["response"] or {}).get("parts", []):
            part.pop("text")
        form = (message["response"] or {}).get("form")
        if form:
            form.pop("title")
            for field in form["fields"]:
                for key in ("label", "placeholder", "options"):
                    field.pop(key, None)
        for item in message["feedback"]:
            item.pop("comment")
    return json.dumps(skeleton, sort_keys=False, ensure_ascii=False)


@pytest.mark.django_db
def test_export_redacts_planted_pii_and_keeps_structure_byte_for_byte(owner: Tenant) -> None:
    conversation(owner.workspace, external_user_id="carol", title="Nothing personal")
    session, messages = conversation(
        owner.workspace,
        external_user_id="alice",
        title=f"Mail {EMAIL}",
        turns=[
            (
                f"I am {EMAIL}, phone {PHONE}, card {CARD}, IBAN {IBAN}, policy {POLICY}.",
                answer_response(("Thanks, noted.", SOURCE), (f"We will call {PHONE}.", None)),
            ),
            (
                "What do you need?",
                {**answer_response(("Please give your policy number.", None)), "form": FORM},
            ),
        ],
    )
    feedback(messages[1], rating="down", comment=f"reach me at {EMAIL}")
    stored = list(Message.objects.filter(session=session).order_by("sequence").values())
    stored_session = Session.objects.filter(pk=session.pk).values().get()

    _, plain = export(owner.client(), owner.workspace.id)
    response, redacted = export(owner.client(), owner.workspace.id, redact="pii")

    assert response.status_code == 200
    *sessions, report = redacted
    assert len(sessions) == len(plain) == 2
    for before, after in zip(plain, sessions, strict=True):
        assert _structure(before) == _structure(after)
    line = sessions[1]
    assert line["title"] == "Mail [EMAIL]"
    assert line["messages"][0]["content"] == (
        "I am [EMAIL], phone [PHONE], card [NUMBER], IBAN [IBAN], policy POL-[NUMBER]."
    )
    assert line["messages"][1]["response"]["parts"][1]["text"] == "We will call [PHONE]."
    assert line["messages"][1]["feedback"][0]["comment"] == "reach me at [EMAIL]"
    assert line["messages"][3]["response"]["form"] == FORM
    body = json.dumps(redacted)
    for planted in PLANTED:
        assert planted not in body

    assert report["type"] == "report"
    assert report["counts"] == {"email": 3, "iban": 1, "number": 2, "phone": 3}
    assert report["paths"] == [
        "sessions[1].title",
        "sessions[1].messages[0].content",
        "sessions[1].messages[1].content",
        "sessions[1].messages[1].response.parts[1].text",
        "sessions[1].messages[1].feedback[0].comment",
    ]
    report_text = json.dumps(report)
    for text in [*PLANTED, "[EMAIL]", "[PHONE]", "Thanks", "noted"]:
        assert text not in report_text

    # Stored data is untouched.
    assert list(Message.objects.filter(session=session).order_by("sequence").values()) == stored
    assert Session.objects.filter(pk=session.pk).values().get() == stored_session


@pytest.mark.django_db
def test_redacted_export_of_an_empty_workspace_is_just_the_report(owner: Tenant) -> None:
    _, lines = export(owner.client(), owner.workspace.id, redact="pii")
    assert lines == [{"type": "report", "counts": {}, "paths": []}]


@pytest.mark.django_db
def test_a_custom_redactor_is_only_ever_shown_text(owner: Tenant) -> None:
    session, messages = conversation(
        owner.workspace,
        external_user_id="alice",
        title="Title text",
        turns=[("Question text", {**answer_response(("Part text", SOURCE)), "form": FORM})],
    )
    feedback(messages[1], comment="Comment text")
    seen: list[str] = []

    def spy(text: str) -> tuple[str, dict[str, int]]:
        seen.append(text)
        return text.upper(), {"spy": 1}

    sessions = transcripts.transcript_session_list(
        workspace=owner.workspace, filters=transcripts.ExportFilters()
    )
    lines = [
        json.loads(x)
        for x in b"".join(transcripts.transcript_export_lines(sessions=sessions, redactor=spy)).splitlines()
    ]

    # Text only: the form's title and labels are text the model wrote; its
    # field names, types and flags are structure.
    assert sorted(seen) == sorted(
        [
            "Title text",
            "Question text",
            "Part text",
            "Part text",
            "Comment text",
            "Claim form",
            "Policy number",
        ]
    )
    line = lines[0]
    assert line["session_id"] == str(session.id) and line["external_user_id"] == "alice"
    assert [m["role"] for m in line["messages"]] == ["user", "assistant"]
    assert line["messages"][1]["response"]["parts"][0] == {"text": "PART TEXT", "source": SOURCE}
    assert line["messages"][1]["response"]["form"] == {
        "title": "CLAIM FORM",
        "fields": [{**FORM["fields"][0], "label": "POLICY NUMBER"}],
    }
    assert lines[-1]["counts"] == {"spy": 7}


@pytest.mark.django_db
def test_a_pseudonymous_export_replaces_end_users_with_a_stable_keyed_hash(owner: Tenant) -> None:
    _, messages = conversation(owner.workspace, external_user_id="alice@example.org", title="t")
    feedback(messages[1], comment="fine")
    first = export(owner.client(), owner.workspace.id, pseudonymize="true")[1]
    second = export(owner.client(), owner.workspace.id, pseudonymize="true")[1]
    pseudonym = first[0]["external_user_id"]
    assert pseudonym.startswith("u_") and len(pseudonym) == 34 and "alice" not in json.dumps(first)
    assert second[0]["external_user_id"] == pseudonym  # stable across exports
    assert first[0]["messages"][1]["feedback"][0]["external_user_id"] == pseudonym
    plain = export(owner.client(), owner.workspace.id)[1]
    assert plain[0]["external_user_id"] == "alice@example.org"
    bad = owner.client().get(
        f"/api/v1/workspaces/{owner.workspace.id}/transcripts/", {"pseudonymize": "maybe"}
    )
    assert bad.status_code == 400


@pytest.mark.django_db
def test_the_model_written_text_of_a_form_is_redacted(owner: Tenant) -> None:
    form = {
        "title": "Call 555.123.4567",
        "fields": [
            {
                "name": "contact",
                "label": "Email jane@example.org",
                "type": "select",
                "required": True,
                "placeholder": "e.g. 555-1234",
                "options": ["SSN 123-45-6789", "none"],
                "choices": [{"value": "v1", "label": "SSN 123-45-6789"}, {"value": "v2", "label": "none"}],
            }
        ],
    }
    conversation(
        owner.workspace,
        external_user_id="u",
        title="t",
        turns=[("Question", {**answer_response(("Fill this in", None)), "type": "form", "form": form})],
    )
    lines = export(owner.client(), owner.workspace.id, redact="pii")[1]
    exported = lines[0]["messages"][1]["response"]["form"]
    assert exported["title"] == "Call [PHONE]"
    field = exported["fields"][0]
    assert (field["label"], field["placeholder"], field["options"]) == (
        "Email [EMAIL]",
        "e.g. [PHONE]",
        ["SSN [NATIONAL_ID]", "none"],
    )
    # The options' values are ids, not text: only their labels are redacted.
    assert field["choices"] == [
        {"value": "v1", "label": "SSN [NATIONAL_ID]"},
        {"value": "v2", "label": "none"},
    ]
    assert field["name"] == "contact" and field["required"] is True
    assert "sessions[0].messages[1].response.form.fields[0].options[0]" in lines[-1]["paths"]
    assert "sessions[0].messages[1].response.form.fields[0].choices[0].label" in lines[-1]["paths"]
