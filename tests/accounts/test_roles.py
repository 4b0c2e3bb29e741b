"""Roles are auth groups; staff users have every role; page and API checks answer 302/403 as documented."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.test import RequestFactory
from rest_framework.test import APIRequestFactory

from accounts.permissions import HasRole, role_required
from accounts.roles import ALL_ROLES, DATA_ROLES, has_role, user_roles

pytestmark = pytest.mark.django_db


def test_every_role_has_its_group():
    assert set(Group.objects.filter(name__in=ALL_ROLES).values_list("name", flat=True)) == set(ALL_ROLES)


def test_roles_come_from_groups_and_staff_has_all(make_user):
    assert user_roles(make_user("annotator", "reviewer")) == {"annotator", "reviewer"}
    assert user_roles(make_user(is_staff=True)) == set(ALL_ROLES)
    assert user_roles(AnonymousUser()) == set()
    researcher = make_user("researcher")
    assert has_role(researcher, DATA_ROLES) and has_role(researcher, "researcher")
    assert not has_role(researcher, "annotator")


def test_role_required_sends_anonymous_users_to_login_and_refuses_others(make_user):
    view = role_required("project_manager")(lambda request: HttpResponse("ok"))
    request = RequestFactory().get("/annotate/manage/")
    request.user = AnonymousUser()
    response = view(request)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
    request.user = make_user("annotator")
    with pytest.raises(PermissionDenied):
        view(request)
    request.user = make_user("project_manager")
    assert view(request).content == b"ok"


def test_has_role_permission_names_the_roles_it_needs(make_user):
    permission = HasRole("researcher", "project_manager")()
    request = APIRequestFactory().get("/api/v1/exports/")
    request.user = make_user("annotator")
    assert not permission.has_permission(request, view=None)
    assert permission.message == "This operation needs one of the roles: researcher, project_manager."
    request.user = make_user("researcher")
    assert permission.has_permission(request, view=None)
