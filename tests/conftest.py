"""Tenant fixtures shared by every test: an owner organization with admin and
chat keys, and an outsider organization whose keys must always get 404."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from chat.backends import use_backend
from chat.backends.scripted import ScriptedBackend
from tests.browser import browser  # noqa: F401  (headless Chromium for the console's browser tests)
from tests.factories import OrganizationFactory, WorkspaceFactory
from tests.live import live_server_real, live_server_scripted  # noqa: F401  (real server processes)
from tests.rate_limits import GENEROUS_RATE_LIMITS
from tests.vllm_server import (  # noqa: F401  (a real vLLM server for the tests that ask)
    pytest_collection_modifyitems,
    pytest_sessionfinish,
    vllm_forwarder,
    vllm_server,
)
from tests.worker import celery_worker  # noqa: F401  (a real worker for any test that asks)
from workspaces import services
from workspaces.models import ApiKeyScope, Organization, Workspace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@dataclass
class Tenant:
    organization: Organization
    workspace: Workspace
    admin_key: str
    chat_key: str

    def client(self, scope: str = "admin") -> APIClient:
        return api_client(self.admin_key if scope == "admin" else self.chat_key)


def api_client(key: str | None) -> APIClient:
    client = APIClient()
    if key is not None:
        client.credentials(HTTP_X_API_KEY=key)
    return client


def token_client(token: str) -> APIClient:
    """A client that sends an end-user token (``Authorization: Bearer``), as a browser would."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def make_tenant(name: str = "Owner") -> Tenant:
    organization = OrganizationFactory.create(name=name)
    workspace = WorkspaceFactory.create(organization=organization)
    admin = services.api_key_create(organization=organization, name="admin", scope=ApiKeyScope.ADMIN)
    chat = services.api_key_create(organization=organization, name="chat", scope=ApiKeyScope.CHAT)
    return Tenant(organization, workspace, admin.plaintext, chat.plaintext)


@pytest.fixture
def owner(db: None) -> Tenant:
    return make_tenant("Owner")


@pytest.fixture
def outsider(db: None) -> Tenant:
    return make_tenant("Outsider")


@pytest.fixture
def admin_client(owner: Tenant) -> APIClient:
    return owner.client("admin")


@pytest.fixture
def chat_client(owner: Tenant) -> APIClient:
    return owner.client("chat")


@pytest.fixture
def outsider_client(outsider: Tenant) -> APIClient:
    return outsider.client("admin")


@pytest.fixture
def tenant_factory(db: None) -> Callable[[str], Tenant]:
    return make_tenant


@pytest.fixture(autouse=True)
def generous_rate_limits(settings: Settings) -> None:
    """Tests send many requests a minute with one key: limits that never bite,
    unless a test sets its own (tests/workspaces/test_rate_limits.py)."""
    for name, value in GENEROUS_RATE_LIMITS.items():
        setattr(settings, name, value)


# The registry of a deployment whose default model is generative (what
# GENERATION_BACKEND=local gives): the scripted backend stands in for it.
GENERATIVE_REGISTRY = [
    {"id": "smollm2-135m-instruct", "backend": "local", "default": True, "context_length": None},
    {"id": "extractive", "backend": "extractive", "default": False, "context_length": None},
]


@pytest.fixture
def scripted(settings: Settings) -> Iterator[ScriptedBackend]:
    """Every model answers from a script (set ``scripted.replies``): a stand-in
    for a generative model (SmolLM2 locally, vLLM in production), the
    registry's default. The extractive engine that a turn degrades to stays
    the real one."""
    settings.GENERATION_MODELS = GENERATIVE_REGISTRY
    with use_backend(ScriptedBackend()) as backend:
        assert isinstance(backend, ScriptedBackend)
        yield backend
