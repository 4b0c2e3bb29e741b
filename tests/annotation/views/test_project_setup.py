"""The new-project wizard shows and checks only the chosen kind's fields, with the dataset's counts and one
task; the project page names groups by name and offers only real people as members."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.forms import COMMON_FIELDS, KIND_FIELDS
from annotation.models import Membership, Project
from tests.annotation.conftest import MODEL_NAMES, build_dataset, build_translation_dataset
from tests.annotation.scaled import seven_point_and_yes_no

pytestmark = pytest.mark.django_db

URL = reverse("annotation:manage_create")


def _field_names(html: str) -> set[str]:
    return set(re.findall(r'data-field="([a-z_]+)"', html))


def test_the_first_step_offers_every_kind_and_no_fields(role_client):
    client = role_client("project_manager")
    html = client.get(URL).content.decode()
    for kind in Project.Kind.values:
        if kind == Project.Kind.ARENA:  # set up on the arena's own page
            assert reverse("arena:manage_create") in html
        else:
            assert f"?kind={kind}" in html
    assert _field_names(html) == set()


@pytest.mark.parametrize("kind", list(KIND_FIELDS))
def test_each_kind_renders_only_its_own_fields(role_client, kind):
    client = role_client("project_manager")
    html = client.get(URL, {"kind": kind}).content.decode()
    expected = (set(COMMON_FIELDS) | set(KIND_FIELDS[kind])) - {"kind"}
    assert _field_names(html) == expected
    assert f'name="kind" value="{kind}"' in html


def test_pairwise_is_checked_without_the_likert_fields_and_ignores_them(role_client):
    dataset = build_dataset(n_prompts=2, n_models=3)
    client = role_client("project_manager")
    base = {"kind": "pairwise", "dataset": dataset.pk, "name": "AB", "groups": "A", "lease_minutes": 30}
    # A missing pairwise field is an error named on its field; nothing is written.
    response = client.post(URL, {**base, "overlap": 1, "pairs_per_prompt": 3, "turn_mode": "overall"})
    assert response.status_code == 200
    assert "pair_mode" in response.context["form"].errors
    assert not Project.objects.exists()
    # Likert fields sent along (even invalid ones) are not read.
    good = {**base, "overlap": 1, "pair_mode": "all", "pairs_per_prompt": 3, "turn_mode": "overall"}
    response = client.post(URL, {**good, "gold_rate": 0, "criteria": ["nonsense"], "best_pick": "bogus"})
    assert response.status_code == 302, response.context["form"].errors
    assert Project.objects.get().kind == "pairwise"


def test_unknown_kind_goes_back_to_the_first_step(role_client):
    client = role_client("project_manager")
    response = client.post(URL, {"kind": "karaoke", "name": "x"})
    assert response.status_code == 200 and not Project.objects.exists()
    assert "?kind=likert" in response.content.decode()
    assert "Unknown project kind &#x27;karaoke&#x27;; choose one below." in response.content.decode()


def test_choosing_a_dataset_shows_its_counts_and_a_blinded_task(role_client):
    dataset = build_dataset(n_prompts=4, n_models=3)
    build_translation_dataset(n_units=2, name="units-not-offered")
    client = role_client("project_manager")
    page = client.get(URL, {"kind": "likert"}).content.decode()
    assert "units-not-offered" not in page  # only datasets of prompts for a rating job
    fragment = client.get(URL, {"kind": "likert", "dataset": dataset.pk}, HTTP_HX_REQUEST="true")
    html = fragment.content.decode()
    assert "<html" not in html
    assert re.search(r'data-testid="n-items">4<', html)
    assert re.search(r'data-testid="responses-per-prompt">3<', html)
    assert "ind (4)" in html and "analysis (2)" in html and "math (2)" in html
    assert "Pertanyaan 0 giliran 1" in html and "Response 3" in html
    for model in MODEL_NAMES[:3]:
        assert model not in html


def test_the_preview_is_the_annotators_card_with_the_ticked_criteria_on_their_scales(role_client):
    seven_point_and_yes_no()
    dataset = build_dataset(n_prompts=2, n_models=2)
    client = role_client("project_manager")
    query = {"kind": "likert", "dataset": dataset.pk, "criteria": ["helpfulness", "safe"]}
    html = client.get(URL, query, HTTP_HX_REQUEST="true").content.decode()
    preview = html[html.index('data-testid="task-preview"') :]
    assert preview.count('class="card response-card"') == 2
    assert len(re.findall(r'name="r-1-helpfulness" value="\d"', preview)) == 7
    assert re.findall(r'name="r-2-safe" value="(\w+)"', preview) == ["yes", "no"]
    assert "r-1-relevance" not in preview and " disabled>" in preview
    for model in MODEL_NAMES[:2]:
        assert model not in html
    # Nothing ticked yet on the page: the form's default criteria, at their 1-5 scales.
    first = client.get(
        URL, {"kind": "likert", "dataset": dataset.pk}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert len(re.findall(r'name="r-1-relevance" value="\d"', first)) == 5 and "r-1-helpfulness" not in first


def _preview(client, **query) -> str:
    html = client.get(URL, query, HTTP_HX_REQUEST="true").content.decode()
    return html[html.index('data-testid="task-preview"') :]


def test_the_preview_follows_the_best_pick_setting_and_all_bad(role_client):
    dataset = build_dataset(n_prompts=2, n_models=3)
    client = role_client("project_manager")
    base = {"kind": "likert", "dataset": dataset.pk, "from_form": "1", "criteria": ["relevance"]}
    off = _preview(client, **base, best_pick="off")
    assert 'data-testid="best-pick"' not in off and 'name="best"' not in off
    optional = _preview(client, **base, best_pick="optional")
    assert re.findall(r'name="best" value="(\w+)"\s+disabled', optional) == ["1", "2", "3"]
    assert "(optional)" in optional
    required = _preview(client, **base, best_pick="required", allow_all_bad="on")
    assert re.findall(r'name="best" value="(\w+)"\s+disabled', required) == ["1", "2", "3", "all_bad"]
    assert "(optional)" not in required
    # Best-of-N always asks for the pick; "all bad" as set.
    best_of_n = {"kind": "best_of_n", "dataset": dataset.pk, "from_form": "1"}
    assert re.findall(r'name="best" value="(\w+)"', _preview(client, **best_of_n)) == ["1", "2", "3"]
    with_all_bad = _preview(client, **best_of_n, allow_all_bad="on")
    assert re.findall(r'name="best" value="(\w+)"', with_all_bad) == ["1", "2", "3", "all_bad"]
    assert 'name="best"' not in _preview(client, kind="pairwise", dataset=dataset.pk, from_form="1")


def test_the_preview_shows_no_scale_when_the_form_ticks_none(role_client):
    dataset = build_dataset(n_prompts=2, n_models=2)
    client = role_client("project_manager")
    preview = _preview(client, kind="likert", dataset=dataset.pk, from_form="1", best_pick="required")
    assert "r-1-relevance" not in preview and "r-1-fluency" not in preview
    assert 'data-testid="best-pick"' in preview


def test_the_preview_orders_the_criteria_as_the_form_lists_them(role_client):
    seven_point_and_yes_no()
    dataset = build_dataset(n_prompts=2, n_models=2)
    client = role_client("project_manager")
    # htmx sends the box just ticked first; the project would rate in the form's order.
    preview = _preview(
        client, kind="likert", dataset=dataset.pk, from_form="1", criteria=["safe", "relevance"]
    )
    assert re.findall(r'data-scale="r-1-(\w+)"', preview) == ["relevance", "safe"]


def test_every_preview_field_asks_for_the_preview_again_with_the_others(role_client):
    client = role_client("project_manager")
    page = client.get(URL, {"kind": "likert"}).content.decode()
    include = "[name=dataset], [name=criteria], [name=best_pick], [name=allow_all_bad], [name=from_form]"
    for field in ("dataset", "criteria", "best_pick", "allow_all_bad"):
        tag = re.search(rf'<(?:select|input)[^>]*name="{field}"[^>]*>', page).group(0)
        assert f'hx-include="{include}"' in tag, field
    assert '<input type="hidden" name="from_form" value="1">' in page


def test_groups_are_named_and_simulated_users_are_not_offered(role_client, make_user):
    dataset = build_dataset(n_prompts=2, n_models=2)
    client = role_client("project_manager")
    project = services.project_create(
        created_by=client.user, dataset=dataset, name="Tim", kind="likert", groups=["Tim Uji"], overlap=1
    )
    real = make_user("annotator", username="asih")
    ghost = make_user("annotator", username="simulasi1")
    ghost.set_unusable_password()
    ghost.save()
    make_user("annotator", username="gone", is_active=False)
    html = client.get(reverse("annotation:manage_detail", args=[project.pk])).content.decode()
    assert re.search(r"<option[^>]*>Tim Uji</option>", html)
    assert f"{project.pk}:Tim Uji" not in html
    assert f'value="{real.pk}">asih' in html
    assert "simulasi1" not in html and ">gone" not in html
    # Posting the simulated user anyway is refused.
    group = project.groups.get()
    client.post(
        reverse("annotation:manage_member_add", args=[project.pk]), {"users": [ghost.pk], "group": group.pk}
    )
    assert not Membership.objects.filter(project=project).exists()


def test_the_form_and_the_skip_reasons_read_in_indonesian(role_client):
    from django.utils import translation

    from annotation.views.annotator import SKIP_REASONS

    client = role_client("project_manager")
    client.cookies["django_language"] = "id"
    html = client.get(URL, {"kind": "pairwise"}).content.decode()
    assert ">Nama</label>" in html and ">Pasangan per prompt</label>" in html
    assert ">Name</label>" not in html
    with translation.override("id"):
        shown = [translation.gettext(text) for _, text in SKIP_REASONS]
    assert shown[0] == "Saya kurang menguasai bahasa atau ragam ini"
    assert all(a != b for a, (_, b) in zip(shown, SKIP_REASONS, strict=True))


def test_service_errors_read_in_indonesian_on_the_manager_pages(role_client):
    from django.utils import translation

    dataset = build_dataset(n_prompts=2, n_models=3)
    client = role_client("project_manager")
    client.cookies["django_language"] = "id"
    form = {
        "kind": "likert",
        "dataset": dataset.pk,
        "name": "L",
        "groups": "A",
        "lease_minutes": 30,
        "overlap": 1,
        "gold_rate": 0,
        "best_pick": "off",
    }
    page = client.post(URL, form, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Proyek Likert memerlukan setidaknya satu kriteria." in page
    assert "A likert project needs at least one criterion." not in page
    assert not Project.objects.exists()

    pairwise = {**form, "kind": "pairwise", "pair_mode": "all", "pairs_per_prompt": 3, "turn_mode": "overall"}
    project = Project.objects.get(pk=client.post(URL, pairwise)["Location"].rstrip("/").split("/")[-1])
    status_url = reverse("annotation:manage_status", args=[project.pk])
    page = client.post(status_url, {"action": "activate"}, follow=True).content.decode()
    assert "Tambahkan setidaknya satu anotator sebelum mengaktifkan proyek." in page

    with translation.override("id"), pytest.raises(services.AnnotationError) as caught:
        services.project_status_set(project=project, action="activate")
    assert str(caught.value) == "Add at least one annotator before activating the project."  # API words
