"""The site icon is served, and every page links it."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_favicon_is_served_as_an_icon():
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    body = b"".join(response.streaming_content)
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO header with one image or more
    assert Client().post("/favicon.ico").status_code == 405


def test_pages_link_the_icon(role_client):
    html = Client().get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in html
    assert '<link rel="icon" href="/static/favicon.ico"' in html


def test_the_redoc_bundle_points_its_logo_at_our_icon():
    response = Client().get("/api/redoc/redoc.standalone.js")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/javascript")
    body = response.content.decode()
    assert "cdn.redoc.ly" not in body and '"/static/favicon.svg"' in body
    page = Client().get("/api/redoc/").content.decode()
    assert 'src="/api/redoc/redoc.standalone.js"' in page and "googleapis" not in page
