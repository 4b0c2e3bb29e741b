"""The pure half of login throttling: who is logging in from where, and under which keys it is counted.

No Django here. The client address is resolved from plain header values, and time comes in as numbers.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
from dataclasses import dataclass

UNKNOWN_ADDRESS = "unknown"


def header_meta_key(header: str) -> str:
    """The WSGI ``META`` key of an HTTP request header: ``X-Forwarded-For`` -> ``HTTP_X_FORWARDED_FOR``."""
    return "HTTP_" + header.strip().upper().replace("-", "_")


def _parse_address(value: str) -> str | None:
    """``value`` as a canonical IP address, a port and IPv6 brackets removed; ``None`` when it is none."""
    text = value.strip()
    if text.startswith("[") and "]" in text:  # [2001:db8::1]:443
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # 203.0.113.7:5678
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address)


def client_address(*, remote_addr: str, forwarded: str | None, trusted_proxies: int) -> str:
    """The address of the client that sent a request.

    ``forwarded`` is the value of the one header the deployment names as written by its reverse proxies
    (``None`` when no header is configured or the request has none); ``trusted_proxies`` is how many of
    them stand in front of the application. Each proxy appends the address it received the request from,
    so the client is the ``trusted_proxies``-th entry from the right; entries left of it were written by
    the client and are never believed. With fewer entries than trusted proxies the request did not come
    through all of them, and the connecting address is used.
    """
    remote = _parse_address(remote_addr or "") or (remote_addr or "").strip() or UNKNOWN_ADDRESS
    if forwarded is None or trusted_proxies < 1:
        return remote
    hops = [hop for hop in (part.strip() for part in forwarded.split(",")) if hop]
    if len(hops) < trusted_proxies:
        return remote
    return _parse_address(hops[-trusted_proxies]) or remote


def address_scope(address: str) -> str:
    """What one client controls: an IPv4 address, or the /64 network of an IPv6 address.

    An IPv6 client is usually given a whole /64, so counting single IPv6 addresses would let it change
    address at every attempt.
    """
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


@dataclass(frozen=True)
class ThrottleKeys:
    """Names under which failed logins are counted."""

    account: str  # this username from this client
    address: str  # any username from this client


def throttle_keys(*, username: str, address: str) -> ThrottleKeys:
    """Keys for a login as ``username`` from ``address``.

    The username is case-folded (``Ani`` and ``ani`` share a count) and hashed, so the key has a bounded
    length and no characters a cache could refuse, and usernames are not stored in the cache in clear.
    """
    scope = address_scope(address)
    digest = hashlib.sha256(f"{username.strip().casefold()}\0{scope}".encode()).hexdigest()
    return ThrottleKeys(account=f"account:{digest}", address=f"address:{scope}")


def retry_after_seconds(*, locked_until: float, now: float) -> int:
    """Whole seconds until a lock that ends at ``locked_until`` lifts (at least 1)."""
    return max(1, math.ceil(locked_until - now))
