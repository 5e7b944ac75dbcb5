"""A JSONL or CSV body of test items, read line by line into rows
(docs/evaluation.md, "Import"). Whatever makes a line unreadable is a 400
naming it (``fields.line``), never a 500:

- bytes that are not UTF-8 (a UTF-8 byte-order mark before the first line
  is read past, as spreadsheets write one);
- a NUL byte (PostgreSQL text cannot hold one);
- a line longer than one item's request body may be
  (``MAX_JSON_BODY_BYTES``: a line is one item);
- JSON nested deeper than the API takes (``daneshyar.parsers``: Python's
  decoder recursed into a ``RecursionError``), or a number of more digits
  than Python converts (its int-string limit raised a ``ValueError``);
- a CSV field longer than the ``csv`` module's limit (``_csv.Error``), or
  any other CSV error.

Lines are separated by "\\n" (a "\\r" before it is dropped), and nothing
else: a JSON string may hold U+2028, which ``str.splitlines`` would have
split. Nothing is validated as an item or stored here (evaluations/items.py).
"""

from __future__ import annotations

import codecs
import csv
import json
import sys
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError

from daneshyar.exceptions import ValidationFailed
from daneshyar.parsers import json_loads

MAX_IMPORT_BYTES = 2 * 1024 * 1024
CSV_COLUMNS = ("question", "expected_resource_ids", "expected_answer", "expected_outcome")

Row = tuple[int, Any]


def line_error(number: int, fields: dict[str, Any]) -> ValidationFailed:
    """The 400 of an import whose line ``number`` is bad: ``fields`` says why."""
    return ValidationFailed(
        f"Line {number} is invalid; nothing was imported.", fields={"line": [str(number)], **fields}
    )


def _refused(number: int, reason: str) -> ValidationFailed:
    return line_error(number, {"content": [reason]})


def _line(number: int, raw: bytes, limit: int) -> str:
    """One line's bytes as text, or the 400 that names it."""
    if len(raw) > limit:
        raise _refused(number, f"A line is at most {limit:,} bytes (MAX_JSON_BODY_BYTES).")
    if b"\x00" in raw:
        raise _refused(number, "The line holds a NUL byte.")
    try:
        return raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise _refused(number, f"Not UTF-8 text (the byte at column {exc.start + 1}).") from None


def body_lines(body: bytes) -> list[tuple[int, str]]:
    """The body's lines, numbered from 1, each checked and decoded."""
    if len(body) > MAX_IMPORT_BYTES:
        raise ValidationFailed(f"An import is at most {MAX_IMPORT_BYTES} bytes.")
    limit = settings.MAX_JSON_BODY_BYTES
    body = body.removeprefix(codecs.BOM_UTF8)
    return [(number, _line(number, raw, limit)) for number, raw in enumerate(body.split(b"\n"), start=1)]


def _json(number: int, text: str) -> Any:
    try:
        return json_loads(text)
    except ParseError as exc:
        raise _refused(number, str(exc.detail)) from None
    except json.JSONDecodeError as exc:
        raise _refused(number, f"Not JSON: {exc.msg}.") from None
    except ValueError:
        # Python converts integers of at most this many digits (int-string limit).
        digits = sys.get_int_max_str_digits()
        raise _refused(number, f"A number has more than {digits:,} digits.") from None


def jsonl_rows(lines: list[tuple[int, str]]) -> Iterator[Row]:
    """Each non-blank line's JSON value (an item when it is an object)."""
    for number, text in lines:
        if text.strip():
            yield number, _json(number, text)


def _csv_fields(header: list[str], values: list[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {name: value for name, value in zip(header, values, strict=False) if value}
    ids = fields.pop("expected_resource_ids", "")
    fields["expected_resource_ids"] = ids.replace(";", " ").split()
    return fields


def csv_rows(lines: list[tuple[int, str]]) -> Iterator[Row]:
    """Each data row under the header, as an item's fields (blank rows skipped);
    a row's number is the line it ends on."""
    reader = csv.reader(f"{text}\n" for _, text in lines)
    try:
        header = next(reader, [])
        if "question" not in header or any(name not in CSV_COLUMNS for name in header):
            raise _refused(1, f"The header must name columns among {', '.join(CSV_COLUMNS)}.")
        for values in reader:
            if len(values) > len(header):
                raise _refused(reader.line_num, "More values than columns.")
            if values:
                yield reader.line_num, _csv_fields(header, values)
    except csv.Error as exc:
        # A field over csv.field_size_limit() (131,072 characters), say.
        raise _refused(reader.line_num, f"Not CSV: {exc}.") from None


def import_rows(body: bytes, *, csv_format: bool) -> Iterator[Row]:
    """The body's rows, numbered by their lines; the first bad line is a 400."""
    lines = body_lines(body)
    return csv_rows(lines) if csv_format else jsonl_rows(lines)
