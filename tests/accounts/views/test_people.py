"""Managers add people, deactivate them and send set-password links; nobody else may."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import mail
from django.test import Client

from accounts.models import Profile

pytestmark = pytest.mark.django_db

PEOPLE = "/people/"


def _add(client, **overrides):
    data = {
        "username": "sari",
        "first_name": "Sari",
        "last_name": "Wulandari",
        "email": "sari@example.org",
        "language": "jav",
        "groups": [Group.objects.get(name="annotator").pk, Group.objects.get(name="reviewer").pk],
    }
    data.update(overrides)
    return client.post(PEOPLE, data)


def _link(message) -> str:
    match = re.search(r"https?://testserver(/accounts/reset/\S+/)", message.body)
    assert match, message.body
    return match.group(1)


def test_a_manager_adds_an_annotator_with_groups_and_a_set_password_link_that_works(role_client):
    client = role_client("project_manager")
    response = _add(client)
    assert response.status_code == 302
    sari = get_user_model().objects.get(username="sari")
    assert sorted(sari.groups.values_list("name", flat=True)) == ["annotator", "reviewer"]
    assert (sari.first_name, sari.last_name, sari.email) == ("Sari", "Wulandari", "sari@example.org")
    assert Profile.objects.get(user=sari).language == "jav"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["sari@example.org"]

    visitor = Client()
    form_page = visitor.get(_link(mail.outbox[0]), follow=True)
    assert form_page.status_code == 200 and form_page.context["validlink"]
    done = visitor.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "Tembang-macapat-9", "new_password2": "Tembang-macapat-9"},
    )
    assert done.status_code == 302
    assert Client().login(username="sari", password="Tembang-macapat-9")
    # The link works once.
    assert not visitor.get(_link(mail.outbox[0]), follow=True).context["validlink"]

    listing = client.get(PEOPLE, {"q": "sari"})
    assert b"sari" in listing.content and b"annotator, reviewer" in listing.content


def test_bad_input_names_the_field_and_writes_nothing(role_client, make_user):
    client = role_client("project_manager")
    make_user("annotator", username="taken")
    response = _add(client, username="taken", language="Javanese")
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "language" in errors
    response = _add(client, username="taken")
    assert "username" in response.context["form"].errors
    assert get_user_model().objects.filter(username="taken").count() == 1
    assert not Profile.objects.exists() and not mail.outbox


def test_a_deactivated_person_cannot_log_in_and_their_token_is_gone(role_client, make_user):
    from rest_framework.authtoken.models import Token

    client = role_client("project_manager")
    budi = make_user("annotator", username="budi")
    Token.objects.create(user=budi)
    assert client.post(f"/people/{budi.pk}/active", {"active": "0"}).status_code == 302
    assert not Client().login(username="budi", password="correct-horse-battery")
    assert not Token.objects.filter(user=budi).exists()
    client.post(f"/people/{budi.pk}/active", {"active": "1"})
    assert Client().login(username="budi", password="correct-horse-battery")


def test_reset_sends_a_link_that_sets_a_new_password(role_client, make_user):
    client = role_client("project_manager")
    dewi = make_user("annotator", username="dewi", email="dewi@example.org")
    client.post(f"/people/{dewi.pk}/password-reset")
    assert [m.to for m in mail.outbox] == [["dewi@example.org"]]
    visitor = Client()
    page = visitor.get(_link(mail.outbox[0]), follow=True)
    visitor.post(
        page.redirect_chain[-1][0], {"new_password1": "Gamelan-Bali-42", "new_password2": "Gamelan-Bali-42"}
    )
    assert Client().login(username="dewi", password="Gamelan-Bali-42")
    assert not Client().login(username="dewi", password="correct-horse-battery")


def test_a_person_without_an_address_gets_a_clear_message_and_no_mail(role_client, make_user):
    client = role_client("project_manager")
    nomail = make_user("annotator", username="nomail")
    response = client.post(f"/people/{nomail.pk}/password-reset", follow=True)
    assert b"nomail has no e-mail address" in response.content
    client.cookies["django_language"] = "id"
    response = client.post(f"/people/{nomail.pk}/password-reset", follow=True)
    assert b"nomail tidak punya alamat e-mail untuk dikirimi tautan." in response.content
    assert not mail.outbox


@pytest.mark.parametrize("roles", [("annotator",), ("reviewer",), ("researcher",)])
def test_only_managers_manage_people(role_client, make_user, roles):
    client = role_client(*roles)
    other = make_user("annotator", username="other", email="o@example.org")
    assert client.get(PEOPLE).status_code == 403
    assert _add(client).status_code == 403
    assert client.post(f"/people/{other.pk}/active", {"active": "0"}).status_code == 403
    assert client.post(f"/people/{other.pk}/password-reset").status_code == 403
    other.refresh_from_db()
    assert other.is_active and not mail.outbox
    assert not get_user_model().objects.filter(username="sari").exists()


def test_managers_cannot_deactivate_administrators_or_themselves(role_client, make_user):
    client = role_client("project_manager")
    admin = make_user("admin", username="root")
    assert client.post(f"/people/{admin.pk}/active", {"active": "0"}).status_code == 403
    assert client.post(f"/people/{client.user.pk}/active", {"active": "0"}).status_code == 403


def test_simulated_users_are_not_listed(role_client, make_user):
    client = role_client("project_manager")
    ghost = make_user("annotator", username="simulasi9")
    ghost.set_unusable_password()
    ghost.save()
    assert b"simulasi9" not in client.get(PEOPLE).content


def test_a_failed_send_is_reported_and_the_person_is_kept(role_client, settings, monkeypatch):
    import smtplib

    from django.core.mail.backends.locmem import EmailBackend

    def refuse(self, messages):
        raise smtplib.SMTPServerDisconnected("connection closed")

    monkeypatch.setattr(EmailBackend, "send_messages", refuse)
    client = role_client("project_manager")
    response = _add(client)
    assert response.status_code == 302
    shown = [str(m) for m in response.wsgi_request._messages]
    assert shown == ["The e-mail to sari@example.org could not be sent (connection closed)."]
    assert get_user_model().objects.filter(username="sari", is_active=True).exists()


def test_roles_are_named_for_people_in_both_languages(role_client):
    client = role_client("project_manager", username="manajer")
    _add(client)
    english = client.get(PEOPLE).content.decode()
    assert "Annotator, Reviewer" in english and "Project manager" in english
    assert "project_manager" not in english
    client.cookies["django_language"] = "id"
    indonesian = client.get(PEOPLE, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Anotator, Peninjau" in indonesian and "Manajer proyek" in indonesian


def test_the_set_password_mail_is_in_the_persons_language_not_the_senders(role_client):
    client = role_client("project_manager")
    client.cookies["django_language"] = "en"  # the manager works in English
    assert _add(client, username="sari", language="jav").status_code == 302
    (message,) = mail.outbox
    assert message.subject == "Buat kata sandi Timbang Anda"
    assert "Tautan ini hanya berlaku sekali." in message.body and "The link works once" not in message.body
    assert _link(message)  # the link is there in either language


def test_a_reset_from_an_indonesian_page_reaches_an_english_reader_in_english(role_client, make_user):
    client = role_client("project_manager")
    client.cookies["django_language"] = "id"
    reader = make_user("annotator", username="jo", email="jo@example.org")
    Profile.objects.update_or_create(user=reader, defaults={"language": "eng"})
    nobody = make_user("annotator", username="ana", email="ana@example.org")
    Profile.objects.filter(user=nobody).delete()
    client.post(f"/people/{reader.pk}/password-reset")
    client.post(f"/people/{nobody.pk}/password-reset")
    subjects = {m.to[0]: m.subject for m in mail.outbox}
    assert subjects == {
        "jo@example.org": "Set your Timbang password",
        "ana@example.org": "Set your Timbang password",  # no language on record: the site's default
    }
    assert "The link works once." in mail.outbox[0].body
    # The manager's page itself stays in Indonesian.
    assert client.get(PEOPLE).content.decode().count('lang="id"') >= 1
