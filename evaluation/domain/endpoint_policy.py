"""Which API key variables and hosts a model endpoint may name: the deployment's allow-lists.

A worker reads the environment variable an endpoint names and sends its value as a Bearer token to the
endpoint's base URL. Without a rule, anyone who may create an endpoint could name ``SECRET_KEY`` or
``DATABASE_URL`` and point the endpoint at a server of theirs. So an endpoint may only name a variable that
starts with the deployment's prefix (``TIMBANG_MODEL_KEY_`` by default) or is on its explicit list, never one
of Timbang's own secrets; and, when the deployment lists hosts, only talk to those hosts.

Pure: the callers (model validator, API serializer, page form, admin, and the worker before it builds a
backend) pass the policy in, and turn a :class:`Refusal` into their own error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

DEFAULT_KEY_PREFIX = "TIMBANG_MODEL_KEY_"

# Variables that hold Timbang's own secrets: never sent to a model server, whatever the settings say.
RESERVED_NAMES = frozenset(
    {
        "SECRET_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "POSTGRES_PASSWORD",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
    }
)

_HOSTNAME = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$")


@dataclass(frozen=True)
class EndpointPolicy:
    """The deployment's rule. An empty ``key_prefix`` allows only ``key_names``; empty ``hosts``: any host."""

    key_prefix: str = DEFAULT_KEY_PREFIX
    key_names: frozenset[str] = field(default_factory=frozenset)
    hosts: tuple[str, ...] = ()

    @classmethod
    def build(
        cls, *, key_prefix: str, key_names: Iterable[str] = (), hosts: Iterable[str] = ()
    ) -> EndpointPolicy:
        return cls(
            key_prefix=key_prefix.strip(),
            key_names=frozenset(name.strip() for name in key_names if name.strip()),
            hosts=tuple(host.strip().lower() for host in hosts if host.strip()),
        )

    def key_rule(self) -> str:
        """The rule in words: 'names that start with TIMBANG_MODEL_KEY_ or one of A, B'."""
        parts = []
        if self.key_prefix:
            parts.append(f"names that start with {self.key_prefix}")
        if self.key_names:
            parts.append(f"one of {', '.join(sorted(self.key_names))}")
        return " or ".join(parts) if parts else "no variable at all in this deployment"


@dataclass(frozen=True)
class Refusal:
    """Why a value is refused. ``field`` is the endpoint field, ``code`` a stable name for the reason."""

    field: str
    code: str
    value: str
    rule: str

    @property
    def message(self) -> str:
        if self.code == "reserved_key_env":
            return (
                f"api_key_env: {self.value} holds one of Timbang's own secrets and is never sent to a model "
                f"server; allowed: {self.rule}."
            )
        if self.code == "key_env_not_allowed":
            return f"api_key_env: the environment variable {self.value} is not allowed; allowed: {self.rule}."
        if self.code == "bad_url":
            return f"base_url: {self.value!r} is not an http(s) URL with a plain host name; allowed hosts: {self.rule}."
        return f"base_url: the host of {self.value!r} is not allowed; allowed hosts: {self.rule}."


def api_key_env_refusal(name: str, policy: EndpointPolicy) -> Refusal | None:
    """None when an endpoint may name the environment variable ``name`` (empty: no key), else why not."""
    if not name:
        return None
    rule = policy.key_rule()
    if name in RESERVED_NAMES:
        return Refusal("api_key_env", "reserved_key_env", name, rule)
    by_prefix = bool(policy.key_prefix) and name.startswith(policy.key_prefix) and name != policy.key_prefix
    if by_prefix or name in policy.key_names:
        return None
    return Refusal("api_key_env", "key_env_not_allowed", name, rule)


def _host_allowed(host: str, port: int | None, allowed: str) -> bool:
    """``allowed`` is ``host``, ``host:port``, or ``.domain`` (the domain and every host under it)."""
    allowed_host, _, allowed_port = allowed.rpartition(":") if allowed.count(":") == 1 else (allowed, "", "")
    if allowed_port and (not allowed_port.isdigit() or int(allowed_port) != port):
        return False
    if allowed_host.startswith("."):
        return host == allowed_host[1:] or host.endswith(allowed_host)
    return host == allowed_host


def base_url_refusal(url: str, policy: EndpointPolicy) -> Refusal | None:
    """None when an endpoint may send requests to ``url`` (any host when the policy lists none)."""
    if not policy.hosts or not url:
        return None
    rule = ", ".join(policy.hosts)
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return Refusal("base_url", "bad_url", url, rule)
    host = (parts.hostname or "").lower()
    # User info or a backslash in the authority can make parsers disagree about the host: never allowed.
    if (
        parts.scheme not in ("http", "https")
        or "@" in parts.netloc
        or "\\" in url
        or not _HOSTNAME.match(host if ":" not in host else f"[{host}]")
    ):
        return Refusal("base_url", "bad_url", url, rule)
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    if any(_host_allowed(host, port, allowed) for allowed in policy.hosts):
        return None
    return Refusal("base_url", "host_not_allowed", url, rule)


def endpoint_refusals(*, api_key_env: str, base_url: str, policy: EndpointPolicy) -> list[Refusal]:
    """Every reason the policy refuses an endpoint naming ``api_key_env`` and sending to ``base_url``."""
    found = [api_key_env_refusal(api_key_env, policy), base_url_refusal(base_url, policy)]
    return [refusal for refusal in found if refusal is not None]
