"""Writes of the accounts app: people (add, deactivate, set-password e-mails), API tokens; counting failed
logins and locking their keys (in the cache)."""

from __future__ import annotations

import logging
import secrets
import smtplib
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import AbstractBaseUser, Group
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _
from rest_framework.authtoken.models import Token

from accounts.domain.login_throttle import throttle_keys
from accounts.models import Profile
from accounts.selectors import (
    login_failures_cache_key,
    login_lock_cache_key,
    login_throttle_limits,
    person_mail_language,
    username_taken,
)

logger = logging.getLogger(__name__)


class PersonInvalid(Exception):
    """A person could not be added or changed; ``errors`` maps each field to its message."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))


def _taken_message(username: str) -> str:
    return _(
        "The username %(username)s is taken: usernames are unique whatever their case (upper or lower)."
    ) % {"username": username}


# A random password of 256 bits needs no slow hash: nobody can guess it, whatever each guess costs.
_RANDOM_PASSWORD_ITERATIONS = 1


def random_password_hash() -> str:
    """A usable password hash of a random password nobody knows, made in microseconds.

    A new person sets their own password through the e-mailed link; until then they need a password that
    is usable (an unusable one, "!...", marks the demo's simulated annotators and leaves a person off the
    people page) but that nobody can log in with. The configured hasher's work factor (PBKDF2 with a million
    iterations, about a second on a busy CPU) protects guessable passwords; this one is 32 random bytes, so
    it is hashed with PBKDF2 at one iteration. Django reads the iterations from the stored hash, and would
    rehash at the configured strength if anyone ever logged in with it.
    """
    return PBKDF2PasswordHasher().encode(
        secrets.token_urlsafe(32), PBKDF2PasswordHasher().salt(), iterations=_RANDOM_PASSWORD_ITERATIONS
    )


@transaction.atomic
def person_create(
    *,
    username: str,
    first_name: str = "",
    last_name: str = "",
    email: str = "",
    language: str = "",
    groups: Iterable[Group] = (),
) -> AbstractBaseUser:
    """Add a person. Their password is a random one nobody knows; they choose their own from the
    set-password e-mail (:func:`person_password_reset_send`)."""
    User = get_user_model()
    user = User(username=username.strip(), first_name=first_name, last_name=last_name, email=email)
    user.password = random_password_hash()
    profile = Profile(language=language)
    errors: dict[str, str] = {}
    for obj, exclude in ((user, ["password"]), (profile, ["user"])):
        try:
            obj.full_clean(exclude=exclude)
        except ValidationError as exc:
            errors.update({field: " ".join(messages) for field, messages in exc.message_dict.items()})
    if "username" not in errors and username_taken(user.get_username()):
        errors["username"] = _taken_message(user.get_username())
    if errors:
        raise PersonInvalid(errors)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError as exc:  # added by someone else since the check
        raise PersonInvalid({"username": _taken_message(user.get_username())}) from exc
    profile.user = user
    profile.save()
    user.groups.set(groups)
    return user


@transaction.atomic
def person_active_set(*, user: AbstractBaseUser, active: bool) -> AbstractBaseUser:
    """Deactivate (no login, no API token works) or reactivate a person; their past work stays."""
    user.is_active = active
    user.save(update_fields=["is_active"])
    if not active:
        Token.objects.filter(user=user).delete()
    return user


class _OnePersonResetForm(PasswordResetForm):
    """Django's reset form, sending to one chosen person rather than to every account with the address."""

    def __init__(self, *args, person: AbstractBaseUser, **kwargs):
        super().__init__(*args, **kwargs)
        self.person = person

    def get_users(self, email):
        return [self.person]

    def send_mail(self, subject_template_name, email_template_name, context, from_email, to_email, **kwargs):
        # Django's form logs a failed send and carries on; the manager must hear of it instead.
        subject = "".join(render_to_string(subject_template_name, context).splitlines())
        body = render_to_string(email_template_name, context)
        EmailMessage(subject, body, from_email, [to_email]).send()


def person_password_reset_send(*, user: AbstractBaseUser, domain: str, use_https: bool) -> None:
    """E-mail ``user`` a one-time link to set a new password (Django's reset token: it stops working once
    used, once the password changes, or after ``PASSWORD_RESET_TIMEOUT``)."""
    if not user.email:
        raise PersonInvalid(
            {
                "email": _("%(username)s has no e-mail address to send the link to.")
                % {"username": user.get_username()}
            }
        )
    if not user.is_active:
        raise PersonInvalid(
            {
                "is_active": _("%(username)s is deactivated; reactivate them first.")
                % {"username": user.get_username()}
            }
        )
    form = _OnePersonResetForm(data={"email": user.email}, person=user)
    if not form.is_valid():
        raise PersonInvalid({"email": " ".join(form.errors.get("email", []))})
    try:
        # Written in the person's language, not in the language of the manager's page that sends it.
        with translation.override(person_mail_language(user=user)):
            form.save(
                domain_override=domain,
                use_https=use_https,
                subject_template_name="registration/password_reset_subject.txt",
                email_template_name="registration/password_reset_email.txt",
            )
    except (smtplib.SMTPException, OSError) as exc:
        logger.warning("set-password e-mail to user %s not sent: %s", user.pk, exc)
        raise PersonInvalid(
            {
                "email": _("The e-mail to %(email)s could not be sent (%(error)s).")
                % {"email": user.email, "error": exc}
            }
        ) from exc


@transaction.atomic
def api_token_revoke(*, user: AbstractBaseUser) -> bool:
    """Delete ``user``'s API token; it is refused at once. False when they had none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


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
