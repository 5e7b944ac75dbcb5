"""Console users: a superuser, and a staff account limited to the owner's
organization with the console's permissions."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.staff import Staff, make_staff


@pytest.fixture
def root(db: None) -> Staff:
    """A superuser: every organization, every permission."""
    return make_staff("root", superuser=True)


@pytest.fixture
def curator(owner: Tenant) -> Staff:
    """A staff account limited to the owner's organization, with the console's permissions."""
    return make_staff("curator", organization=owner.organization)
