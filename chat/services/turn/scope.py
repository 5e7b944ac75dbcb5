"""What an end-user token lets a turn retrieve: a token that names
``resource_ids`` narrows every turn of its user to those resources, whatever
the entrance (native, stream, OpenAI-compatible)."""

from __future__ import annotations

import uuid

from daneshyar.exceptions import Forbidden, ValidationFailed
from resources.selectors import resource_list
from workspaces.models import Workspace
from workspaces.principals import EndUser, Principal


def turn_resource_ids(
    *, principal: Principal, workspace: Workspace, requested: tuple[uuid.UUID, ...]
) -> tuple[uuid.UUID, ...]:
    """The resources a turn may search: the request's (empty: all), within the token's.

    A requested resource outside the token's is refused like an unknown one
    (400): the token's user is not told it exists. Without a request-level
    filter the token's resources apply, less any deleted since it was
    minted; when none is left the turn is refused (403) rather than
    searching the whole workspace.
    """
    if not isinstance(principal, EndUser) or not principal.resource_ids:
        return requested
    allowed = principal.resource_ids
    outside = [r for r in requested if r not in allowed]
    if outside:
        raise ValidationFailed(
            "Unknown resource ids.",
            fields={"resource_ids": [f"Unknown resource {r}." for r in outside]},
        )
    if requested:
        return requested
    existing = set(resource_list(workspace=workspace).filter(id__in=allowed).values_list("id", flat=True))
    kept = tuple(r for r in allowed if r in existing)
    if not kept:
        raise Forbidden("None of the resources this end-user token allows exists any longer.")
    return kept
