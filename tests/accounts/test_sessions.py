"""The site's session store: the same answers as Django's database store, with one statement per read, and
the session's user read by that same statement."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.utils import timezone

from accounts.models import Session
from accounts.roles import user_roles
from accounts.sessions import SessionStore, user_read_with_session

pytestmark = pytest.mark.django_db


class DjangoReadStore(DjangoStore):
    """Django's own database store over the same table: the answers ours must give (the data is signed with
    a salt named after the store's class)."""

    __qualname__ = "SessionStore"

    @classmethod
    def get_model_class(cls):
        return Session


def test_a_saved_session_reads_back_in_one_statement(django_assert_num_queries):
    store = SessionStore()
    store["_auth_user_id"] = "7"
    store["seen"] = [1, "two"]
    store.save()
    with django_assert_num_queries(1):
        read = SessionStore(session_key=store.session_key)
        assert dict(read.items()) == {"_auth_user_id": "7", "seen": [1, "two"]}
    assert dict(DjangoReadStore(session_key=store.session_key).items()) == dict(read.items())
    # The data names user 7, who does not exist: the session was read with nobody for them.
    assert Session.objects.get(session_key=store.session_key).user_id == 7
    assert user_read_with_session("7") == (True, None)


@pytest.mark.parametrize("key", ["no-such-session-key", None, ""])
def test_an_unknown_key_reads_empty_and_loses_its_key(key):
    store = SessionStore(session_key=key)
    assert dict(store.items()) == {}
    assert store.session_key is None


def test_an_expired_session_reads_empty():
    store = SessionStore()
    store["x"] = 1
    store.save()
    Session.objects.filter(session_key=store.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    read = SessionStore(session_key=store.session_key)
    assert dict(read.items()) == {} and read.session_key is None


def test_a_session_whose_data_was_tampered_with_reads_empty():
    store = SessionStore()
    store["x"] = 1
    store.save()
    Session.objects.filter(session_key=store.session_key).update(session_data="forged:data")
    assert dict(SessionStore(session_key=store.session_key).items()) == {}


def _logged_in(client, user):
    client.force_login(user)
    return client.cookies["sessionid"].value


def test_the_session_is_read_with_its_user_and_roles_in_one_statement(client, django_assert_num_queries):
    user = get_user_model().objects.create_user("sesi", password="pw-sesi-1234")
    user.groups.add(Group.objects.get_or_create(name="annotator")[0])
    key = _logged_in(client, user)
    assert Session.objects.get(session_key=key).user_id == user.pk
    with django_assert_num_queries(1):
        store = SessionStore(session_key=key)
        assert store["_auth_user_id"] == str(user.pk)
        read, found = user_read_with_session(store["_auth_user_id"])
        assert read and found.pk == user.pk and found.username == "sesi"
        assert user_roles(found) == {"annotator"}
    # Taken once: a second ask reads nothing from the session.
    assert user_read_with_session(str(user.pk)) == (False, None)


def test_a_page_request_reads_its_session_and_user_in_one_statement(client, django_assert_num_queries):
    """The request's user comes from the session's statement; the page's own reads come after it."""
    from django.contrib.auth import get_user
    from django.test import RequestFactory

    user = get_user_model().objects.create_user("sesi2", password="pw-sesi-1234")
    key = _logged_in(client, user)
    request = RequestFactory().get("/")
    request.session = SessionStore(session_key=key)
    with django_assert_num_queries(1):
        found = get_user(request)
    assert found.pk == user.pk and found.is_authenticated


def test_a_session_of_another_user_id_than_its_column_reads_the_named_user():
    """The data decides who is logged in; the column only saves a statement when it agrees."""
    first = get_user_model().objects.create_user("satu", password="pw-sesi-1234")
    second = get_user_model().objects.create_user("dua", password="pw-sesi-1234")
    store = SessionStore()
    store["_auth_user_id"] = str(first.pk)
    store.save()
    Session.objects.filter(session_key=store.session_key).update(user=second)
    read = SessionStore(session_key=store.session_key)
    assert read["_auth_user_id"] == str(first.pk)
    assert user_read_with_session(str(first.pk)) == (False, None)


def test_deleting_a_user_deletes_their_sessions(client):
    user = get_user_model().objects.create_user("hapus", password="pw-sesi-1234")
    key = _logged_in(client, user)
    user.delete()
    assert not Session.objects.filter(session_key=key).exists()
    assert not client.get("/").wsgi_request.user.is_authenticated


def test_a_deactivated_users_session_logs_nobody_in(client):
    user = get_user_model().objects.create_user("nonaktif", password="pw-sesi-1234")
    _logged_in(client, user)
    assert client.get("/").wsgi_request.user == user
    user.is_active = False
    user.save()
    assert not client.get("/").wsgi_request.user.is_authenticated


def test_a_changed_password_ends_the_other_sessions(client):
    user = get_user_model().objects.create_user("ganti", password="pw-sesi-1234")
    _logged_in(client, user)
    user.set_password("pw-lain-5678")
    user.save()
    assert not client.get("/").wsgi_request.user.is_authenticated


def test_a_stored_session_decodes_with_the_sites_engine():
    store = SessionStore()
    store["x"] = [1, 2]
    store.save()
    assert Session.objects.get(session_key=store.session_key).get_decoded() == {"x": [1, 2]}
