"""PII redaction of transcript text.

A *redactor* is any callable ``text -> (redacted_text, findings)`` where
``findings`` maps a kind (``"email"``, ``"phone"``, ...) to how many times it
was replaced. The export visits message *content* only (see
:func:`chat.transcripts.traversal.redact_message` for the exact boundary) and
feeds each text value to the redactor; ids, roles, order, timestamps, sources
and other metadata are never shown to it, so they cannot be altered.

:class:`RuleRedactor` is the default: deterministic regular expressions, no
model, no network. Another implementation (a local NER model, say) only has to
honour the same signature.

A :class:`chat.transcripts.traversal.RedactionReport` collects counts and
*structural* paths (``sessions[3].messages[2].content``), never the original
or the replacement text, so the report itself can be logged or shared.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping

Findings = Mapping[str, int]
Redactor = Callable[[str], tuple[str, Findings]]

PLACEHOLDERS: dict[str, str] = {
    "email": "[EMAIL]",
    "iban": "[IBAN]",
    "dob": "[DOB]",
    "national_id": "[NATIONAL_ID]",
    "phone": "[PHONE]",
    "number": "[NUMBER]",
}

# Kinds that make an ``external_user_id`` personal data: with ``redact=pii``
# such an id is exported as its pseudonym (a long number alone, a customer
# number say, is an id like any other and stays).
PII_ID_KINDS = frozenset({"email", "phone", "iban", "national_id"})

# Plain digit runs at least this long are treated as account, card or policy numbers.
MIN_NUMBER_DIGITS = 8
# E.164 allows at most 15 digits; fewer than 7 is not a reachable phone number.
PHONE_DIGITS = range(7, 16)

# The at signs people (and keyboards) type: ASCII, fullwidth, small.
_AT_SIGNS = "@\uff20\ufe6b"
# Local part and domain in any script (``jöhn.doe@bücher.de``): the whole
# address goes, never just its ASCII tail. The top-level domain is letters.
_EMAIL = re.compile(rf"[\w.%+-]+[{_AT_SIGNS}][\w-]+(?:\.[\w-]+)*\.[^\W\d_]{{2,}}")
# A space between digit groups: ASCII, or the no-break spaces word processors
# and phones put in numbers (U+00A0, the narrow U+202F, figure U+2007, thin U+2009).
_SPACE = "[ \u00a0\u2007\u2009\u202f]"
# Country code, check digits, then 11-30 alphanumerics, optionally in groups
# separated by single spaces. Greedy: the match is trimmed until the mod-97
# check passes (so a trailing word in capitals is not swallowed).
_IBAN = re.compile(rf"(?<![A-Za-z0-9])[A-Za-z]{{2}}\d\d(?:{_SPACE}?[A-Za-z0-9]){{11,30}}")
# A run of digits, possibly "+country", "(area)" and single space/dash
# separators between groups of two or more digits. Classified afterwards.
# The leading lookahead lets the engine skip non-candidates cheaply.
_SEP = rf"(?:{_SPACE}|-)"
_DIGITS = re.compile(
    rf"(?=[\d+(])(?<![\d+])(?:\+\d{{1,3}}{_SEP}?)?(?:\(\d{{1,5}}\){_SEP}?)?\d+(?:{_SEP}\d{{2,}})*(?!\d)"
)
# Four groups of four digits (a card) joined by dots or slashes, one kind
# throughout: a long number (dates and addresses never have four such groups).
_CARD_DOTTED = re.compile(r"(?<![\w.,/-])\d{4}(?P<sep>[./])\d{4}(?:(?P=sep)\d{4}){2}(?![\w]|[.,/-]\d)")
# Phones written the French way (06.12.34.56.78: five pairs, the first 0x)
# and the German way with a slash after the area code (0171/1234567).
_PAIR_SEP = rf"(?:[.-]|{_SPACE})"
_PHONE_PAIRS = re.compile(rf"(?<![\w.,/-])0[1-9](?:{_PAIR_SEP}\d{{2}}){{4}}(?![\w]|[.,/-]\d)")
_PHONE_SLASH = re.compile(rf"(?<![\w.,/-])0\d{{2,4}}/\d{{3,8}}(?:{_SEP}\d{{2,}})?(?![\w/]|[.,-]\d)")
_ANY_DIGIT = re.compile(r"\d")
# Phone numbers written with dots or dashes the digit rule above does not
# join: 555.123.4567, 555-123-4567 (+1 optional), and 7-digit local numbers
# 555-1234 / 555.1234 / 555 1234 (first digit 2-9, as exchange codes are; not
# a range of quantities: "250-3000 mg"; not two groups of a longer number).
_PHONE_DOTTED = re.compile(
    r"(?<![\w.-])(?:\+?1[ .-])?(?:\(\d{3}\) ?|\d{3}[.-])\d{3}[.-]\d{4}(?!\w|[.,-]\d)"
    rf"|(?<![\w.,$€£-])(?<!\d{_SPACE})[2-9]\d{{2}}(?:[.-]|{_SPACE})\d{{4}}(?!\w|[.,-]\d|{_SPACE}\d)"
    r"(?!\s*(?:%|mg|ml|kg|km|g\b|m\b|euros?|dollars?|usd|eur|units?))",
    re.IGNORECASE,
)
# US social security numbers (area not 000, 666 or 9xx; group not 00; serial
# not 0000) and UK National Insurance numbers: national ids, their own kind.
_SSN = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")
_UK_NI = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])")
# A date of birth, when it is labelled as one (a bare date stays: it may be an
# appointment or a policy date).
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? {_MONTH},? \d{{4}}|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}})"
)
_DOB = re.compile(
    r"(?P<label>\b(?:d\.?o\.?b\.?|date of birth|birth ?date|born(?: on)?|geboren(?: am)?)\s*[:=-]?\s*)"
    rf"(?P<date>{_DATE})",
    re.IGNORECASE,
)
# A message may quote a resource id: digits inside a UUID are not a number.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# ISBN-13 with its hyphens: a book, not a person.
_ISBN = re.compile(r"(?<!\d)97[89][- ]\d{1,5}[- ]\d{1,7}[- ]\d{1,7}[- ][\dX](?![\dX])")
_YEAR_RANGE = re.compile(r"(?:19|20)\d\d ?- ?(?:19|20)\d\d")
# An amount with no-break spaces between thousands (1 250 000 in French
# typography): kept. (With ASCII spaces such a run still counts as a phone.)
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:[\u00a0\u2007\u2009\u202f]\d{3})+")


def _iban_valid(candidate: str) -> bool:
    compact = re.sub(_SPACE, "", candidate).upper()
    if not 15 <= len(compact) <= 34 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    try:
        return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1
    except ValueError:
        return False


def _classify_digits(candidate: str) -> str | None:
    """``"phone"``, ``"number"`` or None (keep) for a run matched by ``_DIGITS``."""
    if _ISO_DATE.fullmatch(candidate) or _YEAR_RANGE.fullmatch(candidate) or _THOUSANDS.fullmatch(candidate):
        return None
    digits = sum(ch.isdigit() for ch in candidate)
    groups = len(re.findall(r"\d+", candidate))
    formatted = candidate.startswith("+") or "(" in candidate or groups >= 3
    if formatted and digits in PHONE_DIGITS:
        return "phone"
    if digits >= MIN_NUMBER_DIGITS:
        return "number"
    return None


def _inside_uuid(match: re.Match[str]) -> bool:
    return _inside(_UUID, match)


def _inside(pattern: re.Pattern[str], match: re.Match[str]) -> bool:
    """Whether ``match`` lies within a match of ``pattern`` (an id that is not personal)."""
    start, end = match.span()
    window_start = max(0, start - 36)
    for outer in pattern.finditer(match.string, window_start, end + 36):
        if outer.start() <= start and end <= outer.end():
            return True
    return False


class _Substitutions:
    """The replacement functions of one redaction pass; each counts the kind it
    replaced into ``found``."""

    def __init__(self) -> None:
        self.found: Counter[str] = Counter()

    def email(self, match: re.Match[str]) -> str:
        self.found["email"] += 1
        return PLACEHOLDERS["email"]

    def iban(self, match: re.Match[str]) -> str:
        candidate = match.group(0)
        for end in range(len(candidate), 14, -1):
            head = candidate[:end]
            if not head[-1].isspace() and _iban_valid(head):
                self.found["iban"] += 1
                return PLACEHOLDERS["iban"] + candidate[end:]
        return candidate

    def dob(self, match: re.Match[str]) -> str:
        self.found["dob"] += 1
        return match.group("label") + PLACEHOLDERS["dob"]

    def number(self, match: re.Match[str]) -> str:
        self.found["number"] += 1
        return PLACEHOLDERS["number"]

    def national_id(self, match: re.Match[str]) -> str:
        self.found["national_id"] += 1
        return PLACEHOLDERS["national_id"]

    def phone(self, match: re.Match[str]) -> str:
        if _inside_uuid(match):
            return match.group(0)
        self.found["phone"] += 1
        return PLACEHOLDERS["phone"]

    def digits(self, match: re.Match[str]) -> str:
        # Too short to be a phone or a long number (the common case: "14 days").
        if match.end() - match.start() < min(PHONE_DIGITS.start, MIN_NUMBER_DIGITS):
            return match.group(0)
        if _inside_uuid(match) or _inside(_ISBN, match):
            return match.group(0)
        kind = _classify_digits(match.group(0))
        if kind is None:
            return match.group(0)
        self.found[kind] += 1
        return PLACEHOLDERS[kind]


class RuleRedactor:
    """Rule-based redactor for e-mail addresses, IBANs, labelled dates of
    birth, national ids (US SSN, UK NI), phone numbers and long digit runs.

    Rules run in that order, so an e-mail's or an IBAN's digits are never
    counted twice. Placeholders contain no digits or ``@``, so a later rule
    never matches a placeholder.
    """

    def __call__(self, text: str) -> tuple[str, Findings]:
        run = _Substitutions()
        # Cheap gates first: most chat text has no "@" and many have no digit.
        if any(at in text for at in _AT_SIGNS):
            text = _EMAIL.sub(run.email, text)
        if _ANY_DIGIT.search(text):
            text = _IBAN.sub(run.iban, text)
            text = _DOB.sub(run.dob, text)
            text = _SSN.sub(run.national_id, text)
            text = _UK_NI.sub(run.national_id, text)
            text = _CARD_DOTTED.sub(run.number, text)
            text = _PHONE_PAIRS.sub(run.phone, text)
            text = _PHONE_SLASH.sub(run.phone, text)
            text = _PHONE_DOTTED.sub(run.phone, text)
            text = _DIGITS.sub(run.digits, text)
        return text, run.found


default_redactor: Redactor = RuleRedactor()
