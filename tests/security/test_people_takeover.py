"""A project manager cannot make a look-alike account, nor deactivate or reset other managers and researchers.

The probe: a manager added ``Admin`` beside ``admin`` (the same name to a reader), and could deactivate
another manager or send that manager's set-password link, the start of taking over the account.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import mail
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import translation

from accounts.services import PersonInvalid, person_create

pytestmark = pytest.mark.django_db

PEOPLE = "/people/"
BEFORE = ("accounts", "0002_profile_language")
CONSTRAINT = ("accounts", "0003_usernames_unique_whatever_their_case")


def _add(client, username: str):
    return client.post(
        PEOPLE,
        {
            "username": username,
            "email": f"{username.strip().lower()}@example.org",
            "groups": [Group.objects.get(name="annotator").pk],
        },
    )


@pytest.fixture
def english_after():
    """The page's language cookie activates Indonesian in this thread; the next test starts in English."""
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "usernames are unique whatever their case"),
        ("id", "nama pengguna harus unik tanpa memandang huruf besar atau kecil"),
    ],
)
def test_a_manager_cannot_add_admin_beside_admin(role_client, make_user, language, expected, english_after):
    make_user("admin", username="admin")
    client = role_client("project_manager")
    client.cookies["django_language"] = language
    for lookalike in ("Admin", "ADMIN"):
        response = _add(client, lookalike)
        assert response.status_code == 200
        errors = " ".join(response.context["form"].errors["username"])
        assert expected in errors
    assert list(
        get_user_model().objects.filter(username__iexact="admin").values_list("username", flat=True)
    ) == ["admin"]
    assert not mail.outbox


def test_the_service_and_the_database_refuse_a_case_variant(make_user):
    make_user("annotator", username="sari")
    with pytest.raises(PersonInvalid) as caught:
        person_create(username="SARI", email="s@example.org")
    assert "SARI" in caught.value.errors["username"]
    with pytest.raises(IntegrityError), transaction.atomic():
        get_user_model().objects.create(username="Sari")
    assert get_user_model().objects.filter(username__iexact="sari").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_migration_stops_on_existing_case_variants_and_names_them():
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("accounts")
    executor.migrate([BEFORE])
    # The user model as it was at that migration: the models of later migrations (login sessions) have no
    # table yet, so today's model would look for its sessions when a user is deleted.
    User = executor.loader.project_state([BEFORE]).apps.get_model(settings.AUTH_USER_MODEL)
    try:
        User.objects.create(username="budi")
        User.objects.create(username="Budi")
        User.objects.create(username="dewi")
        with pytest.raises(RuntimeError, match=r"differ only in case: Budi, budi\. Rename"):
            MigrationExecutor(connection).migrate([CONSTRAINT])
        User.objects.filter(username="Budi").delete()
        MigrationExecutor(connection).migrate([CONSTRAINT])
        with pytest.raises(IntegrityError), transaction.atomic():
            User.objects.create(username="DEWI")
    finally:
        User.objects.filter(username__iexact="budi").exclude(username="budi").delete()
        MigrationExecutor(connection).migrate(latest)


@pytest.mark.parametrize("target_roles", [("project_manager",), ("researcher",), ("admin",)])
def test_only_administrators_deactivate_or_reset_managers_and_researchers(
    role_client, make_user, target_roles
):
    target = make_user(*target_roles, username="target", email="target@example.org")
    manager = role_client("project_manager")
    listing = manager.get(PEOPLE)
    assert f"/people/{target.pk}/active".encode() not in listing.content
    assert f"/people/{target.pk}/password-reset".encode() not in listing.content
    assert manager.post(f"/people/{target.pk}/active", {"active": "0"}).status_code == 403
    assert manager.post(f"/people/{target.pk}/password-reset").status_code == 403
    target.refresh_from_db()
    assert target.is_active and not mail.outbox

    admin = role_client("admin")
    listing = admin.get(PEOPLE)
    assert f"/people/{target.pk}/active".encode() in listing.content
    assert admin.post(f"/people/{target.pk}/password-reset").status_code == 302
    assert [m.to for m in mail.outbox] == [["target@example.org"]]
    assert admin.post(f"/people/{target.pk}/active", {"active": "0"}).status_code == 302
    target.refresh_from_db()
    assert not target.is_active


def test_a_manager_still_manages_annotators_and_reviewers(role_client, make_user):
    annotator = make_user("annotator", "reviewer", username="budi", email="budi@example.org")
    manager = role_client("project_manager")
    assert f"/people/{annotator.pk}/active".encode() in manager.get(PEOPLE).content
    assert manager.post(f"/people/{annotator.pk}/password-reset").status_code == 302
    assert manager.post(f"/people/{annotator.pk}/active", {"active": "0"}).status_code == 302
    annotator.refresh_from_db()
    assert not annotator.is_active and len(mail.outbox) == 1
