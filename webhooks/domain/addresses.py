"""Where a webhook may be sent: the URL's form, the allow-list of hosts, and the addresses a host resolves to.

A webhook is an outbound request whose target a user chooses, so by default it may only reach public
addresses: every address the host resolves to must be global, unless it lies in a network the site
allows (``WEBHOOK_ALLOWED_NETWORKS``). Resolution is done by the caller and passed in.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_LENGTH = 500


class WebhookUrlRefused(ValueError):
    """The URL may not receive webhooks; the text says why.

    ``message`` is the English text with ``%(name)s`` places and ``params`` their values, kept apart so that a
    page can show the reason in its own language (``accounts.refusals.shown``); ``str()`` is the English text
    filled in (a list of alternatives joined with "or"), as the API, the commands and the delivery log keep it.
    """

    def __init__(self, message: str, **params: object) -> None:
        self.message = message
        self.params = params
        filled = {
            k: " or ".join(map(str, v)) if isinstance(v, list | tuple) else v for k, v in params.items()
        }
        super().__init__(message % filled if params else message)


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int


def url_target(url: str, *, allowed_hosts: Sequence[str] = (), https_only: bool = False) -> Target:
    """The scheme, host and port of ``url`` when its form and host are acceptable.

    ``allowed_hosts`` (empty: any host) holds ``host``, ``host:port`` or ``.domain`` (the domain and its
    subdomains), as ``MODEL_ENDPOINT_HOSTS`` does for model endpoints."""
    if len(url) > MAX_URL_LENGTH:
        raise WebhookUrlRefused("the URL is longer than %(n)s characters", n=MAX_URL_LENGTH)
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise WebhookUrlRefused("the URL cannot be read: %(error)s", error=str(exc)) from exc
    schemes = ("https",) if https_only else ("http", "https")
    if parts.scheme not in schemes:
        raise WebhookUrlRefused("the URL must start with %(schemes)s", schemes=[f"{s}://" for s in schemes])
    if not parts.hostname:
        raise WebhookUrlRefused("the URL has no host")
    if parts.username or parts.password:
        raise WebhookUrlRefused("the URL may not hold a user name or password")
    host = parts.hostname.lower().rstrip(".")
    port = port or (443 if parts.scheme == "https" else 80)
    if allowed_hosts and not host_allowed(host, port, allowed_hosts):
        raise WebhookUrlRefused(
            "%(host)s:%(port)s is not in the site's list of webhook hosts", host=host, port=port
        )
    return Target(scheme=parts.scheme, host=host, port=port)


def host_allowed(host: str, port: int, allowed: Sequence[str]) -> bool:
    for entry in allowed:
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry.startswith("."):
            if host == entry[1:] or host.endswith(entry):
                return True
        elif ":" in entry and not entry.startswith("["):
            name, _, entry_port = entry.rpartition(":")
            if host == name and str(port) == entry_port:
                return True
        elif host == entry.strip("[]"):
            return True
    return False


def _networks(allowed_networks: Sequence[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    try:
        return [ipaddress.ip_network(n.strip(), strict=False) for n in allowed_networks if n.strip()]
    except ValueError as exc:
        raise WebhookUrlRefused(
            "WEBHOOK_ALLOWED_NETWORKS holds something that is not a network: %(error)s", error=str(exc)
        ) from exc


def address_refusal(
    addresses: Sequence[str], *, allowed_networks: Sequence[str] = ()
) -> WebhookUrlRefused | None:
    """Why a host with these resolved addresses may not be reached (None: it may). Every address is
    checked: one private address among public ones refuses the host."""
    if not addresses:
        return WebhookUrlRefused("the host has no address")
    networks = _networks(allowed_networks)
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in networks):
            continue
        if not address.is_global or address.is_multicast or address.is_unspecified:
            return WebhookUrlRefused("%(address)s is a private, loopback or reserved address", address=text)
    return None
