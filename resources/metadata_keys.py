"""What a workspace may declare of its resources' metadata
(``Workspace.metadata_keys``, docs/ingestion.md): the key pattern and the
limit on keys a resource's metadata has (API.md v1.3), and the types a key
may be declared as.

``{"customer": "string", "year": "number", "public": "boolean",
"updated": "date", "products": "list"}``: once a workspace declares keys, a
resource's ``metadata`` may hold only those, each of its declared type (a
400 naming the key otherwise, on every route that sets metadata:
resources/attributes.py). Empty (the default): any key of the shape
API.md v1.3 allows. Declaring keys later checks new writes only; stored
metadata stays as it is.

The field is the workspace's, its meaning this app's: workspaces asks the
check this module defines, which ``ResourcesConfig.ready`` registers with
it (workspaces/metadata_keys.py), so that workspaces imports nothing of
resources.
"""

from __future__ import annotations

import re
from typing import Any

# A key of a resource's metadata, and how many one holds (API.md v1.3).
METADATA_KEY_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_METADATA_KEYS = 32
# string: text; number: an int or a finite float, not a boolean; boolean;
# date: an ISO 8601 date or date-time string; list: a list of strings.
METADATA_TYPES = ("string", "number", "boolean", "date", "list")


def metadata_keys_problems(value: Any) -> dict[str, list[str]]:
    """What is wrong with a ``metadata_keys`` value, by path below it
    (``""`` for the value itself, ``year``); empty when it is valid."""
    if not isinstance(value, dict):
        return {"": ["Expected an object of key: type."]}
    if len(value) > MAX_METADATA_KEYS:
        return {"": [f"Ensure this object has no more than {MAX_METADATA_KEYS} keys."]}
    problems: dict[str, list[str]] = {}
    for key, kind in value.items():
        if not isinstance(key, str) or not METADATA_KEY_PATTERN.fullmatch(key):
            shown = str(key).encode("unicode_escape").decode("ascii")[:80] or '""'
            problems[shown] = ["A key is 1 to 64 letters, digits, '_', '.' or '-'."]
        elif kind not in METADATA_TYPES:
            problems[key] = [f"Unknown type; one of {', '.join(METADATA_TYPES)}."]
    return problems
