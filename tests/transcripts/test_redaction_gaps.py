# ruff: noqa: RUF001  (fullwidth at signs and Turkish letters are the point)
"""``redact=pii`` on the forms personal data takes in real text: cards and
IBANs with dots, slashes or no-break spaces, local and European phone
formats, e-mail addresses in other scripts or with a fullwidth at sign — each
wholly replaced — and an ``external_user_id`` that is itself contact data.
Ordinary numbers and dates beside them stay."""

from __future__ import annotations

import pytest

from chat.transcripts.redaction import PLACEHOLDERS, RuleRedactor
from tests.conftest import Tenant
from tests.transcripts.conftest import export
from tests.transcripts.factories import conversation, feedback

pytestmark = pytest.mark.django_db

NBSP, NNBSP = "\u00a0", "\u202f"

# (text, the personal datum in it, its kind)
MUST_GO: list[tuple[str, str, str]] = [
    ("card 4111.1111.1111.1111 please", "4111.1111.1111.1111", "number"),
    ("card 4111/1111/1111/1111.", "4111/1111/1111/1111", "number"),
    (f"card 4111{NBSP}1111{NBSP}1111{NBSP}1111", f"4111{NBSP}1111{NBSP}1111{NBSP}1111", "number"),
    (f"card 4111{NNBSP}1111{NNBSP}1111{NNBSP}1111 ok", f"4111{NNBSP}1111{NNBSP}1111{NNBSP}1111", "number"),
    (f"IBAN DE89{NBSP}3704{NBSP}0044{NBSP}0532{NBSP}0130{NBSP}00 thanks", "0532", "iban"),
    (f"IBAN DE89{NNBSP}3704{NNBSP}0044{NNBSP}0532{NNBSP}0130{NNBSP}00", "0044", "iban"),
    (f"tel +49{NBSP}30{NBSP}1234{NBSP}5678", f"1234{NBSP}5678", "phone"),
    (f"ring 030{NNBSP}1234{NNBSP}5678 today", f"1234{NNBSP}5678", "phone"),
    (f"+33{NBSP}6{NBSP}12{NBSP}34{NBSP}56{NBSP}78 is mine", f"34{NBSP}56", "phone"),
    ("call 555 1234 after five", "555 1234", "phone"),
    (f"call 555{NBSP}1234", f"555{NBSP}1234", "phone"),
    ("mon portable 06.12.34.56.78", "06.12.34.56.78", "phone"),
    ("mobil 0171/1234567, abends", "0171/1234567", "phone"),
    ("Tel. 030/1234567-89", "030/1234567-89", "phone"),
    ("mail info@bücher.de bitte", "bücher", "email"),
    ("john＠example.com wrote", "john", "email"),
    ("from jöhn.doe@example.com", "jö", "email"),
    ("Ünal.Çelik@örnek.com.tr yazdı", "Ünal", "email"),
    ("письмо иван@пример.рф", "иван", "email"),
]

MUST_STAY = [
    "Claims are paid within 30 days, up to 1500000 EUR, since 2024.",
    f"Le montant est de 1{NNBSP}250{NNBSP}000 € au 30.06.2026.",
    f"Nous avons 12{NBSP}500 adhérents.",
    "Le 06.12.2024 à 10h30, puis le 07.12.2024.",
    "Dates 01.02.2025 and 03.04.2025.",
    "Version 10.0.19045.3803 is installed.",
    "IP 10.0.0.1/24 is the gateway.",
    "Score 3/4 on 2024/05/12, page 12/2024.",
    "Blood pressure 130/80 mmHg is the target.",
    "Order 250 units by 2025.",
    "Up to 200 2000 m elevation.",
    "Take 250-3000 mg a day.",
    "It costs $1,299.00 or 1.299,00 EUR.",
    "Ticket 0123/45 is closed.",
    "user@localhost is not an address; neither is a @ b.com.",
    "Room 0171, floor 3.",
]


@pytest.mark.parametrize(("text", "datum", "kind"), MUST_GO, ids=[t for t, _, _ in MUST_GO])
def test_personal_data_is_wholly_replaced(text: str, datum: str, kind: str) -> None:
    out, findings = RuleRedactor()(text)
    assert datum not in out, out
    assert PLACEHOLDERS[kind] in out, out
    assert findings[kind] == 1


@pytest.mark.parametrize("text", MUST_STAY)
def test_ordinary_numbers_and_dates_stay(text: str) -> None:
    assert RuleRedactor()(text)[0] == text


def test_every_email_form_is_redacted_in_full() -> None:
    for text, expected in (
        ("from jöhn.doe@example.com", "from [EMAIL]"),
        ("john＠example.com wrote", "[EMAIL] wrote"),
        ("mail info@bücher.de bitte", "mail [EMAIL] bitte"),
    ):
        assert RuleRedactor()(text)[0] == expected


def test_an_end_user_id_that_is_contact_data_is_pseudonymized(owner: Tenant) -> None:
    """With redact=pii, an external_user_id that is an e-mail address or a
    phone number is exported as its pseudonym (the one pseudonymize=true
    gives: an end user's sessions still group), in the session line and in
    feedback; an opaque id, even a long number, stays."""
    _, messages = conversation(owner.workspace, external_user_id="alice@example.org")
    feedback(messages[1], comment="fine")
    conversation(owner.workspace, external_user_id="+49 30 1234 5678")
    conversation(owner.workspace, external_user_id="cust-0042")
    conversation(owner.workspace, external_user_id="12345678901")
    _, redacted = export(owner.client(), owner.workspace.id, redact="pii")
    _, pseudonymous = export(owner.client(), owner.workspace.id, pseudonymize="true")
    users = [line["external_user_id"] for line in redacted[:-1]]
    assert users[2:] == ["cust-0042", "12345678901"]
    assert users[:2] == [line["external_user_id"] for line in pseudonymous[:2]]
    assert all(user.startswith("u_") for user in users[:2])
    assert redacted[0]["messages"][1]["feedback"][0]["external_user_id"] == users[0]
    report = redacted[-1]
    assert report["counts"] == {"email": 2, "phone": 1}
    assert "sessions[0].external_user_id" in report["paths"]
    assert "sessions[0].messages[1].feedback[0].external_user_id" in report["paths"]
    assert "alice@example.org" not in str(redacted)
    # Without redact=pii, ids are exported as they are.
    _, plain = export(owner.client(), owner.workspace.id)
    assert plain[0]["external_user_id"] == "alice@example.org"
