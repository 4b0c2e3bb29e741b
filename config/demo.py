"""Loads the bundled sample project for `make demo`: users for every role and the sample dataset."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation import services as annotation_services
from annotation.models import Project
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


DEMO_PROJECTS = ("Demo: rating + best of five", "Demo: pairwise A/B")
DEMO_GROUPS = {"Kelompok A": ("anotator1", "anotator2"), "Kelompok B": ("anotator3", "anotator4")}
DEMO_INSTRUCTIONS = {
    "en": "Read the prompt, then rate every response for relevance and fluency from 1 to 5 using the rubric "
    "on the right, and pick the best one. Compare the two answers in pairwise tasks and vote A, B, tie or "
    "both bad. Use the keyboard: press ? to see the shortcuts.",
    "id": "Baca perintahnya, lalu beri nilai 1 sampai 5 untuk relevansi dan kelancaran setiap respons "
    "sesuai rubrik di samping, dan pilih respons terbaik. Pada tugas berpasangan, bandingkan dua jawaban dan "
    "pilih A, B, seri, atau keduanya buruk. Gunakan papan ketik: tekan ? untuk melihat pintasan.",
}


@dataclass
class DemoResult:
    users: list[DemoUser]
    dataset: ImportResult
    projects: list[str] = field(default_factory=list)


def _demo_projects(dataset, users_by_name) -> list[str]:
    """Two active projects over the sample dataset, two groups each, the demo annotators as members."""
    common = {
        "dataset": dataset,
        "overlap": 2,
        "seed": 2024,
        "groups": list(DEMO_GROUPS),
        "instructions_en": DEMO_INSTRUCTIONS["en"],
        "instructions_id": DEMO_INSTRUCTIONS["id"],
    }
    likert = annotation_services.project_create(
        name=DEMO_PROJECTS[0], kind="likert", best_pick="required", **common
    )
    pairwise = annotation_services.project_create(
        name=DEMO_PROJECTS[1], kind="pairwise", pair_mode="sample", pairs_per_prompt=3, **common
    )
    for project in (likert, pairwise):
        for group in project.groups.all():
            for username in DEMO_GROUPS[group.name]:
                annotation_services.project_member_add(
                    project=project, user=users_by_name[username], group=group
                )
        annotation_services.project_activate(project=project)
    return [likert.name, pairwise.name]


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
    # The projects hold the sample dataset's responses; they go first so the dataset can be replaced.
    Project.objects.filter(name__in=DEMO_PROJECTS).delete()
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
    users_by_name = {
        user.username: user for user in User.objects.filter(username__in=[u.username for u in users])
    }
    return DemoResult(users=users, dataset=result, projects=_demo_projects(result.dataset, users_by_name))
