"""Site-wide pages: home, login (rate-limited), the 429 page."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django_ratelimit.decorators import ratelimit

from annotation.selectors import annotator_projects
from config.roles import user_roles


@method_decorator(ratelimit(key="ip", rate=settings.LOGIN_RATE, method="POST", block=True), name="post")
@method_decorator(
    ratelimit(key="post:username", rate=settings.LOGIN_RATE, method="POST", block=True), name="post"
)
class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True


def rate_limited(request, exception=None):
    return render(
        request,
        "errors/429.html",
        {"message": _("Too many login attempts. Wait a minute and try again.")},
        status=429,
    )


@login_required
def home(request):
    roles = sorted(user_roles(request.user))
    projects = annotator_projects(user=request.user) if "annotator" in roles else []
    return render(request, "home.html", {"roles": roles, "annotator_projects": projects})
