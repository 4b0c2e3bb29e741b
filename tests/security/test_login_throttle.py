"""Login throttling, as a client sees it: the login page and the admin login count failed passwords per
account at a client and per client, answer 429 while locked, and take the client address only from the
configured proxy header."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client
from django.urls import path, reverse
from rest_framework.authtoken.views import obtain_auth_token

from tests.config.test_settings import run_check
from tests.factories import UserFactory

PASSWORD = "correct-horse-battery"
PROXY = "10.0.0.2"
ATTACKERS = ("198.51.100.7", "198.51.100.8", "198.51.100.9")
OWNER_OF_A = "203.0.113.5"
USER_B_AT = "203.0.113.77"

# A DRF view that checks a password, as a token endpoint would; no such endpoint is routed in Timbang.
urlpatterns = [path("api/v1/auth/token/", obtain_auth_token)]


@pytest.fixture(autouse=True)
def _limits(settings):
    cache.clear()
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 6
    settings.LOGIN_LOCKOUT_SECONDS = 600
    settings.TRUSTED_PROXY_HEADER = ""
    settings.TRUSTED_PROXY_COUNT = 1
    yield
    cache.clear()


@pytest.fixture
def behind_proxy(settings):
    settings.TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    settings.TRUSTED_PROXY_COUNT = 1


@pytest.fixture
def users(db):
    return {
        "a": UserFactory(username="ani", roles=["annotator"]),
        "b": UserFactory(username="budi", roles=["annotator"]),
        "admin": UserFactory(username="root", roles=["admin"]),
    }


def login(username, password, *, remote=ATTACKERS[0], forwarded=None, url=None, **headers):
    """One login POST from a fresh client; with ``forwarded`` it arrives through the proxy."""
    extra = {"REMOTE_ADDR": remote, **headers}
    if forwarded is not None:
        extra["REMOTE_ADDR"] = PROXY
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return Client().post(url or reverse("login"), {"username": username, "password": password}, **extra)


def logged_in(response) -> bool:
    return response.status_code == 302 and not response["Location"].startswith(reverse("login"))


def test_admin_login_locks_after_the_limit_and_refuses_the_right_password(users):
    admin_login = reverse("admin:login")
    for _ in range(3):
        response = login("root", "wrong", url=admin_login)
        assert response.status_code == 200 and b"errornote" in response.content
    refused = login("root", PASSWORD, url=admin_login)
    assert refused.status_code == 429
    assert b"Too many login attempts. Try again in 10 minutes." in refused.content
    assert refused["Retry-After"] == "600"
    # From another address the admin is not locked out.
    assert login("root", PASSWORD, url=admin_login, remote=OWNER_OF_A).status_code == 302


def test_before_the_limit_the_right_password_logs_in_and_clears_the_count(users):
    for _ in range(2):
        assert login("ani", "wrong").status_code == 200
    assert logged_in(login("ani", PASSWORD))
    for _ in range(2):
        assert login("ani", "wrong").status_code == 200
    assert logged_in(login("ani", PASSWORD))


def test_the_lock_lifts_after_its_time(users):
    with time_machine.travel(dt.datetime(2026, 11, 24, 2, 0, tzinfo=dt.UTC), tick=False) as clock:
        for _ in range(3):
            login("ani", "wrong")
        clock.shift(dt.timedelta(seconds=599))
        still_locked = login("ani", PASSWORD)
        assert still_locked.status_code == 429 and still_locked["Retry-After"] == "1"
        clock.shift(dt.timedelta(seconds=1))
        assert logged_in(login("ani", PASSWORD))


def test_the_locked_page_speaks_the_language_of_the_client(users):
    for _ in range(3):
        login("ani", "wrong")
    refused = login("ani", PASSWORD, HTTP_ACCEPT_LANGUAGE="id")
    assert refused.status_code == 429
    assert b"Terlalu banyak percobaan masuk. Coba lagi dalam 10 menit." in refused.content


def test_behind_the_proxy_attackers_of_one_account_lock_neither_its_owner_nor_others(users, behind_proxy):
    for attacker in ATTACKERS:
        for attempt in range(3):
            # Each attacker also writes an address of its own choosing in front of the proxy's entry.
            forged = f"192.0.2.{attempt}, {attacker}"
            assert login("ani", f"guess-{attempt}", forwarded=forged).status_code == 200
        assert login("ani", PASSWORD, forwarded=attacker).status_code == 429
    assert logged_in(login("budi", PASSWORD, forwarded=USER_B_AT))
    assert logged_in(login("ani", PASSWORD, forwarded=OWNER_OF_A))
    # Another account is not locked even at an attacker's address (below that address's own limit).
    assert logged_in(login("budi", PASSWORD, forwarded=ATTACKERS[0]))


def test_a_forwarding_header_is_ignored_when_no_proxy_is_configured(users):
    for attempt in range(3):
        forged = f"192.0.2.{attempt}"
        response = login(
            "ani", "wrong", remote=ATTACKERS[0], HTTP_X_FORWARDED_FOR=forged, HTTP_X_REAL_IP=forged
        )
        assert response.status_code == 200
    again = login("ani", PASSWORD, remote=ATTACKERS[0], HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert again.status_code == 429
    assert logged_in(login("ani", PASSWORD, remote=OWNER_OF_A))


@pytest.mark.parametrize("through_proxy", [False, True], ids=["direct", "behind-proxy"])
def test_an_anonymous_flood_from_one_address_locks_only_that_address(users, settings, through_proxy):
    if through_proxy:
        settings.TRUSTED_PROXY_HEADER = "X-Forwarded-For"

    def from_address(address, username, password):
        if through_proxy:
            return login(username, password, forwarded=address)
        return login(username, password, remote=address)

    for n in range(6):
        assert from_address(ATTACKERS[0], f"nobody-{n}", "wrong").status_code == 200
    assert from_address(ATTACKERS[0], "nobody-new", "wrong").status_code == 429
    assert from_address(ATTACKERS[0], "budi", PASSWORD).status_code == 429
    assert logged_in(from_address(USER_B_AT, "budi", PASSWORD))
    assert logged_in(from_address(OWNER_OF_A, "ani", PASSWORD))


def test_throttled_attempts_are_not_counted_as_failures(users, settings):
    with time_machine.travel(dt.datetime(2026, 11, 24, 2, 0, tzinfo=dt.UTC), tick=False) as clock:
        for _ in range(3):
            login("ani", "wrong")
        for _ in range(10):
            assert login("ani", "wrong").status_code == 429
        clock.shift(dt.timedelta(seconds=600))
        assert logged_in(login("ani", PASSWORD))


@pytest.mark.urls("tests.security.test_login_throttle")
def test_an_api_view_that_checks_a_password_follows_the_same_rule(users):
    api = Client(REMOTE_ADDR=ATTACKERS[0])
    url = "/api/v1/auth/token/"
    for _ in range(3):
        assert api.post(url, {"username": "ani", "password": "wrong"}).status_code == 400
    refused = api.post(url, {"username": "ani", "password": PASSWORD})
    assert refused.status_code == 429 and refused["Retry-After"] == "600"
    assert refused.json() == {
        "detail": "Too many login attempts. Try again in 10 minutes.",
        "code": "login_throttled",
        "retry_after": 600,
    }
    assert (
        Client(REMOTE_ADDR=OWNER_OF_A).post(url, {"username": "ani", "password": PASSWORD}).status_code == 200
    )


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("TRUSTED_PROXY_HEADER", "X-Forwarded-For: 1.2.3.4", "is not an HTTP header name"),
        ("TRUSTED_PROXY_COUNT", "0", "TRUSTED_PROXY_COUNT=0: must be 1 or more"),
        ("LOGIN_FAILURE_LIMIT", "-1", "LOGIN_FAILURE_LIMIT=-1: must be 1 or more"),
    ],
)
def test_bad_throttle_settings_stop_start_up_with_their_name(tmp_path, variable, value, says):
    done = run_check({"TIMBANG_VAR_DIR": str(tmp_path), variable: value}, settings="config.settings.local")
    assert done.returncode != 0
    assert variable in done.stderr and says in done.stderr
