"""The OpenAPI schema as the API serves it, read once per module."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pytest_django import DjangoDbBlocker

from tests.conftest import api_client


@pytest.fixture(scope="module")
def schema(django_db_blocker: DjangoDbBlocker) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = api_client(None).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi")
    assert response.status_code == 200
    schema: dict[str, Any] = yaml.safe_load(response.content)
    return schema
