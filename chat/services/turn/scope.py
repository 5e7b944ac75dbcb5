"""What an end-user token lets a turn retrieve: a token that names
``resource_ids`` confines every turn of its user to those resources, whatever
the entrance (native, stream, OpenAI-compatible).

This is a filter, unlike a request's own ``resource_ids``, which widen
retrieval towards the named documents (retrieval/search/service.py): a
passage of any other resource never reaches the turn.
"""

from __future__ import annotations

import uuid

from daneshyar.exceptions import Forbidden, ValidationFailed
from resources.selectors import resource_list
from workspaces.models import Workspace
from workspaces.principals import EndUser, Principal


def turn_resource_scope(
    *, principal: Principal, workspace: Workspace, requested: tuple[uuid.UUID, ...]
) -> tuple[uuid.UUID, ...] | None:
    """The only resources a turn may retrieve from; None: no limit.

    A requested resource outside the token's is refused like an unknown one
    (400): the token's user is not told it exists. Resources deleted since
    the token was minted drop out; when none is left the turn is refused
    (403) rather than searching the whole workspace.
    """
    if not isinstance(principal, EndUser) or not principal.resource_ids:
        return None
    allowed = principal.resource_ids
    outside = [r for r in requested if r not in allowed]
    if outside:
        raise ValidationFailed(
            "Unknown resource ids.",
            fields={"resource_ids": [f"Unknown resource {r}." for r in outside]},
        )
    existing = set(resource_list(workspace=workspace).filter(id__in=allowed).values_list("id", flat=True))
    kept = tuple(r for r in allowed if r in existing)
    if not kept:
        raise Forbidden("None of the resources this end-user token allows exists any longer.")
    return kept
