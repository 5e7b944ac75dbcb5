"""What a turn may retrieve (retrieval/filters.py), whatever the entrance
(native, stream, OpenAI-compatible): the request's metadata ``filters``; the
end user's groups, a token's own (a token request that sends ``groups`` is a
400: it cannot widen them) or those an API-key request names (none named:
every document); and the resources a token names, which confine every turn
of its user to them.

These are filters, unlike a request's own ``resource_ids``, which widen
retrieval towards the named documents (retrieval/search/service.py): a
passage of any other resource never reaches the turn. All of them are one
condition inside every search statement of the turn.
"""

from __future__ import annotations

import uuid

from daneshyar.exceptions import Forbidden, ValidationFailed
from resources.models import Resource
from resources.selectors import resource_list
from retrieval.filter_grammar import Filter
from retrieval.filters import Access, access_expression
from workspaces.models import Workspace
from workspaces.principals import EndUser, Principal


def turn_access(
    *,
    principal: Principal,
    workspace: Workspace,
    requested: tuple[uuid.UUID, ...],
    filters: Filter | None,
    groups: tuple[str, ...] | None,
) -> Access:
    """Who may read what in a turn (module docstring); 400/403 as
    :func:`turn_resource_scope`, and 400 for ``groups`` sent with a token.

    A resource the request names that the token's user may not read (its
    groups) is refused like an unknown one."""
    if not isinstance(principal, EndUser):
        return Access(filters=filters, groups=groups)
    if groups is not None:
        raise ValidationFailed(
            "An end-user token carries its user's groups; a request cannot send them.",
            fields={"groups": ["Not allowed with an end-user token: the token's groups apply."]},
        )
    allowed = turn_resource_scope(principal=principal, workspace=workspace, requested=requested)
    access = Access(filters=filters, groups=principal.groups, resource_ids=allowed)
    if requested:
        readable = Access(groups=principal.groups)
        expression = access_expression(readable, table=Resource._meta.db_table)
        assert expression is not None
        known = set(
            resource_list(workspace=workspace)
            .filter(expression, id__in=requested)
            .values_list("id", flat=True)
        )
        outside = [r for r in requested if r not in known]
        if outside:
            raise ValidationFailed(
                "Unknown resource ids.",
                fields={"resource_ids": [f"Unknown resource {r}." for r in outside]},
            )
    return access


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
