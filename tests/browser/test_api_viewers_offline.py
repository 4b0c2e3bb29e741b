"""Swagger UI and Redoc load whole without asking any other host (no CDN logo, no web fonts)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

LOCAL = {"127.0.0.1", "localhost"}


@pytest.mark.parametrize(
    ("url", "ready"),
    [("/api/docs/", ".swagger-ui .opblock-tag"), ("/api/redoc/", ".api-content h1")],
)
def test_api_viewer_makes_no_request_to_another_host(page, url, ready):
    outside: list[str] = []

    def watch(request):
        host = urlsplit(request.url).hostname
        if request.url.startswith(("http://", "https://")) and host not in LOCAL:
            outside.append(request.url)

    page.on("request", watch)
    # Anything that would leave is answered here, so a regression is reported rather than hanging the page.
    page.route(
        lambda u: urlsplit(u).hostname not in LOCAL and u.startswith("http"), lambda r: r.fulfill(body="")
    )
    page.goto(url)
    page.wait_for_selector(ready)
    page.wait_for_load_state("networkidle")
    assert outside == []
    if url == "/api/redoc/":
        logo = page.locator('img[alt="redocly logo"]')
        assert logo.count() == 0 or urlsplit(logo.first.get_attribute("src")).hostname is None
