"""Usernames are unique whatever their case: ``Admin`` cannot be added beside ``admin``.

Django's own ``auth.User`` carries no such constraint, so this migration adds a unique index on
``LOWER(username)`` to its table (SQLite and PostgreSQL both index expressions). Existing usernames that
differ only in case stop the migration, naming them, so that someone decides which account to rename.
"""

from django.db import migrations
from django.db.models import Count, UniqueConstraint
from django.db.models.functions import Lower

CONSTRAINT = UniqueConstraint(Lower("username"), name="accounts_username_unique_case_insensitive")


def _check_no_collisions(apps, schema_editor):
    User = apps.get_model("auth", "User")
    collisions = (
        User.objects.using(schema_editor.connection.alias)
        .annotate(folded=Lower("username"))
        .values("folded")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .values_list("folded", flat=True)
        .order_by("folded")
    )
    folded = list(collisions[:20])
    if folded:
        names = sorted(
            User.objects.using(schema_editor.connection.alias)
            .annotate(folded=Lower("username"))
            .filter(folded__in=folded)
            .values_list("username", flat=True)
        )
        raise RuntimeError(
            "Usernames must be unique whatever their case, but these accounts differ only in case: "
            f"{', '.join(names)}. Rename or remove all but one of each (for example in the admin, or with "
            "`python manage.py shell`), then run the migration again."
        )


def _add_constraint(apps, schema_editor):
    _check_no_collisions(apps, schema_editor)
    schema_editor.add_constraint(apps.get_model("auth", "User"), CONSTRAINT)


def _remove_constraint(apps, schema_editor):
    schema_editor.remove_constraint(apps.get_model("auth", "User"), CONSTRAINT)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_profile_language"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(_add_constraint, _remove_constraint, elidable=False)]
