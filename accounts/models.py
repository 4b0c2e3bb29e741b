"""What Timbang keeps about a person beyond Django's user: the language they work in."""

from django.conf import settings
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
