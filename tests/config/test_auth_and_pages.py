import pytest
from django.core.cache import cache
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clear_rate_limits():
    cache.clear()
    yield
    cache.clear()


def test_login_page_renders_and_logs_in(client, make_user):
    make_user("annotator", username="ani")
    page = client.get(reverse("login"))
    assert page.status_code == 200 and b'name="csrfmiddlewaretoken"' in page.content
    response = client.post(reverse("login"), {"username": "ani", "password": "correct-horse-battery"})
    assert response.status_code == 302 and response["Location"] == reverse("home")
    home = client.get(reverse("home"))
    assert b"Welcome, ani" in home.content and b'data-role="annotator"' in home.content


def test_wrong_password_shows_an_error(client, make_user):
    make_user("annotator", username="ani")
    response = client.post(reverse("login"), {"username": "ani", "password": "nope"})
    assert response.status_code == 200 and b"did not match" in response.content


def test_login_is_rate_limited(client, make_user, settings):
    make_user("annotator", username="ani")
    for _ in range(10):
        assert client.post(reverse("login"), {"username": "ani", "password": "wrong"}).status_code == 200
    blocked = client.post(reverse("login"), {"username": "ani", "password": "correct-horse-battery"})
    assert blocked.status_code == 429
    assert b"Too many login attempts" in blocked.content


def test_csrf_is_enforced_on_login(make_user):
    from django.test import Client

    make_user("annotator", username="ani")
    strict = Client(enforce_csrf_checks=True)
    response = strict.post(reverse("login"), {"username": "ani", "password": "correct-horse-battery"})
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("role", "cards"),
    [
        ("annotator", [b'data-role="annotator"']),
        ("reviewer", [b'data-role="reviewer"']),
        ("project_manager", [b'data-role="project_manager"']),
        ("researcher", [b'data-role="researcher"']),
    ],
)
def test_home_shows_what_each_role_does(role_client, role, cards):
    response = role_client(role).get(reverse("home"))
    assert response.status_code == 200
    for card in cards:
        assert card in response.content
    shows_datasets = reverse("datasets:list").encode() in response.content
    assert shows_datasets == (role in ("project_manager", "researcher"))


def test_language_switch_to_indonesian(role_client):
    client = role_client("annotator")
    response = client.post(reverse("set_language"), {"language": "id", "next": reverse("home")})
    assert response.status_code == 302
    page = client.get(reverse("home"))
    assert b'lang="id"' in page.content
    assert b"Selamat datang" in page.content


def test_admin_is_for_staff_only(role_client):
    assert role_client("project_manager").get("/admin/").status_code == 302
    assert role_client("admin").get("/admin/").status_code == 200


def test_every_model_is_registered_in_admin():
    from django.apps import apps
    from django.contrib import admin

    ours = [m for m in apps.get_models() if m._meta.app_label in ("datasets_app", "annotation", "evaluation")]
    assert ours
    missing = [m.__name__ for m in ours if m not in admin.site._registry]
    assert missing == []


def test_role_groups_exist():
    from django.contrib.auth.models import Group

    assert set(Group.objects.values_list("name", flat=True)) >= {
        "annotator",
        "reviewer",
        "project_manager",
        "researcher",
    }
