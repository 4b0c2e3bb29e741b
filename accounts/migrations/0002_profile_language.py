import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_create_role_groups"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Profile",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "language",
                    models.CharField(
                        blank=True,
                        help_text="ISO 639-3 code of the language the person annotates in (ind, jav, sun, mad, min, ...).",
                        max_length=3,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[a-z]{3}$",
                                "Enter an ISO 639-3 language code of three lowercase letters, such as ind, jav or sun.",
                            )
                        ],
                        verbose_name="language",
                    ),
                ),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="profile",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
    ]
