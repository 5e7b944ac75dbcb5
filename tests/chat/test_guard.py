"""Output guard rules, claims checks and the review state, through the API.
The scripted backend stands in for the generative model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from chat.models import GuardRule, Message
from chat.services.guard_policies import review_mark
from tests.chat.helpers import sse_events, stream_of
from tests.conftest import Tenant
from tests.responses import streamed

pytestmark = pytest.mark.django_db


def rules_url(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/guard-rules/"


def put(tenant: Tenant, body: dict[str, Any], scope: str = "admin") -> Any:
    return tenant.client(scope).put(rules_url(tenant), body, format="json")


def chat(tenant: Tenant, path: str = "chat/", **body: Any) -> Any:
    body.setdefault("external_user_id", "u1")
    return tenant.client("chat").post(f"/api/v1/workspaces/{tenant.workspace.id}/{path}", body, format="json")


def reply(text: str, **extra: Any) -> str:
    return json.dumps({"type": "answer", "parts": [{"text": text, "passage": None}], **extra})


def test_rules_are_replaced_in_order_and_keep_their_ids(owner: Tenant) -> None:
    first = put(
        owner,
        {
            "rules": [
                {"pattern": "(?i)approved", "action": "block"},
                {"pattern": "refund", "applies_to": "answer"},
            ],
            "safe_reply": "A person will get back to you.",
        },
    )
    assert first.status_code == 200, first.json()
    rules = first.json()["data"]["rules"]
    assert [(r["position"], r["pattern"], r["action"], r["applies_to"]) for r in rules] == [
        (0, "(?i)approved", "block", "both"),
        (1, "refund", "flag", "answer"),
    ]
    assert first.json()["data"]["safe_reply"] == "A person will get back to you."
    kept = rules[1]["id"]
    second = put(owner, {"rules": [{"id": kept, "pattern": "refunds?"}, {"pattern": "x"}]})
    rules = second.json()["data"]["rules"]
    assert rules[0]["id"] == kept and rules[0]["pattern"] == "refunds?" and rules[0]["position"] == 0
    assert GuardRule.objects.filter(workspace=owner.workspace).count() == 2
    got = owner.client("admin").get(rules_url(owner)).json()["data"]
    assert [r["id"] for r in got["rules"]] == [r["id"] for r in rules]
    assert got["safe_reply"] == "A person will get back to you."


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"pattern": "(unclosed"}, "rules[0].pattern"),
        ({"pattern": ""}, "rules[0].pattern"),
        ({"pattern": "x" * 501}, "rules[0].pattern"),
        ({"pattern": "ok", "action": "delete"}, "rules[0].action"),
        ({"pattern": "ok", "applies_to": "everything"}, "rules[0].applies_to"),
    ],
)
def test_bad_rules_are_400_and_nothing_changes(owner: Tenant, rule: dict[str, Any], field: str) -> None:
    assert put(owner, {"rules": [{"pattern": "keep me"}]}).status_code == 200
    response = put(owner, {"rules": [rule]})
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert list(GuardRule.objects.values_list("pattern", flat=True)) == ["keep me"]


def test_chat_keys_and_outsiders_cannot_read_or_change_rules(owner: Tenant, outsider: Tenant) -> None:
    assert owner.client("chat").get(rules_url(owner)).status_code == 403
    assert put(owner, {"rules": []}, scope="chat").status_code == 403
    assert outsider.client("admin").get(rules_url(owner)).status_code == 404


def test_a_flagged_reply_is_returned_and_waits_for_review(owner: Tenant, scripted: ScriptedBackend) -> None:
    put(owner, {"rules": [{"pattern": "(?i)funds released"}]})
    rule_id = GuardRule.objects.get().id
    scripted.replies = [reply("Funds released today.")]
    assistant = chat(owner, message="Status?").json()["data"]["assistant_message"]
    assert assistant["content"] == "Funds released today."
    assert assistant["guard"] == {"action": "flag", "rule_ids": [str(rule_id)]}
    stored = Message.objects.get(id=assistant["id"])
    assert stored.review_status == "pending" and stored.guard_original is None
    assert review_mark(message_ids=[stored.id], reviewer="alice") == 1
    stored.refresh_from_db()
    assert stored.review_status == "reviewed" and stored.reviewed_by == "alice"


def test_a_blocked_reply_is_replaced_by_the_safe_reply_and_kept_for_review(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    put(owner, {"rules": [{"pattern": "approved", "action": "block"}], "safe_reply": "We will call you."})
    scripted.replies = [reply("Your claim is approved.")]
    assistant = chat(owner, message="Status?").json()["data"]["assistant_message"]
    assert assistant["content"] == "We will call you."
    assert assistant["response"]["parts"] == [{"text": "We will call you.", "source": None}]
    assert assistant["guard"]["action"] == "block"
    stored = Message.objects.get(id=assistant["id"])
    assert stored.guard_original is not None
    assert stored.guard_original["content"] == "Your claim is approved."
    # The next turn's history holds what the user saw, not the blocked text.
    data = chat(owner, message="Why?", session_id=str(stored.session_id)).json()["data"]
    assert "approved" not in json.dumps(scripted.calls[-1]["messages"][1:-1])
    assert data["assistant_message"]["guard"] is None


def test_rules_read_forms_with_their_labels_and_options(owner: Tenant, scripted: ScriptedBackend) -> None:
    put(owner, {"rules": [{"pattern": "(?i)password", "applies_to": "form"}]})
    form = {
        "type": "form",
        "question": "A few details, please.",
        "title": "Details",
        "fields": [
            {
                "name": "secret",
                "label": "Your password",
                "type": "text",
                "required": True,
                "placeholder": None,
                "options": None,
            }
        ],
    }
    scripted.replies = [json.dumps(form), reply("No password needed.")]
    assert chat(owner, message="Help").json()["data"]["assistant_message"]["guard"]["action"] == "flag"
    # The rule applies to forms only: an answer with the word passes.
    assert chat(owner, message="Again").json()["data"]["assistant_message"]["guard"] is None


def test_a_claims_check_answered_yes_flags_the_turn(owner: Tenant, scripted: ScriptedBackend) -> None:
    put(owner, {"rules": [], "claims": ["the user claims their claim is already approved"]})
    scripted.replies = [reply("I will check.", claims=[True]), reply("Sure.", claims=[False])]
    first = chat(owner, message="The agent said my claim is approved.").json()["data"]["assistant_message"]
    assert first["guard"] == {"action": "flag", "rule_ids": ["claim:1"]}
    # The model was asked: the schema requires the answers, the rules name the claim.
    call = scripted.calls[0]
    assert call["schema"]["anyOf"][0]["properties"]["claims"]["minItems"] == 1
    assert "the user claims their claim is already approved" in call["messages"][0]["content"]
    assert chat(owner, message="Thanks").json()["data"]["assistant_message"]["guard"] is None


@pytest.mark.django_db(transaction=True)
def test_a_blocking_guard_holds_the_stream_until_the_reply_is_checked(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    put(owner, {"rules": [{"pattern": "approved", "action": "block"}], "safe_reply": "We will call you."})
    scripted.replies = [reply("Your claim is approved.")]
    events = list(sse_events(stream_of(chat(owner, "chat/stream/", message="Status?"))))
    streamed = "".join(data["text"] for name, data in events if name == "delta")
    assert "approved" not in streamed
    assert streamed == events[-1][1]["content"] == "We will call you."
    assert events[-1][1]["guard"]["action"] == "block"


# 50 rules (the most a workspace may have), each exponential for a backtracking engine.
HOSTILE = [r"(?:[^abx!\n]|[^abx!\n])+\d{3}"] * 48 + [r"(q|qq)+z", r"(a|aa)+$|(x+x+)+y"]


def test_patterns_that_backtrack_are_saved_and_match_nothing_they_should_not(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    """Rules that are exponential for a backtracking engine run in linear time
    on RE2: they save, and a reply they do not match is not flagged (a timeout
    used to count as a match)."""
    saved = put(owner, {"rules": [{"pattern": p} for p in HOSTILE]})
    assert saved.status_code == 200, saved.json()
    text = " ".join(["Refunds are paid back within fourteen days of the return being received"] * 40)
    scripted.replies = [reply(text + "."), reply("Your code is q123.")]
    assert chat(owner, message="Status?").json()["data"]["assistant_message"]["guard"] is None
    # The rules still match what they describe.
    assert chat(owner, message="Code?").json()["data"]["assistant_message"]["guard"]["action"] == "flag"


@pytest.mark.parametrize(
    "pattern", [r"(a)\1", r"refund(?=ed)", r"(?<!no )refund", r"(?>a+)b", "a{1001}", "((a{100}){100}){100}"]
)
def test_patterns_that_need_backtracking_are_refused_naming_the_rule(owner: Tenant, pattern: str) -> None:
    response = put(owner, {"rules": [{"pattern": "fine"}, {"pattern": pattern}]})
    assert response.status_code == 400
    message = response.json()["error"]["fields"]["rules[1].pattern"][0]
    assert "RE2" in message
    assert "rules[0].pattern" not in response.json()["error"]["fields"]
    assert not GuardRule.objects.exists()


def test_a_stored_rule_the_engine_refuses_is_skipped_with_a_warning(
    owner: Tenant, scripted: ScriptedBackend, caplog: pytest.LogCaptureFixture
) -> None:
    """A rule saved before the guard ran on RE2 (a lookahead) is left out of
    the turn, not counted as a match; the other rules still apply."""
    put(owner, {"rules": [{"pattern": "approved"}]})
    old = GuardRule.objects.create(workspace=owner.workspace, position=1, pattern="refund(?=ed)")
    scripted.replies = [reply("It is refunded and approved.")]
    with caplog.at_level("WARNING", logger="chat.services.guard_policies"):
        guard = chat(owner, message="Status?").json()["data"]["assistant_message"]["guard"]
    assert guard["rule_ids"] == [str(GuardRule.objects.get(position=0).id)]
    assert str(old.id) in caplog.text


def test_the_transcript_export_carries_guard_degraded_and_provenance(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    put(owner, {"rules": [{"pattern": "approved"}]})
    scripted.replies = [reply("It is approved.")]
    chat(owner, message="Status?")
    body = streamed(owner.client("admin").get(f"/api/v1/workspaces/{owner.workspace.id}/transcripts/"))
    message = json.loads(body.decode().splitlines()[0])["messages"][1]
    assert message["guard"]["action"] == "flag"
    assert message["degraded"] is False and len(message["provenance"]["messages_hash"]) == 64
