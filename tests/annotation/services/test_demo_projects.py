import pytest
from django.contrib.auth import get_user_model

from annotation import services
from annotation.models import Project
from config.demo import DEMO_PROJECTS, demo_load

pytestmark = pytest.mark.django_db


def test_demo_projects_are_ready_to_rate_and_survive_a_reload():
    demo_load(password="rahasia-demo-1")
    demo_load(password="rahasia-demo-2")
    projects = {p.name: p for p in Project.objects.filter(name__in=DEMO_PROJECTS)}
    assert set(projects) == set(DEMO_PROJECTS)
    likert, pairwise = projects[DEMO_PROJECTS[0]], projects[DEMO_PROJECTS[1]]
    assert likert.status == pairwise.status == "active"
    assert likert.kind == "likert" and likert.best_pick == "required"
    assert sorted(likert.groups.values_list("name", flat=True)) == ["Kelompok A", "Kelompok B"]
    # Every sampled prompt gives 3 pairs.
    assert pairwise.n_tasks == 3 * likert.n_tasks
    user = get_user_model().objects.get(username="anotator3")
    for project in (likert, pairwise):
        assignment = services.assignment_claim(project=project, user=user)
        assert assignment is not None and assignment.group.name == "Kelompok B"
