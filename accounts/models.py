"""What Timbang keeps about a person beyond Django's user: the language they work in, and their login
sessions."""

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

language_code = RegexValidator(
    r"^[a-z]{3}$", _("Enter an ISO 639-3 language code of three lowercase letters, such as ind, jav or sun.")
)


class Profile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    language = models.CharField(
        _("language"),
        max_length=3,
        blank=True,
        validators=[language_code],
        help_text=_("ISO 639-3 code of the language the person annotates in (ind, jav, sun, mad, min, ...)."),
    )

    def __str__(self) -> str:
        return f"{self.user_id}:{self.language}"


class Session(AbstractBaseSession):
    """A login session: Django's database session with the id of its logged-in user as a column, so the
    session and its user (with their roles) are read by one statement (``accounts.sessions``). Deleting a
    user deletes their sessions. No database constraint: a session saved for a user deleted meanwhile is
    saved, and reads as nobody logged in."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        db_constraint=False,
        related_name="+",
    )

    @classmethod
    def get_session_store_class(cls):
        """The site's session engine (``SESSION_ENGINE``, ``accounts.sessions``), for ``get_decoded``."""
        from importlib import import_module

        return import_module(settings.SESSION_ENGINE).SessionStore
