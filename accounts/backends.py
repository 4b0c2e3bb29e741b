"""Login throttling: failed password checks counted in the cache, per account at a client and per client.

Every password check with a request goes through ``ThrottledModelBackend``: the login page, the admin
login, and any API view that calls ``authenticate``. Two counts are kept for each failure:

- the account at this client (``LOGIN_FAILURE_LIMIT``): someone guessing one account's password;
- the client, whatever the username (``LOGIN_ADDRESS_FAILURE_LIMIT``, higher, as colleagues behind one NAT
  share an address): someone trying many accounts.

A count that reaches its limit locks its key for ``LOGIN_LOCKOUT_SECONDS``; a login under a locked key is
refused with ``LoginThrottled`` (answered 429 by ``config.middleware.LoginThrottleMiddleware``) before the
password is checked, even a right one. No key spans accounts and clients together, so the failures of one
account, or a flood from one client, never lock another account out at another client; and the owner of
an account that is attacked from elsewhere still logs in from their own address. Failures older than the
lockout time are forgotten; a successful login clears its account's count at that client.

The client address comes from ``accounts.selectors.request_client_address``: the configured proxy header
(``TRUSTED_PROXY_HEADER``, ``TRUSTED_PROXY_COUNT``) or ``REMOTE_ADDR``; an unconfigured header is ignored.

Built on Django's cache (Redis in production, the file cache embedded, local memory in tests) rather than
django-axes: Axes applies one failure limit to all of its lockout parameters, so it cannot lock an
account at one client after a few failures while letting a shared client address make more; and it
writes a database row for every failing (username, address), which an anonymous flood turns into writes.
"""

from __future__ import annotations

import time

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from accounts.domain.login_throttle import retry_after_seconds
from accounts.selectors import login_locked_until, request_client_address, user_with_roles
from accounts.services import login_failure_record, login_success_record
from accounts.sessions import user_read_with_session


class LoginThrottled(Exception):
    """A login refused before its password was checked, because its account or client is locked."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"login locked for {retry_after} s")
        self.retry_after = retry_after


class ThrottledModelBackend(ModelBackend):
    """Django's username and password check, refused while locked and counted when it fails."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if request is None or username is None or password is None:
            return super().authenticate(request, username=username, password=password, **kwargs)
        address = request_client_address(request)
        now = time.time()
        locked_until = login_locked_until(username=username, address=address, now=now)
        if locked_until is not None:
            raise LoginThrottled(retry_after_seconds(locked_until=locked_until, now=now))
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            login_failure_record(username=username, address=address, now=now)
        else:
            login_success_record(username=username, address=address)
        return user

    def get_user(self, user_id):
        """The session's user with their roles: the ones the session store read with the session
        (``accounts.sessions``), else read in one statement (``ModelBackend`` reads the user, and the first
        role check another statement); refused as ``ModelBackend`` refuses an inactive one."""
        read, user = user_read_with_session(user_id)
        if not read:
            user = user_with_roles(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
