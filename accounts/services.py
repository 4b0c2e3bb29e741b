"""Writes of the accounts app: API tokens; counting failed logins and locking their keys (in the cache)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.domain.login_throttle import throttle_keys
from accounts.selectors import login_failures_cache_key, login_lock_cache_key, login_throttle_limits

logger = logging.getLogger(__name__)


@transaction.atomic
def api_token_rotate(*, user: AbstractBaseUser) -> Token:
    """Replace ``user``'s API token (or make the first one). The old key stops working at once."""
    # Locking the user serialises two rotations of the same user (the token is one-to-one with it).
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def _count_failure(cache_key: str, window: int) -> int:
    # add + incr are atomic on Redis and in local memory, so concurrent failures are all counted.
    cache.add(cache_key, 0, timeout=window)
    try:
        return cache.incr(cache_key)
    except ValueError:  # expired between the two calls
        cache.set(cache_key, 1, timeout=window)
        return 1


def login_failure_record(*, username: str, address: str, now: float) -> float | None:
    """Count a failed login; lock each key whose count reaches its limit. Returns the lock's end, if any.

    A lock lasts ``LOGIN_LOCKOUT_SECONDS`` and starts its key's count again; failures older than that are
    forgotten.
    """
    lockout = settings.LOGIN_LOCKOUT_SECONDS
    locked_until = None
    for kind, key, limit in login_throttle_limits(username=username, address=address):
        if _count_failure(login_failures_cache_key(key), lockout) < limit:
            continue
        locked_until = now + lockout
        cache.set(login_lock_cache_key(key), locked_until, timeout=lockout)
        cache.delete(login_failures_cache_key(key))
        logger.warning(
            "login locked for %s s: %s key after %s failures from %s", lockout, kind, limit, address
        )
    return locked_until


def login_success_record(*, username: str, address: str) -> None:
    """Forget the failures of this account at this client (not those of the client as a whole)."""
    keys = throttle_keys(username=username, address=address)
    cache.delete(login_failures_cache_key(keys.account))
