"""Writes of webhooks: endpoints (create, update, delete, rotate the secret), deliveries recorded when an event
happens, one attempt of a delivery, and manual redelivery.

Events arrive through ``accounts.events.event_emitted`` in the emitter's transaction: the deliveries are
rows written with the change that caused them, and their tasks are queued when it commits, so an event is
never lost to a worker that dies. Which projects have endpoints for which events is kept in the cache
(rebuilt on a miss, dropped on every endpoint write), so the annotation loop asks the database nothing
when nobody listens.
"""

from __future__ import annotations

import json
import random
import secrets as secrets_module
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

if TYPE_CHECKING:  # httpx is imported where a delivery is sent: every process loads this module at start
    import httpx

from accounts.events import EVENT_NAMES, PROJECT_COMPLETED, TASK_SUBMITTED
from accounts.refusals import Refused
from annotation.models import Project, TaskSlot
from datasets_app.jobs import task_named
from webhooks.domain.addresses import Target, WebhookUrlRefused, address_refusal, url_target
from webhooks.domain.retries import SUCCESS, payload, retry_after_seconds, retry_delay_s
from webhooks.domain.signing import message_id_from_bytes, secret_from_bytes, signed_headers
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint

SUBSCRIPTIONS_KEY = "webhooks:subscriptions:v1"
DELIVERY_TASK = "webhooks.delivery_send"
USER_AGENT = "Timbang-Webhooks/1"


class WebhookInvalid(Refused):
    """What a manager asked for cannot be saved; ``errors`` maps fields to their English messages (the
    API's answer), ``reasons`` to the refusals themselves, which a page shows in its language
    (``accounts.refusals.shown``); with one field, ``shown`` of the exception shows its reason."""

    def __init__(self, errors: dict[str, str | Refused | WebhookUrlRefused]):
        self.reasons = dict(errors)
        self.errors = {field: str(reason) for field, reason in errors.items()}
        super().__init__("; ".join(f"{field}: {message}" for field, message in self.errors.items()))
        if len(self.reasons) == 1:
            (reason,) = self.reasons.values()
            self.message = getattr(reason, "message", reason)
            self.params = getattr(reason, "params", {})


# -- settings --------------------------------------------------------------------------------------------


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def max_attempts() -> int:
    return int(_setting("WEBHOOK_MAX_ATTEMPTS", 6))


# -- URL checks ------------------------------------------------------------------------------------------


def host_addresses(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (empty when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return []
    return sorted({info[4][0] for info in infos})


def url_checked(url: str) -> tuple[Target, list[str]]:
    """The URL's target and the addresses its host resolves to, when it may receive webhooks now: its
    form, the host allow-list, and every address public (private, loopback and reserved addresses refused
    unless in ``WEBHOOK_ALLOWED_NETWORKS``). Raises ``WebhookUrlRefused`` saying why not."""
    target = url_target(
        url,
        allowed_hosts=_setting("WEBHOOK_ALLOWED_HOSTS", []),
        https_only=_setting("WEBHOOK_HTTPS_ONLY", False),
    )
    addresses = host_addresses(target.host, target.port)
    refusal = address_refusal(addresses, allowed_networks=_setting("WEBHOOK_ALLOWED_NETWORKS", []))
    if refusal:
        raise WebhookUrlRefused("%(host)s: %(reason)s", host=target.host, reason=refusal)
    return target, addresses


def url_refusal(url: str) -> WebhookUrlRefused | None:
    """Why ``url`` may not receive webhooks now (None: it may); see :func:`url_checked`."""
    try:
        url_checked(url)
    except WebhookUrlRefused as exc:
        return exc
    return None


def _events_checked(events: list[str]) -> list[str]:
    unknown = [name for name in events if name not in EVENT_NAMES]
    if unknown:
        unknown_text = Refused(
            gettext_noop("unknown event(s) %(unknown)s; known: %(known)s"),
            unknown=", ".join(unknown),
            known=", ".join(EVENT_NAMES),
        )
        raise WebhookInvalid({"events": unknown_text})
    if not events:
        raise WebhookInvalid({"events": Refused(gettext_noop("choose at least one event"))})
    return [name for name in EVENT_NAMES if name in events]


def _url_checked(url: str) -> str:
    refusal = url_refusal(url)
    if refusal:
        raise WebhookInvalid({"url": refusal})
    return url.strip()


# -- endpoints -------------------------------------------------------------------------------------------


def _secret_new() -> str:
    return secret_from_bytes(secrets_module.token_bytes(32))


def subscriptions_forget() -> None:
    transaction.on_commit(lambda: cache.delete(SUBSCRIPTIONS_KEY))
    cache.delete(SUBSCRIPTIONS_KEY)


@transaction.atomic
def webhook_create(
    *, project: Project | None = None, url: str, events: list[str], description: str = "", created_by=None
) -> WebhookEndpoint:
    hook = WebhookEndpoint.objects.create(
        project=project,
        url=_url_checked(url),
        events=_events_checked(list(events)),
        description=description.strip()[:200],
        secret=_secret_new(),
        created_by=created_by,
    )
    subscriptions_forget()
    return hook


@transaction.atomic
def webhook_update(
    *,
    hook: WebhookEndpoint,
    url: str | None = None,
    events: list[str] | None = None,
    description: str | None = None,
    active: bool | None = None,
) -> WebhookEndpoint:
    fields = []
    if url is not None:
        hook.url = _url_checked(url)
        fields.append("url")
    if events is not None:
        hook.events = _events_checked(list(events))
        fields.append("events")
    if description is not None:
        hook.description = description.strip()[:200]
        fields.append("description")
    if active is not None:
        hook.active = active
        fields.append("active")
    if fields:
        hook.save(update_fields=fields)
        subscriptions_forget()
    return hook


@transaction.atomic
def webhook_delete(*, hook: WebhookEndpoint) -> None:
    hook.delete()
    subscriptions_forget()


@transaction.atomic
def webhook_secret_rotate(*, hook: WebhookEndpoint, now: datetime | None = None) -> WebhookEndpoint:
    """A new secret; the old one keeps signing beside it for ``WEBHOOK_SECRET_OVERLAP_HOURS`` so a receiver
    can switch without refusing a message."""
    now = now or timezone.now()
    hook = WebhookEndpoint.objects.select_for_update().get(pk=hook.pk)
    hook.previous_secret = hook.secret
    hook.previous_secret_until = now + timedelta(hours=float(_setting("WEBHOOK_SECRET_OVERLAP_HOURS", 24)))
    hook.secret = _secret_new()
    hook.save(update_fields=["secret", "previous_secret", "previous_secret_until"])
    return hook


def signing_secrets(hook: WebhookEndpoint, now: datetime) -> list[str]:
    """The secrets that sign now: the current one, and the rotated-out one during its overlap."""
    found = [hook.secret]
    if hook.previous_secret and hook.previous_secret_until and hook.previous_secret_until > now:
        found.append(hook.previous_secret)
    return found


# -- deliveries recorded on events -----------------------------------------------------------------------


def _subscriptions() -> dict[str, list[int | None]]:
    """Event name -> projects (None: the site-wide endpoints) that have an active endpoint for it."""
    found = cache.get(SUBSCRIPTIONS_KEY)
    if found is None:
        found = {}
        for project_id, events in WebhookEndpoint.objects.filter(active=True).values_list(
            "project_id", "events"
        ):
            for name in events:
                found.setdefault(name, [])
                if project_id not in found[name]:
                    found[name].append(project_id)
        cache.set(SUBSCRIPTIONS_KEY, found, None)
    return found


def _listening(name: str, project_id: int | None) -> bool:
    projects = _subscriptions().get(name, ())
    return None in projects or (project_id is not None and project_id in projects)


def project_is_complete(project_id: int) -> bool:
    """Every place of every group on every task is submitted."""
    slots = TaskSlot.objects.filter(project_id=project_id)
    return slots.exists() and not slots.filter(submitted_count__lt=F("capacity")).exists()


def deliveries_record(
    *, name: str, project_id: int | None, data: dict[str, Any], now: datetime | None = None
) -> list[WebhookDelivery]:
    """A pending delivery for each active endpoint listening to ``name`` (the project's and the site-wide
    ones), their tasks queued on commit."""
    if not _listening(name, project_id):
        return []
    now = now or timezone.now()
    candidates = WebhookEndpoint.objects.filter(Q(project=None) | Q(project_id=project_id), active=True)
    hooks = [h for h in candidates if name in h.events]
    if name == PROJECT_COMPLETED:
        # Once per endpoint and project: a later edit or reopened task does not complete it again.
        done = set(
            WebhookDelivery.objects.filter(
                endpoint__in=hooks,
                event=PROJECT_COMPLETED,
                redelivery_of=None,
                payload__data__project=project_id,
            ).values_list("endpoint_id", flat=True)
        )
        hooks = [h for h in hooks if h.pk not in done]
    body = payload(event=name, timestamp_iso=now.isoformat(), data=data)
    message_id = message_id_from_bytes(secrets_module.token_bytes(12))
    created = WebhookDelivery.objects.bulk_create(
        [WebhookDelivery(endpoint=h, event=name, message_id=message_id, payload=body) for h in hooks]
    )
    if created and not all(d.pk for d in created):  # backends that do not return ids
        created = list(WebhookDelivery.objects.filter(message_id=message_id))
    ids = [d.pk for d in created]
    transaction.on_commit(lambda: [task_named(DELIVERY_TASK).delay(pk) for pk in ids])
    return created


def deliveries_record_on_event(*, name: str, project_id: int | None, data: dict[str, Any], **_kwargs) -> None:
    """The ``event_emitted`` receiver. A submitted task of a listened-to project may also complete it."""
    deliveries_record(name=name, project_id=project_id, data=data)
    if (
        name == TASK_SUBMITTED
        and project_id is not None
        and _listening(PROJECT_COMPLETED, project_id)
        and project_is_complete(project_id)
    ):
        deliveries_record(name=PROJECT_COMPLETED, project_id=project_id, data={"project": project_id})


# -- sending ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttemptOutcome:
    delivery: WebhookDelivery
    # Seconds until the next attempt; None when the delivery ended (delivered, or out of attempts).
    retry_in: float | None


def _body(delivery: WebhookDelivery) -> bytes:
    return json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _post(url: str, *, target: Target, address: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """POST to the address that was checked, not to whatever the host resolves to a moment later: the URL's
    host is replaced by ``address``, the ``Host`` header and (for https) the TLS server name and certificate
    check keep the host's name."""
    parts = urlsplit(url)
    literal = f"[{address}]" if ":" in address else address
    pinned = urlunsplit((parts.scheme, f"{literal}:{target.port}", parts.path or "/", parts.query, ""))
    default_port = 443 if target.scheme == "https" else 80
    headers = headers | {
        "host": target.host if target.port == default_port else f"{target.host}:{target.port}"
    }
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    verify = _setting("WEBHOOK_CA_BUNDLE", "") or True
    import httpx

    with httpx.Client(
        timeout=float(_setting("WEBHOOK_TIMEOUT_S", 10)), follow_redirects=False, verify=verify
    ) as client:
        return client.post(pinned, content=body, headers=headers, extensions=extensions)


def delivery_attempt(*, delivery: WebhookDelivery, now: datetime | None = None) -> AttemptOutcome:
    """Send ``delivery`` once and log the attempt. The URL is checked again first (its host may resolve
    elsewhere since it was saved). Not in a transaction: the request may take seconds."""
    now = now or timezone.now()
    hook = delivery.endpoint
    number = WebhookAttempt.objects.filter(delivery=delivery).count() + 1
    body = _body(delivery)
    status_code = None
    error = ""
    excerpt = ""
    retry_after = None
    started = time.monotonic()
    import httpx

    try:
        if not hook.active:
            raise WebhookUrlRefused(gettext_noop("the endpoint is switched off"))
        target, addresses = url_checked(hook.url)
    except WebhookUrlRefused as exc:
        error = f"refused: {exc}"
    else:
        headers = signed_headers(
            secrets=signing_secrets(hook, now),
            message_id=delivery.message_id,
            timestamp=int(now.timestamp()),
            body=body,
        )
        headers |= {"content-type": "application/json", "user-agent": USER_AGENT}
        try:
            answer = _post(hook.url, target=target, address=addresses[0], body=body, headers=headers)
            status_code = answer.status_code
            excerpt = answer.text[:500]
            retry_after = retry_after_seconds(answer.headers.get("retry-after"))
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:2000]
    duration_ms = int((time.monotonic() - started) * 1000)
    delivered = status_code in SUCCESS
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            at=now,
            status_code=status_code,
            error=error,
            duration_ms=duration_ms,
            response_excerpt=excerpt,
        )
        delivery.attempts = number
        delivery.last_status_code = status_code
        delivery.last_error = error
        retry_in = None
        if delivered:
            delivery.status = WebhookDelivery.Status.SUCCEEDED
            delivery.finished_at = timezone.now()
            delivery.next_attempt_at = None
        elif number >= max_attempts() or error.startswith("refused:"):
            delivery.status = WebhookDelivery.Status.FAILED
            delivery.finished_at = timezone.now()
            delivery.next_attempt_at = None
        else:
            retry_in = retry_delay_s(
                number,
                base_s=float(_setting("WEBHOOK_RETRY_BASE_S", 30)),
                cap_s=float(_setting("WEBHOOK_RETRY_CAP_S", 3600)),
                jitter=random.random(),
                retry_after_s=retry_after,
            )
            delivery.next_attempt_at = now + timedelta(seconds=retry_in)
        delivery.save(
            update_fields=[
                "attempts",
                "last_status_code",
                "last_error",
                "status",
                "finished_at",
                "next_attempt_at",
            ]
        )
    return AttemptOutcome(delivery=delivery, retry_in=retry_in)


def deliveries_requeue_stale(*, now: datetime | None = None) -> list[int]:
    """Queue again the pending deliveries whose next attempt is ``WEBHOOK_STALE_AFTER_S`` overdue (or that
    were never attempted that long after they were made): their task was lost with a broker's queue. A
    delivery sent twice this way reaches the receiver with the same ``webhook-id``."""
    now = now or timezone.now()
    overdue = now - timedelta(seconds=float(_setting("WEBHOOK_STALE_AFTER_S", 900)))
    ids = list(
        WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING)
        .filter(Q(next_attempt_at__lt=overdue) | Q(next_attempt_at=None, created_at__lt=overdue))
        .values_list("pk", flat=True)[:1000]
    )
    for pk in ids:
        task_named(DELIVERY_TASK).delay(pk)
    return ids


@transaction.atomic
def webhook_redeliver(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery's message again (same id and body, signed anew), as a new delivery with its own log."""
    hook = WebhookEndpoint.objects.get(pk=delivery.endpoint_id)
    if not hook.active:
        switched_off = Refused(gettext_noop("the endpoint is switched off; switch it on to redeliver"))
        raise WebhookInvalid({"endpoint": switched_off})
    again = WebhookDelivery.objects.create(
        endpoint=hook,
        event=delivery.event,
        message_id=delivery.message_id,
        payload=delivery.payload,
        redelivery_of=delivery,
    )
    transaction.on_commit(lambda: task_named(DELIVERY_TASK).delay(again.pk))
    return again
