"""A resource's ``metadata`` and ``access`` (API.md v1.3): the one place
their shape is checked, for every route that sets them (the uploads, the
bulk upload and its zip manifest, ``PATCH``, the admin).

``metadata`` is an object of at most :data:`MAX_METADATA_KEYS` keys
(:data:`METADATA_KEY_PATTERN`), each value a string (at most
:data:`MAX_STRING_CHARS`), a finite number, a boolean, or a list of at most
:data:`MAX_LIST_ITEMS` such strings. Dates are ISO 8601 strings. Values are
stored as given (JSON types kept: ``true`` stays a boolean, ``1`` a number).

``access`` is ``None`` (every end user of the workspace) or
``{"groups": [...]}``: at most :data:`MAX_GROUPS` strings of
1 to :data:`MAX_GROUP_CHARS` characters, duplicates dropped (first kept). An
empty list means no end user may read the document: only an API-key request
that sends no ``groups`` sees it.

Retrieval filters on the stored shape inside its SQL (retrieval/search/),
so nothing else may be stored: docs/api-contract.md states the same limits.
Problems are reported by path, relative to the value (``""`` for the value
itself, ``price``, ``tags[3]``, ``groups[0]``); :func:`attributes_clean`
prefixes them (``metadata.price``, ``[2].access.groups``). The API's fields
that hold both, and their schema, are :mod:`resources.attribute_fields`.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

from django.core.exceptions import ValidationError

from daneshyar.exceptions import ValidationFailed
from resources.metadata_keys import MAX_METADATA_KEYS as MAX_METADATA_KEYS
from resources.metadata_keys import METADATA_KEY_PATTERN as METADATA_KEY_PATTERN

MAX_STRING_CHARS = 512
MAX_LIST_ITEMS = 64
MAX_GROUPS = 64
MAX_GROUP_CHARS = 128
ACCESS_KEYS = ("groups",)

MetadataValue = str | int | float | bool | list[str]
Metadata = dict[str, MetadataValue]
Access = dict[str, list[str]] | None

VALUE_MESSAGE = (
    f"Expected a string (at most {MAX_STRING_CHARS} characters), a number, a boolean, "
    f"or a list of at most {MAX_LIST_ITEMS} strings."
)
KEY_MESSAGE = "A key is 1 to 64 letters, digits, '_', '.' or '-'."
UNSTORABLE_MESSAGE = "Contains a NUL character or a lone surrogate."

Problems = dict[str, list[str]]


def storable(text: str) -> bool:
    """Text PostgreSQL can store and UTF-8 can encode."""
    return "\x00" not in text and not any("\ud800" <= c <= "\udfff" for c in text)


def shown_key(key: str) -> str:
    """A key as a problem's path names it: printable and short (a key that
    is itself the problem may hold anything a client sent), and never empty
    (``""`` is the path of the value itself)."""
    if not key:
        return '""'
    shown = key if storable(key) and key.isprintable() else key.encode("unicode_escape").decode("ascii")
    return shown if len(shown) <= 80 else shown[:79] + "…"


def _string_problem(text: str) -> str | None:
    if len(text) > MAX_STRING_CHARS:
        return f"Ensure this text has no more than {MAX_STRING_CHARS} characters."
    if not storable(text):
        return UNSTORABLE_MESSAGE
    return None


def _value_problems(key: str, value: Any) -> Problems:
    if isinstance(value, bool | int):  # a boolean stays one: JSON keeps true apart from 1
        return {}
    if isinstance(value, float):
        return {} if math.isfinite(value) else {key: ["A number must be finite (no NaN or Infinity)."]}
    if isinstance(value, str):
        problem = _string_problem(value)
        return {key: [problem]} if problem else {}
    if isinstance(value, list):
        if len(value) > MAX_LIST_ITEMS:
            return {key: [f"Ensure this list has no more than {MAX_LIST_ITEMS} items."]}
        problems: Problems = {}
        for index, item in enumerate(value):
            problem = _string_problem(item) if isinstance(item, str) else "A list holds only strings."
            if problem:
                problems[f"{key}[{index}]"] = [problem]
        return problems
    return {key: [VALUE_MESSAGE]}


def metadata_problems(value: Any) -> Problems:
    """What is wrong with a ``metadata`` value, by path; empty when it is valid."""
    if not isinstance(value, dict):
        return {"": ["Expected an object."]}
    if len(value) > MAX_METADATA_KEYS:
        return {"": [f"Ensure this object has no more than {MAX_METADATA_KEYS} keys."]}
    problems: Problems = {}
    for key, item in value.items():
        if not isinstance(key, str) or not METADATA_KEY_PATTERN.fullmatch(key):
            problems[shown_key(str(key))] = [KEY_MESSAGE]
            continue
        problems.update(_value_problems(key, item))
    return problems


def _of_type(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list)
    if kind == "date" and isinstance(value, str):
        try:
            dt.datetime.fromisoformat(value)
        except ValueError:
            return False
        return True
    return False


def declared_problems(metadata: Metadata, declared: dict[str, str]) -> Problems:
    """What valid ``metadata`` breaks of the keys its workspace declares
    (``Workspace.metadata_keys``, resources/metadata_keys.py): a key not
    declared, a value not of its declared type. Nothing when none are."""
    if not declared:
        return {}
    problems: Problems = {}
    for key, value in metadata.items():
        kind = declared.get(key)
        if kind is None:
            problems[key] = ["Not a key this workspace declares (its metadata_keys)."]
        elif not _of_type(kind, value):
            expected = "an ISO 8601 date" if kind == "date" else f"a {kind}"
            problems[key] = [f"Expected {expected}: the workspace declares it so."]
    return problems


def declared_check(metadata: Metadata, declared: dict[str, str], *, prefix: str = "metadata") -> None:
    """:class:`ValidationFailed` naming each key that breaks the declaration."""
    problems = prefixed(prefix, declared_problems(metadata, declared))
    if problems:
        shown = "; ".join(f"{path}: {' '.join(messages)}" for path, messages in problems.items())
        raise ValidationFailed(
            f"The metadata breaks the workspace's declared keys ({shown}).", fields=problems
        )


def access_problems(value: Any) -> Problems:
    """What is wrong with an ``access`` value, by path; empty when it is valid."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        return {"": ['Expected null or an object {"groups": [...]}.']}
    problems: Problems = {
        shown_key(str(key)): [f"Unknown key; one of {', '.join(ACCESS_KEYS)}."]
        for key in value
        if key not in ACCESS_KEYS
    }
    if "groups" not in value:
        problems["groups"] = ["This field is required."]
        return problems
    groups = value["groups"]
    if not isinstance(groups, list):
        problems["groups"] = ["Expected a list of strings."]
    elif len(groups) > MAX_GROUPS:
        problems["groups"] = [f"Ensure this list has no more than {MAX_GROUPS} items."]
    else:
        for index, group in enumerate(groups):
            if not isinstance(group, str):
                problems[f"groups[{index}]"] = ["Expected a string."]
            elif not 1 <= len(group) <= MAX_GROUP_CHARS:
                problems[f"groups[{index}]"] = [f"A group is 1 to {MAX_GROUP_CHARS} characters."]
            elif not storable(group):
                problems[f"groups[{index}]"] = [UNSTORABLE_MESSAGE]
    return problems


def access_normalize(value: Access) -> Access:
    """A valid ``access`` as stored: its groups without duplicates, first kept."""
    if value is None:
        return None
    return {"groups": list(dict.fromkeys(value["groups"]))}


def prefixed(prefix: str, problems: Problems) -> Problems:
    """``problems`` under ``prefix`` (``metadata`` → ``metadata.price``; a
    list position joins without a dot: ``tags[3]``)."""
    out: Problems = {}
    for path, messages in problems.items():
        if not path:
            out[prefix] = messages
        elif path.startswith("["):
            out[prefix + path] = messages
        else:
            out[f"{prefix}.{path}" if prefix else path] = messages
    return out


def attributes_problems(*, metadata: Any, access: Any, prefix: str = "") -> Problems:
    """Both values' problems, named ``<prefix>metadata.…`` / ``<prefix>access.…``."""
    return {
        **prefixed(prefix + "metadata", metadata_problems(metadata)),
        **prefixed(prefix + "access", access_problems(access)),
    }


def attributes_clean(*, metadata: Any, access: Any, prefix: str = "") -> tuple[Metadata, Access]:
    """The values as stored, or :class:`ValidationFailed` (400
    ``validation_error``) naming every problem (``metadata.price``)."""
    problems = attributes_problems(metadata=metadata, access=access, prefix=prefix)
    if problems:
        raise ValidationFailed("The request has invalid fields.", fields=problems)
    return dict(metadata), access_normalize(access)


def json_field(text: str) -> Any:
    """A value sent as a JSON string (a multipart field, a form): ``ValueError``
    for malformed JSON and for NaN or Infinity, which JSON does not have."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON.")

    try:
        return json.loads(text, parse_constant=refuse)
    except RecursionError:
        raise ValueError("Nested too deeply.") from None


def _django_error(problems: Problems) -> ValidationError:
    return ValidationError(
        "; ".join(
            f"{path}: {' '.join(messages)}" if path else " ".join(messages)
            for path, messages in problems.items()
        )
    )


def metadata_validate(value: Any) -> None:
    """A Django validator (the admin's form)."""
    problems = metadata_problems(value)
    if problems:
        raise _django_error(problems)


def access_validate(value: Any) -> None:
    """A Django validator (the admin's form)."""
    problems = access_problems(value)
    if problems:
        raise _django_error(problems)
