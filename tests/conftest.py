"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# One llama.cpp server (over the SmolLM2 GGUF shipped on PyPI) for the whole session, for every test that
# asks for it: the inference tests and the real-model run tests.
pytest_plugins = ["tests.llamacpp_fixtures", "tests.arena_fixtures"]

REPO_ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DATA = (REPO_ROOT / ".." / "shared" / "reference-data").resolve()


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the site's default language: a request in Indonesian (the locale middleware
    activates it) must not leave the next test of the same process speaking Indonesian."""
    from django.conf import settings
    from django.utils import translation

    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def make_user(db):
    from tests.factories import UserFactory

    def _make(*roles: str, **kwargs):
        return UserFactory(roles=roles, **kwargs)

    return _make


@pytest.fixture
def role_client(client, make_user):
    """A logged-in test client for a user with the given roles."""

    def _client(*roles: str, **kwargs):
        user = make_user(*roles, **kwargs)
        client.force_login(user)
        client.user = user
        return client

    return _client


@pytest.fixture
def api_client_for(make_user):
    from rest_framework.test import APIClient

    def _client(*roles: str, **kwargs):
        user = make_user(*roles, **kwargs)
        api = APIClient()
        api.force_authenticate(user)
        api.user = user
        return api

    return _client


def pytest_collection_modifyitems(config, items):
    has_reference = REFERENCE_DATA.is_dir()
    has_services = bool(os.environ.get("DATABASE_URL")) and bool(os.environ.get("REDIS_URL"))
    skip_ref = pytest.mark.skip(reason=f"reference data not found at {REFERENCE_DATA}")
    skip_int = pytest.mark.skip(reason="integration tests need DATABASE_URL (PostgreSQL) and REDIS_URL")
    for item in items:
        if "reference" in item.keywords and not has_reference:
            item.add_marker(skip_ref)
        if "integration" in item.keywords and not has_services:
            item.add_marker(skip_int)
