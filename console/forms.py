"""Forms of the console's pages. Their errors are shown beside the fields
and the page answers 400."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import RegexValidator

from console.playground import LABEL_MAX_CHARS, LABEL_PATTERN
from daneshyar.exceptions import ApplicationError
from resources.models import Resource, ResourceStatus
from resources.selectors import resource_list
from retrieval.filter_grammar import Filter, filters_parse, groups_parse
from workspaces.models import Workspace

MAX_NAMED_RESOURCES = 20  # as the chat API


class PlaygroundForm(forms.Form):
    question = forms.CharField(
        max_length=32_000, strip=False, widget=forms.Textarea(attrs={"rows": 3, "autofocus": True})
    )
    resources = forms.ModelMultipleChoiceField(
        queryset=Resource.objects.none(),
        required=False,
        help_text="Optional: widens retrieval and takes the best passages of each (at most 20).",
        widget=forms.SelectMultiple(attrs={"size": 6}),
    )
    model = forms.ChoiceField(required=False)
    label = forms.CharField(
        required=False,
        max_length=LABEL_MAX_CHARS,
        validators=[RegexValidator(LABEL_PATTERN, "Letters, digits and _ . @ - only.")],
        help_text="Optional: a second playground end user, console:<you>:<label>, with its own sessions.",
    )
    session_id = forms.UUIDField(required=False, widget=forms.HiddenInput)
    filters = forms.CharField(
        required=False,
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text='Optional: a metadata filter as JSON, as the API takes it, e.g. {"type": "eq", "key": '
        '"lang", "value": "de"}.',
    )
    groups = forms.CharField(
        required=False,
        max_length=10_000,
        help_text="Optional: ask as an end user of these groups (comma-separated; a single - for none). "
        "Empty: every document.",
    )

    def __init__(self, workspace: Workspace, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["resources"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = (
            resource_list(workspace=workspace, status=ResourceStatus.READY)
            .order_by("title", "id")
            .only("id", "title")
        )
        model_field = self.fields["model"]
        assert isinstance(model_field, forms.ChoiceField)
        model_field.choices = [
            (str(m["id"]), f"{m['id']} (default)" if m["default"] else str(m["id"]))
            for m in sorted(settings.GENERATION_MODELS, key=lambda m: not m["default"])
        ]

    def clean_question(self) -> str:
        question: str = self.cleaned_data["question"]
        if not question.strip():
            raise forms.ValidationError("The question is empty.")
        return question

    def clean_resources(self) -> Any:
        chosen = self.cleaned_data["resources"]
        if len(chosen) > MAX_NAMED_RESOURCES:
            raise forms.ValidationError(f"Choose at most {MAX_NAMED_RESOURCES} resources.")
        return chosen

    def clean_filters(self) -> Filter | None:
        """The filter parsed as the API parses it (retrieval/filter_grammar.py); None when empty."""
        text = self.cleaned_data["filters"].strip()
        if not text:
            return None
        try:
            sent = json.loads(text)
        except ValueError:
            raise forms.ValidationError("Not JSON.") from None
        try:
            return filters_parse(sent)
        except ApplicationError as exc:
            raise forms.ValidationError(
                "; ".join(f"{path}: {' '.join(problems)}" for path, problems in (exc.fields or {}).items())
            ) from None

    def clean_groups(self) -> tuple[str, ...] | None:
        text = self.cleaned_data["groups"].strip()
        if not text:
            return None
        if text == "-":
            return ()
        try:
            return groups_parse([group.strip() for group in text.split(",") if group.strip()])
        except ApplicationError as exc:
            raise forms.ValidationError(
                "; ".join(" ".join(problems) for problems in (exc.fields or {}).values())
            ) from None


class TranscriptSearchForm(forms.Form):
    external_user_id = forms.CharField(required=False, max_length=255, label="End user")
    question = forms.CharField(required=False, max_length=500, label="Text in a question")
    date_from = forms.DateField(
        required=False, label="Active from", widget=forms.DateInput(attrs={"type": "date"})
    )
    date_to = forms.DateField(
        required=False, label="Active until", widget=forms.DateInput(attrs={"type": "date"})
    )
    include_console = forms.BooleanField(required=False, label="Include playground sessions")
    cursor = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        start, end = cleaned.get("date_from"), cleaned.get("date_to")
        if start and end and end < start:
            self.add_error("date_to", "Must be on or after the start date.")
        return cleaned

    def clean_cursor(self) -> tuple[dt.datetime, str] | None:
        raw = self.cleaned_data.get("cursor") or ""
        if not raw:
            return None
        stamp, _, session_id = raw.partition("_")
        try:
            when = dt.datetime.fromisoformat(stamp)
            uuid.UUID(session_id)
        except ValueError:
            raise forms.ValidationError("Invalid page.") from None
        if when.tzinfo is None:
            raise forms.ValidationError("Invalid page.")
        return when, session_id
