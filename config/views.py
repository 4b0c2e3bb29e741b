"""The home page: each role's entry points, and an annotator's projects with their progress; the site icon
at ``/favicon.ico``, where browsers and crawlers ask for it whatever the page says."""

import functools

from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe
from drf_spectacular.views import SpectacularRedocView

from accounts.roles import user_roles
from annotation.selectors import annotator_projects
from demo.selectors import demo_model_state


@login_required
def home(request):
    roles = sorted(user_roles(request.user))
    projects = annotator_projects(user=request.user) if "annotator" in roles else []
    context = {"roles": roles, "annotator_projects": projects, "demo_model": demo_model_state()}
    return render(request, "home.html", context)


@require_safe
@cache_control(max_age=7 * 24 * 3600, public=True)
def favicon(request):
    path = finders.find("favicon.ico")
    if path is None:
        raise Http404("favicon.ico")
    return FileResponse(open(path, "rb"), content_type="image/x-icon")  # noqa: SIM115 - FileResponse closes it


# Redoc's bundle shows a logo from Redocly's CDN in its sidebar, with no option to turn it off; the bundle is
# served from here with that one address pointing at our own icon, so the API pages ask no other host.
REDOC_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
REDOC_REMOTE_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


@functools.cache
def _redoc_bundle() -> bytes:
    path = finders.find(REDOC_BUNDLE)
    if path is None:
        raise Http404(REDOC_BUNDLE)
    with open(path, encoding="utf-8") as handle:
        return handle.read().replace(REDOC_REMOTE_LOGO, static("favicon.svg")).encode()


@require_safe
@cache_control(max_age=24 * 3600, public=True)
def redoc_bundle(request):
    return HttpResponse(_redoc_bundle(), content_type="text/javascript; charset=utf-8")


class RedocView(SpectacularRedocView):
    """drf-spectacular's Redoc page loading the bundle above."""

    @staticmethod
    def _redoc_standalone() -> str:
        return reverse("api-redoc-bundle")
