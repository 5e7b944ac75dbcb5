"""The check of the metadata keys a workspace declares
(``Workspace.metadata_keys``): the seam by which workspaces stays below
resources.

The field is the workspace's, but what it may hold (the key pattern and
the limit on keys of a resource's metadata, the types a key may be
declared as) is resources' own: resources/metadata_keys.py defines the
check and ``ResourcesConfig.ready`` registers it here
(:func:`metadata_keys_check_register`). The field's validator (the admin's
form, ``full_clean``) and the workspace endpoint ask the registered check;
with none registered they refuse rather than accept a value unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured, ValidationError

Check = Callable[[Any], dict[str, list[str]]]

_checks: list[Check] = []


def metadata_keys_check_register(check: Check) -> None:
    """The check of a ``metadata_keys`` value (resources/apps.py); the last
    one registered is the one asked."""
    _checks[:] = [check]


def metadata_keys_problems(value: Any) -> dict[str, list[str]]:
    """What is wrong with a ``metadata_keys`` value, by path below it
    (``""`` for the value itself, ``year``); empty when it is valid."""
    if not _checks:
        raise ImproperlyConfigured(
            "No check of Workspace.metadata_keys is registered: the resources app registers it when ready."
        )
    return _checks[0](value)


def metadata_keys_validate(value: Any) -> None:
    """The model field's validator (the admin's form, ``full_clean``)."""
    problems = metadata_keys_problems(value)
    if problems:
        raise ValidationError(
            "; ".join(f"{path or 'metadata_keys'}: {' '.join(p)}" for path, p in problems.items())
        )
