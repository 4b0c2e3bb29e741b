"""Standard Webhooks signatures (https://www.standardwebhooks.com/, specification version 1).

A message is signed with each of the endpoint's current secrets: ``webhook-signature`` holds
``v1,<base64 HMAC-SHA256>`` of ``"{webhook-id}.{webhook-timestamp}.{body}"`` for each, separated by spaces
(two while a rotated-out secret is still honoured). A secret is ``whsec_`` followed by the base64 of its
key bytes. Time and randomness are parameters.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping, Sequence

SECRET_PREFIX = "whsec_"
MESSAGE_PREFIX = "msg_"
SIGNATURE_VERSION = "v1"
# Receivers should refuse a timestamp further than this from their clock (the specification's advice).
DEFAULT_TOLERANCE_S = 5 * 60


class SignatureError(ValueError):
    """A secret or a signed message that does not check out; the text says which part."""


def secret_from_bytes(key: bytes) -> str:
    """A secret in the specification's format from random key bytes (24 to 64 of them)."""
    if not 24 <= len(key) <= 64:
        raise SignatureError(f"a secret key has 24 to 64 bytes, got {len(key)}")
    return SECRET_PREFIX + base64.b64encode(key).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The key bytes of a ``whsec_`` secret."""
    if not secret.startswith(SECRET_PREFIX):
        raise SignatureError(f"a secret starts with {SECRET_PREFIX!r}")
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SignatureError("the part of the secret after 'whsec_' is not base64") from exc


def message_id_from_bytes(raw: bytes) -> str:
    return MESSAGE_PREFIX + raw.hex()


def signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """One ``v1,<base64>`` signature of the message."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode('ascii')}"


def signed_headers(*, secrets: Sequence[str], message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three headers of a delivery, signed with every secret in ``secrets`` (newest first)."""
    if not secrets:
        raise SignatureError("at least one secret is needed to sign")
    signatures = [signature(secret=s, message_id=message_id, timestamp=timestamp, body=body) for s in secrets]
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signatures),
    }


def verify(
    *,
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    now: int,
    tolerance_s: int = DEFAULT_TOLERANCE_S,
) -> None:
    """Check a received message as a receiver would; raises :class:`SignatureError` saying what failed.

    ``headers`` keys are matched case-insensitively."""
    lowered = {key.lower(): value for key, value in headers.items()}
    missing = [
        name for name in ("webhook-id", "webhook-timestamp", "webhook-signature") if name not in lowered
    ]
    if missing:
        raise SignatureError(f"missing header(s): {', '.join(missing)}")
    try:
        timestamp = int(lowered["webhook-timestamp"])
    except ValueError as exc:
        raise SignatureError("webhook-timestamp is not a whole number of seconds") from exc
    if abs(now - timestamp) > tolerance_s:
        raise SignatureError(f"webhook-timestamp is more than {tolerance_s} s from now")
    expected = signature(secret=secret, message_id=lowered["webhook-id"], timestamp=timestamp, body=body)
    for candidate in lowered["webhook-signature"].split(" "):
        if candidate.startswith(f"{SIGNATURE_VERSION},") and hmac.compare_digest(candidate, expected):
            return
    raise SignatureError("no v1 signature in webhook-signature matches the body")
