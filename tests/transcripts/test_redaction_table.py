"""The redactor against a table: personal data that must go (each of the
kinds it claims) and numbers that must survive (years, prices, counts, ISO
dates, times, doses, versions). Prints precision and recall; the goal is
0.98 or better on both."""

from __future__ import annotations

from chat.transcripts.redaction import PLACEHOLDERS, RuleRedactor

# (text, the personal datum in it, its kind)
POSITIVE: list[tuple[str, str, str]] = [
    ("Write to jane.doe@example.org please.", "jane.doe@example.org", "email"),
    ("my mail is J.Smith+claims@mail.co.uk", "J.Smith+claims@mail.co.uk", "email"),
    ("cc: ops-team@sub.example.com.", "ops-team@sub.example.com", "email"),
    ("contact a_b@x.io", "a_b@x.io", "email"),
    ("email: first.last@company.travel", "first.last@company.travel", "email"),
    ("IBAN DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00", "iban"),
    ("iban GB82WEST12345698765432.", "GB82WEST12345698765432", "iban"),
    ("pay to FR1420041010050500013M02606", "FR1420041010050500013M02606", "iban"),
    ("NL91 ABNA 0417 1643 00 is mine", "NL91 ABNA 0417 1643 00", "iban"),
    ("account NL91ABNA0417164300", "NL91ABNA0417164300", "iban"),
    ("call 555.123.4567 now", "555.123.4567", "phone"),
    ("call 555-123-4567 now", "555-123-4567", "phone"),
    ("my cell (555) 123-4567", "(555) 123-4567", "phone"),
    ("phone +1 555 123 4567", "+1 555 123 4567", "phone"),
    ("ring +44 20 7946 0958 today", "+44 20 7946 0958", "phone"),
    ("office (030) 1234 5678", "(030) 1234 5678", "phone"),
    ("at 555-1234 after five", "555-1234", "phone"),
    ("dial 867.5309 now", "867.5309", "phone"),
    ("reach me on 555 123 4567", "555 123 4567", "phone"),
    ("Tel: +49 30 1234567", "+49 30 1234567", "phone"),
    ("mobile +31 6 1234 5678", "+31 6 1234 5678", "phone"),
    ("call 1-555-123-4567", "1-555-123-4567", "phone"),
    ("number 212.555.0199.", "212.555.0199", "phone"),
    ("fax 020 7946 0958", "020 7946 0958", "phone"),
    ("try 555-0199", "555-0199", "phone"),
    ("+33 1 23 45 67 89 is my line", "+33 1 23 45 67 89", "phone"),
    ("SSN 123-45-6789", "123-45-6789", "national_id"),
    ("my social security number is 219-09-9999.", "219-09-9999", "national_id"),
    ("ssn: 078-05-1120", "078-05-1120", "national_id"),
    ("NI number QQ 12 34 56 C", "QQ 12 34 56 C", "national_id"),
    ("NINO AB123456C on file", "AB123456C", "national_id"),
    ("national insurance: JG 10 37 58 A", "JG 10 37 58 A", "national_id"),
    ("his NI is CE 12 34 56 D.", "CE 12 34 56 D", "national_id"),
    ("SSN 536-22-1111 attached", "536-22-1111", "national_id"),
    ("DOB: 1980-05-17", "1980-05-17", "dob"),
    ("date of birth 17/05/1980", "17/05/1980", "dob"),
    ("born on 5 May 1980", "5 May 1980", "dob"),
    ("Date of Birth: May 5, 1980", "May 5, 1980", "dob"),
    ("D.O.B. 05-17-1980", "05-17-1980", "dob"),
    ("birthdate 1975-12-01, member since 2001", "1975-12-01", "dob"),
    ("I was born 3rd March 1990.", "3rd March 1990", "dob"),
    ("dob=12.08.1965", "12.08.1965", "dob"),
    ("Date of birth - 1 January 2000", "1 January 2000", "dob"),
    ("born on Sept 9, 1999", "Sept 9, 1999", "dob"),
    ("card 4111 1111 1111 1111", "4111 1111 1111 1111", "number"),
    ("card 4111-1111-1111-1111!", "4111-1111-1111-1111", "number"),
    ("policy 88812345678", "88812345678", "number"),
    ("account 12345678901", "12345678901", "number"),
    ("member no. 4002000123", "4002000123", "number"),
    ("policy POL-3201456789012345", "3201456789012345", "number"),
    ("claim 2024000123456", "2024000123456", "number"),
    ("passport 123456789", "123456789", "number"),
    ("ref 98765432", "98765432", "number"),
    ("card 5500 0000 0000 0004 expires", "5500 0000 0000 0004", "number"),
    ("id 0012345678", "0012345678", "number"),
    ("tracking 9400111899223100012345", "9400111899223100012345", "number"),
    ("email Bob@Example.COM or call 555.987.6543", "555.987.6543", "phone"),
    ("write to bob@example.com", "bob@example.com", "email"),
    ("her line: 310-555-0147", "310-555-0147", "phone"),
    ("DOB 1/2/1983", "1/2/1983", "dob"),
    ("SSN: 001-01-0001", "001-01-0001", "national_id"),
    ("IBAN: BE68539007547034", "BE68539007547034", "iban"),
    ("whatsapp +91 98765 43210", "+91 98765 43210", "phone"),
]

NEGATIVE: list[str] = [
    "Claims are paid within 30 days, up to 1500000 EUR, since 2024.",
    "On 2024-01-15 at 10:30 the rate was 3.75%.",
    "Resource 0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10 has 12 pages.",
    "Send the form; no personal data here.",
    "The policy runs from 2019-2021 and was renewed in 2022.",
    "Patients aged 65-70 should aim for 140 mmHg.",
    "Take 250-3000 mg a day, as prescribed.",
    "Blood pressure 130/80 mmHg is the target.",
    "It costs $1,299.00 or 1.299,00 EUR.",
    "Version 1.2.3 fixed it; see release 2.10.0.",
    "Server 192.168.1.1 answered in 12 ms.",
    "The answer cites 5 passages from 3 documents.",
    "Meeting at 14:45 on 2026-11-30.",
    "Room 101, floor 3, building 7.",
    "We saw 12,345 visits in 2023.",
    "The ratio is 3.14159.",
    "Call us between 9 and 17 on weekdays.",
    "Item 4 of 12 is missing.",
    "Deductible: 500 EUR per year.",
    "Up to 80% is covered after 6 months.",
    "Section 3.2.1 explains it.",
    "The 2026 tariff starts 1 January.",
    "Rates rose 2.5% in Q3 2024.",
    "ICD-10 code I10 covers hypertension.",
    "Form W-2 is due by January 31.",
    "We had 1,000,000 users.",
    "A 75 year old patient needs 150 mmHg.",
    "Dose: 0.5 ml twice a day.",
    "Flight LH 1234 lands at 18:05.",
    "Page 7 of the 2025 guide.",
    "The claim was filed on 2024-03-01 and paid on 2024-03-29.",
    "Appointment on 12/05/2026 at 10:00.",
    "Order #12345 shipped.",
    "Revenue was 4.2 million in 2024.",
    "Temperature 37.5 C, pulse 72.",
    "Ages 18-25 pay less.",
    "Use grade 80-120 sandpaper.",
    "Between 2015 and 2020 claims doubled.",
    "Invoice 2024-117 is open.",
    "The limit is 25 MB per file.",
    "Score: 0.745 nDCG@10.",
    "Top 5, widened 15, plus 3 per resource.",
    "Chapter 12, verse 3.",
    "Latency p95 38 ms at 100k passages.",
    "Visits cost 10 euros at the front desk.",
    "The years 1999, 2000 and 2001 were audited.",
    "Coverage of 90.5% for 2 years.",
    "Price went from 199 to 249.",
    "Serial number format: AA-000.",
    "Call the front desk for help.",
    "He is 42 years old.",
    "Height 180 cm, weight 75 kg.",
    "The window is 16384 tokens.",
    "In 1980 the clinic opened.",
    "Keep 3-5 days of medication.",
    "The map is at 1:50000 scale.",
    "HTTP 503 means try again.",
    "Session 4 of 20 turns.",
    "Born in 1980, she joined in 2010.",
    "Results from 2020-2024 are pooled.",
    "ISBN 978-3-16-148410-0 is the book.",
    "Coordinates 52.5200, 13.4050.",
]


def test_redaction_table_precision_and_recall() -> None:
    redact = RuleRedactor()
    true_positive = false_negative = false_positive = 0
    misses: list[str] = []
    for text, datum, kind in POSITIVE:
        out, _ = redact(text)
        if datum not in out and PLACEHOLDERS[kind] in out:
            true_positive += 1
        else:
            false_negative += 1
            misses.append(f"missed {kind}: {text!r} -> {out!r}")
    for text in NEGATIVE:
        out, _ = redact(text)
        if out != text:
            false_positive += 1
            misses.append(f"changed: {text!r} -> {out!r}")
    precision = true_positive / max(true_positive + false_positive, 1)
    recall = true_positive / max(true_positive + false_negative, 1)
    print(
        f"\nredaction table: {len(POSITIVE)} positive, {len(NEGATIVE)} negative; "
        f"precision {precision:.3f}, recall {recall:.3f}"
    )
    for line in misses:
        print("  " + line)
    assert len(POSITIVE) >= 60 and len(NEGATIVE) >= 60
    assert precision >= 0.98 and recall >= 0.98, misses
