"""Fixtures of the chat tests."""

from __future__ import annotations

import pytest

from tests.chat.helpers import CLINIC_GUIDELINES, ingest_text
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD


@pytest.fixture
def clinic(owner: Tenant) -> Tenant:
    """A workspace at the default answerability threshold with the three guidelines."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    for title, text in CLINIC_GUIDELINES.items():
        ingest_text(owner.workspace, title, text)
    return owner
