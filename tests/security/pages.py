"""The HTML pages of the permission matrix that each role may open, for the tests that look at every page
(the Content-Security-Policy header here, and the same pages in Chromium in tests/browser/).

The list is read from ``PAGES`` in test_permission_matrix.py: every GET row whose cell lets the role in
(``A`` or ``P``), with the row's own URL arguments, plus the API viewers, which the matrix tests apart.
Responses that are not HTML (CSV and zip downloads) are left out by asking the server once.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.test import Client
from django.urls import reverse

from tests.security.conftest import ROLES, World
from tests.security.test_permission_matrix import PAGES

SEEN = {"A", "P"}
# Public by design and kept out of the matrix (test_schema_and_language_switch_are_public).
API_VIEWERS = ("api-docs", "api-redoc")


@dataclass(frozen=True)
class Page:
    role: str
    name: str
    url: str


def client_for(world: World, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(world.users[role])
    return client


def matrix_pages(world: World) -> list[Page]:
    """Every (role, GET page) the matrix allows, the API viewers for every role, in ROLES order."""
    pages = []
    for role_index, role in enumerate(ROLES):
        for name, row in sorted(PAGES.items()):
            if row.method == "GET" and row.cells.split()[role_index] in SEEN:
                pages.append(Page(role, name, reverse(name, kwargs=row.kwargs(world))))
        pages.extend(Page(role, name, reverse(name)) for name in API_VIEWERS)
    return pages


def is_html(response) -> bool:
    return response.get("Content-Type", "").startswith("text/html")


def html_pages(world: World) -> list[Page]:
    """The matrix pages whose response is an HTML page (downloads left out)."""
    clients = {role: client_for(world, role) for role in ROLES}
    return [page for page in matrix_pages(world) if is_html(clients[page.role].get(page.url))]
