"""Loads the bundled sample project for `make demo`: users for every role and the sample dataset."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from config import roles
from datasets_app.services import ImportResult, dataset_import

DEMO_DATA_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_DATASET_NAME = "Contoh IndoPref (demo)"

DEMO_USERS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("admin", (), True),
    ("manajer", (roles.PROJECT_MANAGER,), False),
    ("peneliti", (roles.RESEARCHER,), False),
    ("reviewer", (roles.REVIEWER,), False),
    ("anotator1", (roles.ANNOTATOR,), False),
    ("anotator2", (roles.ANNOTATOR,), False),
    ("anotator3", (roles.ANNOTATOR,), False),
    ("anotator4", (roles.ANNOTATOR,), False),
)


@dataclass
class DemoUser:
    username: str
    password: str
    roles: list[str]
    is_staff: bool


@dataclass
class DemoResult:
    users: list[DemoUser]
    dataset: ImportResult


@transaction.atomic
def demo_load(*, password: str | None = None) -> DemoResult:
    """Create (or reset) the demo users and (re)import the sample dataset. Safe to run again."""
    User = get_user_model()
    users: list[DemoUser] = []
    for username, role_names, is_staff in DEMO_USERS:
        user, _ = User.objects.get_or_create(username=username)
        secret = password or secrets.token_urlsafe(9)
        user.set_password(secret)
        user.is_staff = is_staff
        user.is_superuser = is_staff
        user.save()
        user.groups.set(Group.objects.filter(name__in=role_names))
        users.append(DemoUser(username, secret, list(role_names) or ["admin"], is_staff))
    result = dataset_import(
        path=DEMO_DATA_DIR / "prompts.jsonl",
        name=DEMO_DATASET_NAME,
        file_format="jsonl",
        kind="prompts",
        replace=True,
        description="Sample prompts in Indonesian, Sundanese and Javanese with answers from five fictional models.",
        license="CC-BY-4.0",
        source="bundled sample (config/demo_data)",
    )
    return DemoResult(users=users, dataset=result)
