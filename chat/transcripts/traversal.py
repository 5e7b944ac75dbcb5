"""What of an exported transcript a redactor is shown, and the report of
what it changed: :func:`redact_message` visits a message's text values (the
exact boundary is in its docstring) and hands each to the redactor
(chat/transcripts/redaction.py) through :func:`redact_text`; a
:class:`RedactionReport` counts the replacements per kind and keeps the
structural path of every value that changed, never the text itself."""

from __future__ import annotations

from collections import Counter
from typing import Any

from chat.transcripts.redaction import Findings, Redactor


class RedactionReport:
    """Counts per kind and the structural paths of every value that changed.

    Paths are capped at ``max_paths`` so that the report stays bounded however
    large the export; ``paths_truncated`` says how many were left out.
    """

    def __init__(self, *, max_paths: int = 10_000) -> None:
        self.counts: Counter[str] = Counter()
        self.paths: list[str] = []
        self.paths_truncated = 0
        self.max_paths = max_paths

    def add(self, path: str, findings: Findings) -> None:
        total = 0
        for kind, count in findings.items():
            if count:
                self.counts[kind] += count
                total += count
        if not total:
            return
        if len(self.paths) < self.max_paths:
            self.paths.append(path)
        else:
            self.paths_truncated += 1

    def as_line(self) -> dict[str, Any]:
        line: dict[str, Any] = {
            "type": "report",
            "counts": dict(sorted(self.counts.items())),
            "paths": self.paths,
        }
        if self.paths_truncated:
            line["paths_truncated"] = self.paths_truncated
        return line


def redact_text(value: str, *, path: str, redactor: Redactor, report: RedactionReport) -> str:
    redacted, findings = redactor(value)
    report.add(path, findings)
    return redacted


def redact_message(
    message: dict[str, Any], *, path: str, redactor: Redactor, report: RedactionReport
) -> dict[str, Any]:
    """A copy of an exported message with its text redacted; the input is not mutated.

    Visited: ``content`` (a string), each ``response.parts[i].text`` (the
    answer's claims and a form's question text), a form's ``title`` and each
    field's ``label``, ``placeholder``, ``options`` and ``choices`` labels (text the model wrote),
    and each feedback ``comment`` (free text typed by the end user).
    Everything else (``id``, ``role``, ``created_at``, ``response.type``, a
    field's ``name``, ``type`` and ``required``, every ``source``, a reply's
    ``access``, feedback ratings and user ids) is copied by reference, untouched.
    """
    out = dict(message)
    content = message.get("content")
    if isinstance(content, str):
        out["content"] = redact_text(content, path=f"{path}.content", redactor=redactor, report=report)
    response = message.get("response")
    if isinstance(response, dict) and isinstance(response.get("parts"), list):
        parts: list[Any] = []
        for index, part in enumerate(response["parts"]):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part = dict(part)
                part["text"] = redact_text(
                    part["text"],
                    path=f"{path}.response.parts[{index}].text",
                    redactor=redactor,
                    report=report,
                )
            parts.append(part)
        out["response"] = {**response, "parts": parts}
        form = response.get("form")
        if isinstance(form, dict):
            out["response"]["form"] = _redact_form(form, f"{path}.response.form", redactor, report)
    feedback = message.get("feedback")
    if isinstance(feedback, list):
        items: list[Any] = []
        for index, item in enumerate(feedback):
            if isinstance(item, dict) and isinstance(item.get("comment"), str) and item["comment"]:
                item = dict(item)
                item["comment"] = redact_text(
                    item["comment"],
                    path=f"{path}.feedback[{index}].comment",
                    redactor=redactor,
                    report=report,
                )
            items.append(item)
        out["feedback"] = items
    return out


def _redact_form(
    form: dict[str, Any], path: str, redactor: Redactor, report: RedactionReport
) -> dict[str, Any]:
    out = dict(form)
    if isinstance(form.get("title"), str):
        out["title"] = redact_text(form["title"], path=f"{path}.title", redactor=redactor, report=report)
    fields = form.get("fields")
    if isinstance(fields, list):
        redacted: list[Any] = []
        for index, field in enumerate(fields):
            if isinstance(field, dict):
                field = dict(field)
                here = f"{path}.fields[{index}]"
                for key in ("label", "placeholder"):
                    if isinstance(field.get(key), str):
                        field[key] = redact_text(
                            field[key], path=f"{here}.{key}", redactor=redactor, report=report
                        )
                if isinstance(field.get("options"), list):
                    field["options"] = [
                        redact_text(option, path=f"{here}.options[{n}]", redactor=redactor, report=report)
                        if isinstance(option, str)
                        else option
                        for n, option in enumerate(field["options"])
                    ]
                if isinstance(field.get("choices"), list):
                    field["choices"] = [
                        {
                            **choice,
                            "label": redact_text(
                                choice["label"],
                                path=f"{here}.choices[{n}].label",
                                redactor=redactor,
                                report=report,
                            ),
                        }
                        if isinstance(choice, dict) and isinstance(choice.get("label"), str)
                        else choice
                        for n, choice in enumerate(field["choices"])
                    ]
            redacted.append(field)
        out["fields"] = redacted
    return out
