"""DRF authentication for the API: tokens, and the browser session with its CSRF check."""

import drf_spectacular.authentication
from rest_framework import authentication


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication with the CSRF check made on Django's request.

    DRF hands its own request to Django's CSRF check, which reads ``request.POST``; on DRF's request that
    runs the view's parsers, so a body the view does not accept failed with 415 during authentication,
    before the permission check could answer 403 to a caller without the role. Django's request reads a
    form body only (the token of any other body comes from the ``X-CSRFToken`` header), and DRF takes the
    parsed form from it afterwards, so nothing is parsed twice.
    """

    def enforce_csrf(self, request):
        return super().enforce_csrf(request._request)


class SessionScheme(drf_spectacular.authentication.SessionScheme):
    """The OpenAPI schema describes it as the cookie session it is."""

    target_class = "config.authentication.SessionAuthentication"
