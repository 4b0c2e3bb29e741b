"""Sign-in, people (managers add, deactivate and reset people) and each person's own account page
(password, API token). The login's password check is throttled by ``accounts.backends``, like every other."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from accounts import selectors, services
from accounts.authentication import token_expires_at
from accounts.forms import PeopleSearchForm, PersonCreateForm
from accounts.permissions import role_required
from accounts.roles import PROJECT_MANAGER, role_label


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "registration/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "registration/password_reset_complete.html"


# --- people (project managers) ----------------------------------------------------------------------------


def _managed_person(request: HttpRequest, user_id: int):
    """A person the caller may deactivate or send a set-password link: never themselves; project managers,
    researchers and administrators only by an administrator (a manager could otherwise take over another
    manager's account through its e-mail, or lock every other manager out)."""
    person = get_object_or_404(selectors.people_list(), pk=user_id)
    if person.pk == request.user.pk:
        raise PermissionDenied
    if selectors.person_is_privileged(person) and not request.user.is_superuser:
        raise PermissionDenied
    return person


@role_required(PROJECT_MANAGER)
def people(request: HttpRequest) -> HttpResponse:
    search = PeopleSearchForm(request.GET or None)
    query = search.cleaned_data["q"].strip() if search.is_valid() else ""
    form = PersonCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            person = services.person_create(**form.cleaned_data)
        except services.PersonInvalid as exc:
            for name, message in exc.errors.items():
                form.add_error(name if name in form.fields else None, message)
        else:
            try:
                services.person_password_reset_send(
                    user=person, domain=request.get_host(), use_https=request.is_secure()
                )
            except services.PersonInvalid as exc:
                messages.error(request, " ".join(exc.errors.values()))
            else:
                messages.success(
                    request,
                    _("%(username)s added; a link to set their password was sent to %(email)s.")
                    % {"username": person.get_username(), "email": person.email},
                )
            return redirect("accounts:people")
    found = list(selectors.people_list(query=query))
    for person in found:
        person.role_labels = [role_label(group.name) for group in person.groups.all()]
        person.managed = person.pk != request.user.pk and (
            request.user.is_superuser or not selectors.person_is_privileged(person)
        )
    context = {"people": found, "form": form, "search": search, "query": query}
    return render(request, "accounts/people.html", context)


@role_required(PROJECT_MANAGER)
@require_POST
def person_active(request: HttpRequest, user_id: int) -> HttpResponse:
    person = _managed_person(request, user_id)
    active = request.POST.get("active") == "1"
    services.person_active_set(user=person, active=active)
    message = _("%(username)s can log in again.") if active else _("%(username)s can no longer log in.")
    messages.success(request, message % {"username": person.get_username()})
    return redirect("accounts:people")


@role_required(PROJECT_MANAGER)
@require_POST
def person_password_reset(request: HttpRequest, user_id: int) -> HttpResponse:
    person = _managed_person(request, user_id)
    try:
        services.person_password_reset_send(
            user=person, domain=request.get_host(), use_https=request.is_secure()
        )
    except services.PersonInvalid as exc:
        messages.error(request, " ".join(exc.errors.values()))
    else:
        messages.success(
            request,
            _("A link to set a new password was sent to %(email)s.") % {"email": person.email},
        )
    return redirect("accounts:people")


# --- one's own account ----------------------------------------------------------------------------------


def _account_page(request: HttpRequest, password_form: PasswordChangeForm, new_key: str | None = None):
    token = Token.objects.filter(user=request.user).first()
    context = {
        "password_form": password_form,
        "token": token,
        "token_expires": token_expires_at(token.created, settings.API_TOKEN_LIFETIME_DAYS) if token else None,
        "new_key": new_key,
    }
    response = render(request, "accounts/account.html", context)
    if new_key:
        response["Cache-Control"] = "no-store"
    return response


@login_required
def account(request: HttpRequest) -> HttpResponse:
    form = PasswordChangeForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        form.save()
        update_session_auth_hash(request, form.user)
        messages.success(request, _("Your password was changed."))
        return redirect("accounts:account")
    return _account_page(request, form)


@login_required
@require_POST
def account_token_create(request: HttpRequest) -> HttpResponse:
    token = services.api_token_rotate(user=request.user)
    # The key is shown in this answer only; the page never shows it again.
    return _account_page(request, PasswordChangeForm(request.user), new_key=token.key)


@login_required
@require_POST
def account_token_revoke(request: HttpRequest) -> HttpResponse:
    if services.api_token_revoke(user=request.user):
        messages.success(request, _("Your API token was revoked; it no longer works."))
    return redirect("accounts:account")
