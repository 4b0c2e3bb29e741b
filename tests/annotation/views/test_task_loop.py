"""The annotator's htmx loop: what one submit costs, and that the parts of the page kept from task to task
(``{% memo %}``) show what a fresh render shows, in both languages."""

import re

import pytest
from django.db import connection
from django.template import engines
from django.urls import reverse

from annotation import selectors, services
from annotation.models import Annotation, Assignment

pytestmark = pytest.mark.django_db


def _warm_rubrics(project) -> None:
    # As the server reads the project: its rubric stamp moved on when its rubric rows were written.
    project.refresh_from_db()
    for category in ("", "analysis", "math"):
        selectors.rubrics_for(project, category)


def _likert_form(n_responses: int, value: str = "4", **extra) -> dict[str, str]:
    form = {f"r-{n}-{c}": value for n in range(1, n_responses + 1) for c in ("relevance", "fluency")}
    return {**form, "seconds": "12.5", **extra}


def test_the_htmx_submit_needs_seven_statements_on_postgresql(
    client, make_project, django_assert_max_num_queries
):
    """The session with its user and their roles (1), then in one transaction (BEGIN, COMMIT) the same
    statements as the API's loop: the assignment lock (with the project, so the form is read without a
    statement of its own), the status + counters + answer rows with the claim state, the slot taken with
    the next task's texts, the assignment insert. Rendering the next task reads nothing more. SQLite runs
    the writes a statement each and the claim state on its own."""
    project = make_project(n_prompts=60, n_models=5, per_group=2, overlap=2, best_pick="optional")
    _warm_rubrics(project)
    user = project.annotators[0]
    client.force_login(user)
    first = services.assignment_claim(project=project, user=user)
    posted = client.post(
        reverse("annotation:submit", args=[first.token]), _likert_form(5, best="1"), HTTP_HX_REQUEST="true"
    )
    token = re.fullmatch(r"/annotate/t/([^/]+)/", posted["HX-Push-Url"]).group(1)
    limit = 7 if connection.vendor == "postgresql" else 12
    with django_assert_max_num_queries(limit):
        posted = client.post(
            reverse("annotation:submit", args=[token]), _likert_form(5, best="1"), HTTP_HX_REQUEST="true"
        )
    assert posted.status_code == 200 and posted["HX-Push-Url"] != reverse("annotation:task", args=[token])
    assert Annotation.objects.filter(assignment__token=token).count() == 5 * 2 + 1


def test_a_submit_to_another_annotators_task_is_404_and_changes_nothing(client, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=2)
    owner, other = project.annotators
    held = services.assignment_claim(project=project, user=owner)
    client.force_login(other)
    posted = client.post(
        reverse("annotation:submit", args=[held.token]), _likert_form(2), HTTP_HX_REQUEST="true"
    )
    assert posted.status_code == 404
    assert not Annotation.objects.exists()
    assert not Assignment.objects.filter(annotator=other).exists()


def _normalized(html: str) -> str:
    html = re.sub(r'(name="csrfmiddlewaretoken" value=")[^"]+', r"\1-", html)
    return re.sub(r'("X-CSRFToken": ")[^"]+', r"\1-", html)


@pytest.mark.parametrize("lang", ["en", "id"])
@pytest.mark.parametrize(
    ("kind", "options", "form"),
    [
        (
            "likert",
            {
                "best_pick": "required",
                "instructions_en": "Read <b>all</b>.\nThen rate.",
                "instructions_id": "Baca.",
            },
            _likert_form(3, best="2"),
        ),
        ("likert", {"best_pick": "off"}, _likert_form(3)),
        ("best_of_n", {"allow_all_bad": True}, {"best": "all_bad"}),
        ("pairwise", {"n_models": 2, "n_turns": 2}, {"vote": "tie"}),
    ],
)
def test_the_next_tasks_fragment_is_what_a_fresh_render_shows(
    client, make_project, kind, options, form, lang
):
    """The submit's fragment reuses what the first page kept; the same task's page, rendered after every
    kept part is dropped (the template loaded again), holds exactly that fragment."""
    options = {"n_models": 3, **options}
    project = make_project(kind=kind, n_prompts=3, per_group=1, **options)
    user = project.annotators[0]
    client.force_login(user)
    client.cookies["django_language"] = lang
    first = services.assignment_claim(project=project, user=user)
    assert client.get(reverse("annotation:task", args=[first.token])).status_code == 200
    posted = client.post(reverse("annotation:submit", args=[first.token]), form, HTTP_HX_REQUEST="true")
    fragment = _normalized(posted.content.decode()).strip()
    assert fragment.startswith('<div id="task"') and f'data-rubric-lang="{lang}"' in fragment
    for loader in engines["django"].engine.template_loaders:
        loader.reset()
    page = client.get(posted["HX-Push-Url"]).content.decode()
    assert fragment in _normalized(page)
    # The kept parts speak the page's language, and the keyboard's marks are there.
    assert ("Keyboard shortcuts" in fragment) is (lang == "en")
    assert ("Pintasan keyboard" in fragment) is (lang == "id")
    assert 'data-action="help"' in fragment and "<kbd>Enter</kbd>" in fragment
    if kind == "likert":
        assert 'name="r-3-fluency"' in fragment and 'data-scale="r-1-relevance"' in fragment


def test_a_changed_rubric_text_is_another_key_for_the_kept_parts():
    """The kept rubric and scales are keyed by what the criterion shows: a label, level text or scale that
    changes (the rubric store hands out new views when the project's rubric stamp moves) is rendered anew."""
    view = selectors.CriterionView(
        "relevance", {"en": "Relevance", "id": "Relevansi"}, {}, {"en": [(1, "Off topic")]}, 1
    )
    same = selectors.CriterionView(
        "relevance", {"id": "Relevansi", "en": "Relevance"}, {}, {"en": [(1, "Off topic")]}, 1
    )
    renamed = selectors.CriterionView(
        "relevance", {"en": "Renamed", "id": "Relevansi"}, {}, {"en": [(1, "Off topic")]}, 1
    )
    reworded = selectors.CriterionView(
        "relevance", {"en": "Relevance", "id": "Relevansi"}, {}, {"en": [(1, "Not on topic")]}, 1
    )
    assert view.content_key == same.content_key
    assert len({view.content_key, renamed.content_key, reworded.content_key}) == 3
