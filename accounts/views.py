"""Sign-in: the login page (rate-limited) and the 429 page it answers when throttled."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django_ratelimit.decorators import ratelimit


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
