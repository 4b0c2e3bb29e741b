"""Adding a person costs no slow password hash, and still leaves a usable password nobody knows."""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher, identify_hasher

from accounts import selectors, services

pytestmark = pytest.mark.django_db

HASHED: list[str] = []


class CountingPBKDF2Hasher(PBKDF2PasswordHasher):
    """The production hasher (PBKDF2 at Django's iterations), counting the passwords it hashes."""

    def encode(self, password, salt, iterations=None):
        HASHED.append(password)
        return super().encode(password, salt, iterations)


@pytest.fixture
def production_hasher(settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingPBKDF2Hasher"]
    HASHED.clear()
    yield
    HASHED.clear()


def test_adding_a_person_runs_no_configured_password_hash(production_hasher):
    person = services.person_create(username="sari", email="sari@example.org")
    assert HASHED == []
    # Usable, so they are listed among the people (an unusable one marks simulated annotators) ...
    assert person.has_usable_password()
    assert selectors.people_list().filter(pk=person.pk).exists()
    assert selectors.real_users().filter(pk=person.pk).exists()
    # ... but nobody can log in with it.
    for guess in ("", "sari", "password", person.password):
        assert not person.check_password(guess)


def test_each_person_gets_their_own_random_password(production_hasher):
    first = services.person_create(username="sari", email="sari@example.org")
    second = services.person_create(username="budi", email="budi@example.org")
    assert identify_hasher(first.password).algorithm == "pbkdf2_sha256"  # checkable by Django
    assert first.password != second.password
    assert first.password.split("$")[2] != second.password.split("$")[2]  # salts differ
