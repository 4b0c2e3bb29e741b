"""The site's session store: the same answers as Django's database store, with one statement per read."""

from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from accounts.sessions import SessionStore

pytestmark = pytest.mark.django_db


def test_a_saved_session_reads_back_in_one_statement(django_assert_num_queries):
    store = SessionStore()
    store["_auth_user_id"] = "7"
    store["seen"] = [1, "two"]
    store.save()
    with django_assert_num_queries(1):
        read = SessionStore(session_key=store.session_key)
        assert dict(read.items()) == {"_auth_user_id": "7", "seen": [1, "two"]}
    assert dict(DjangoStore(session_key=store.session_key).items()) == dict(read.items())


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
