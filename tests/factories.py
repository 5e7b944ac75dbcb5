"""Model factories. factory-boy's declarations are untyped; ``Factory.create``
returns the model, so call sites use ``WorkspaceFactory.create(...)``."""

from __future__ import annotations

from factory.declarations import Sequence, SubFactory
from factory.django import DjangoModelFactory

from workspaces.models import Organization, Workspace


class OrganizationFactory(DjangoModelFactory[Organization]):
    class Meta:
        model = Organization

    name = Sequence(lambda n: f"Organization {n}")


class WorkspaceFactory(DjangoModelFactory[Workspace]):
    class Meta:
        model = Workspace

    organization = SubFactory(OrganizationFactory)
    name = Sequence(lambda n: f"Workspace {n}")
    # Tests about other behaviour ask terse questions of tiny documents
    # ("When?"): they run without abstention. The answerability tests
    # (tests/chat/test_conversation*.py) set the threshold they test.
    answerability_threshold = 0.0
