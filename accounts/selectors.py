"""Reads of the accounts app: people, where a login comes from, and whether it is locked."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from accounts.domain.login_throttle import client_address, header_meta_key, throttle_keys
from accounts.domain.mail_language import mail_language
from accounts.models import Profile
from accounts.roles import PRIVILEGED_ROLES
from accounts.sql import prepared_cursor, user_columns

LOGIN_THROTTLE_PREFIX = "login-throttle"

# Django marks a password nobody can log in with by starting it with "!" (``set_unusable_password``): the
# demo's simulated annotators have one, and so does any account that only exists to hold data.
UNUSABLE_PASSWORD_PREFIX = "!"


def real_users() -> QuerySet[AbstractBaseUser]:
    """Active people who can log in: the ones a manager may put in a project (never simulated users)."""
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .exclude(Q(password__startswith=UNUSABLE_PASSWORD_PREFIX) | Q(password=""))
    )


def username_taken(username: str) -> bool:
    """Whether an account has ``username`` in any case (``Admin`` is taken when ``admin`` exists)."""
    return get_user_model().objects.filter(username__iexact=username.strip()).exists()


def person_is_privileged(person: AbstractBaseUser) -> bool:
    """Administrators, project managers and researchers: people only an administrator may deactivate or
    reset. Reads ``person.groups.all()`` (prefetched by :func:`people_list`)."""
    if person.is_staff or person.is_superuser:
        return True
    return any(group.name in PRIVILEGED_ROLES for group in person.groups.all())


def people_list(*, query: str = "") -> QuerySet[AbstractBaseUser]:
    """Everyone who can log in or could again (deactivated people included), with their groups and
    language, filtered by ``query`` on username, name or e-mail."""
    people = (
        get_user_model()
        .objects.exclude(Q(password__startswith=UNUSABLE_PASSWORD_PREFIX) | Q(password=""))
        .select_related("profile")
        .prefetch_related("groups")
        .order_by("-is_active", "username")
    )
    if query:
        people = people.filter(
            Q(username__icontains=query)
            | Q(first_name__icontains=query)
            | Q(last_name__icontains=query)
            | Q(email__icontains=query)
        )
    return people


def request_client_address(request: HttpRequest) -> str:
    """The client's address: from the trusted proxy header when one is configured, else ``REMOTE_ADDR``.

    Only the header named by ``TRUSTED_PROXY_HEADER`` is read, and only its last ``TRUSTED_PROXY_COUNT``
    entries are believed (see ``accounts.domain.login_throttle.client_address``).
    """
    header = settings.TRUSTED_PROXY_HEADER
    forwarded = request.META.get(header_meta_key(header)) if header else None
    return client_address(
        remote_addr=request.META.get("REMOTE_ADDR", ""),
        forwarded=forwarded,
        trusted_proxies=settings.TRUSTED_PROXY_COUNT,
    )


def login_throttle_limits(*, username: str, address: str) -> list[tuple[str, str, int]]:
    """``(kind, key, failure limit)`` for each key a login as ``username`` from ``address`` is counted under."""
    keys = throttle_keys(username=username, address=address)
    return [
        ("account", keys.account, settings.LOGIN_FAILURE_LIMIT),
        ("address", keys.address, settings.LOGIN_ADDRESS_FAILURE_LIMIT),
    ]


def login_failures_cache_key(key: str) -> str:
    return f"{LOGIN_THROTTLE_PREFIX}:failures:{key}"


def login_lock_cache_key(key: str) -> str:
    return f"{LOGIN_THROTTLE_PREFIX}:lock:{key}"


def login_locked_until(*, username: str, address: str, now: float) -> float | None:
    """When the lock on this login ends (a Unix time), or ``None`` when neither of its keys is locked."""
    lock_keys = [
        login_lock_cache_key(key) for _, key, _ in login_throttle_limits(username=username, address=address)
    ]
    ends = [end for end in cache.get_many(lock_keys).values() if end > now]
    return max(ends) if ends else None


def person_mail_language(*, user: AbstractBaseUser) -> str:
    """The interface language (``en``, ``id``) to write to ``user`` in, from the language they work in."""
    profile = Profile.objects.filter(user=user).only("language").first()
    return mail_language(
        profile.language if profile else "",
        interface_languages=tuple(code for code, _name in settings.LANGUAGES),
        default=settings.LANGUAGE_CODE,
    )


def user_with_roles(user_id: object) -> AbstractBaseUser | None:
    """The user ``user_id`` with their roles already read (``accounts.roles.user_roles``): one statement
    for what a logged-in page request reads about its caller (the session's user, then their roles)."""
    user_model = get_user_model()
    try:
        user_id = user_model._meta.pk.to_python(user_id)
    except ValidationError:
        return None
    conn = connections[DEFAULT_DB_ALIAS]
    columns = user_columns(conn)
    quote = conn.ops.quote_name
    sql = (
        f"SELECT {columns.select} FROM {quote(user_model._meta.db_table)} u"
        f" WHERE u.{quote(user_model._meta.pk.column)} = %s"
    )
    with prepared_cursor() as cursor:
        cursor.execute(sql, [*columns.params, user_id])
        row = cursor.fetchone()
    return None if row is None else columns.user(row, conn)
