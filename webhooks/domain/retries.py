"""When to try a failed delivery again."""

from __future__ import annotations

# Answers after which another attempt may succeed; any other 4xx is the receiver refusing the message
# (tried again anyway: a receiver being deployed answers 404 for a while), but 2xx ends the delivery.
SUCCESS = range(200, 300)


def retry_delay_s(
    attempt: int, *, base_s: float, cap_s: float, jitter: float, retry_after_s: float | None = None
) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based): ``base_s * 2**(attempt-1)``
    capped at ``cap_s``, spread by ``jitter`` (a number in [0, 1) passed in: the wait is between 75% and
    125% of it), or the receiver's ``Retry-After`` when it asked for longer (still capped)."""
    if attempt < 1:
        raise ValueError("attempt numbers start at 1")
    delay = min(cap_s, base_s * 2 ** (attempt - 1)) * (0.75 + 0.5 * jitter)
    if retry_after_s is not None and retry_after_s > delay:
        delay = retry_after_s
    return min(cap_s, delay)


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header given in seconds (an HTTP date is ignored: None)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def payload(*, event: str, timestamp_iso: str, data: dict) -> dict:
    """The body of a delivery: the event type, when it happened and its data (Standard Webhooks' shape)."""
    return {"type": event, "timestamp": timestamp_iso, "data": data}
