"""The review queue at campaign scale: filters, real annotators first, paging, sort, accept many at once,
a fixed number of queries per page; and My work, where an annotator reopens their own answer."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import selectors, services
from annotation.models import Annotation, Assignment, Membership, Review
from tests.annotation.conftest import likert_payload

pytestmark = pytest.mark.django_db


def _items(page: str) -> list[str]:
    return re.findall(r'<article class="card review-item".*?</article>', page, flags=re.S)


def _submit_all(project, user, value: int = 4) -> list[Assignment]:
    done = []
    while (assignment := services.assignment_claim(project=project, user=user)) is not None:
        services.assignment_submit(
            token=assignment.token,
            user=user,
            payload=likert_payload(len(assignment.permutation), value=value),
            seconds=30,
        )
        done.append(assignment)
    return done


@pytest.fixture
def campaign(make_project):
    """Two likert projects; in the first, two real annotators and one simulated annotator finish 4 tasks each."""
    first = make_project(n_prompts=4, n_models=2, per_group=3, overlap=3)
    second = make_project(n_prompts=2, n_models=2, per_group=1, overlap=1)
    real_a, real_b, simulated = first.annotators
    Membership.objects.filter(project=first, user=simulated).update(is_simulated=True)
    work = {user.pk: _submit_all(first, user) for user in first.annotators}
    work["other"] = _submit_all(second, second.annotators[0])
    return first, second, work


def test_real_annotators_come_first_and_simulated_ones_only_when_asked(client, make_user, campaign):
    first, second, work = campaign
    real_a, real_b, simulated = first.annotators
    client.force_login(make_user("reviewer"))
    page = client.get(reverse("annotation:review")).content.decode()
    assert "10 items" in page  # 4 + 4 real in the first project, 2 in the second
    assert simulated.username not in "".join(_items(page))
    page = client.get(reverse("annotation:review"), {"simulated": "1"}).content.decode()
    assert "14 items" in page and "simulated</span>" in page


def test_filters_by_project_annotator_group_kind_and_date(client, make_user, campaign):
    first, second, work = campaign
    real_a = first.annotators[0]
    client.force_login(make_user("reviewer"))
    url = reverse("annotation:review")
    page = client.get(url, {"project": first.pk, "annotator": real_a.pk}).content.decode()
    items = _items(page)
    assert len(items) == 4 and all(real_a.username in item for item in items)
    group = second.groups.get()
    assert "2 items" in client.get(url, {"group": group.pk}).content.decode()
    assert "0 items" in client.get(url, {"kind": "pairwise"}).content.decode()
    assert "0 items" in client.get(url, {"to": "2000-01-01"}).content.decode()
    assert "10 items" in client.get(url, {"from": "2000-01-01"}).content.decode()


def test_an_unreadable_filter_is_named_and_the_queue_falls_back_to_everything(client, make_user, campaign):
    client.force_login(make_user("reviewer"))
    response = client.get(reverse("annotation:review"), {"from": "kemarin", "kind": "essay"}, follow=True)
    page = response.content.decode()
    assert "from: &#x27;kemarin&#x27; is not a date (YYYY-MM-DD)." in page
    assert "kind: &#x27;essay&#x27; is not a job kind." in page
    assert "10 items" in page


def test_paging_and_sort(client, make_user, make_project):
    project = make_project(n_prompts=25, n_models=2, per_group=1, overlap=1)
    done = _submit_all(project, project.annotators[0])
    client.force_login(make_user("reviewer"))
    url = reverse("annotation:review")
    first = client.get(url, {"project": project.pk}).content.decode()
    assert len(_items(first)) == 20 and "Page 1 of 2" in first
    assert f"?project={project.pk}&amp;page=2" in first
    second = client.get(url, {"project": project.pk, "page": 2}).content.decode()
    assert len(_items(second)) == 5
    oldest = reverse("annotation:review_submit", args=[done[0].pk])
    newest = reverse("annotation:review_submit", args=[done[-1].pk])
    assert oldest in _items(first)[0]
    assert newest in _items(client.get(url, {"project": project.pk, "sort": "newest"}).content.decode())[0]


def test_accept_many_at_once_or_none(client, make_user, campaign):
    first, second, work = campaign
    reviewer = make_user("reviewer")
    client.force_login(reviewer)
    three = [a.pk for a in work[first.annotators[0].pk][:3]]
    url = reverse("annotation:review_accept_many")
    response = client.post(url, {"selected": three, "query": f"project={first.pk}"})
    assert response.status_code == 302 and response["Location"].endswith(f"?project={first.pk}")
    assert sorted(Review.objects.values_list("assignment_id", "verdict")) == [(pk, "accept") for pk in three]
    # One already reviewed among the selection: nothing more is written, the item is named.
    fourth = work[first.annotators[0].pk][3].pk
    page = client.post(url, {"selected": [fourth, three[0]]}, follow=True).content.decode()
    assert (
        f"Nothing was accepted: Selected item 2 (#{three[0]}): "
        "You already reviewed this work in its current round."
    ) in page.replace("&#x27;", "'")
    assert Review.objects.count() == 3 and not Review.objects.filter(assignment_id=fourth).exists()
    client.cookies["django_language"] = "id"  # the same refusal in Indonesian, the item's reason too
    page = client.post(url, {"selected": [fourth, three[0]]}, follow=True).content.decode()
    assert (
        f"Tidak ada yang diterima: Butir terpilih ke-2 (#{three[0]}): "
        "Anda sudah meninjau pekerjaan ini pada putaran ini."
    ) in page
    client.cookies["django_language"] = "en"
    page = client.get(reverse("annotation:review"), {"project": first.pk}).content.decode()
    assert "5 items" in page
    accepted = client.get(reverse("annotation:review"), {"project": first.pk, "status": "accepted"})
    assert "3 items" in accepted.content.decode()


def test_query_count_of_a_page_does_not_grow_with_the_work(
    client, make_user, make_project, django_assert_num_queries
):
    small = make_project(n_prompts=3, n_models=3, per_group=1, overlap=1)
    _submit_all(small, small.annotators[0])
    client.force_login(make_user("reviewer"))
    url = reverse("annotation:review")
    client.get(url)  # warm the session and caches
    with django_assert_num_queries(10) as small_count:  # the session read with its user and their roles
        client.get(url, {"project": small.pk})
    big = make_project(n_prompts=24, n_models=3, per_group=1, overlap=1)
    _submit_all(big, big.annotators[0])
    assert Annotation.objects.filter(assignment__project=big).count() == 24 * 3 * 2
    with django_assert_num_queries(len(small_count.captured_queries)):
        client.get(url, {"project": big.pk, "simulated": "1"})


def test_my_work_reopens_an_answer_in_the_same_blinded_order_as_a_new_round(client, make_project):
    project = make_project(n_prompts=2, n_models=3, per_group=1, overlap=1)
    user = project.annotators[0]
    done = _submit_all(project, user, value=2)
    client.force_login(user)
    page = client.get(reverse("annotation:my_work", args=[project.pk])).content.decode()
    assert page.count('data-testid="my-work-row"') == 2 and "Not reviewed yet" in page
    target = done[0]
    response = client.post(reverse("annotation:my_work_edit", args=[target.token]))
    assert response["Location"] == reverse("annotation:task", args=[target.token]) + "?from=mine"
    target.refresh_from_db()
    assert (target.status, target.round) == ("assigned", 2)
    task = client.get(response["Location"]).content.decode()
    # The earlier answer is filled in, in the same positions: 3 responses x 2 criteria at 2.
    assert task.count('value="2" checked') == 6 and task.count("checked") == 6
    services.assignment_submit(token=target.token, user=user, payload=likert_payload(3, value=5))
    rows = Annotation.objects.filter(assignment=target, criterion="relevance")
    assert sorted(rows.values_list("round", "value_int")) == [(1, 2), (1, 2), (1, 2), (2, 5), (2, 5), (2, 5)]
    assert (
        sorted(Annotation.objects.counted().filter(assignment=target).values_list("value_int", flat=True))
        == [5] * 6
    )
    # The permutation the annotator saw is kept.
    assert Assignment.objects.get(pk=target.pk).permutation == target.permutation


def test_an_edit_from_my_work_keeps_the_count_and_returns_there(client, make_project):
    project = make_project(n_prompts=2, n_models=3, per_group=1, overlap=1)
    user = project.annotators[0]
    target = _submit_all(project, user, value=2)[0]
    client.force_login(user)
    location = client.post(reverse("annotation:my_work_edit", args=[target.token]))["Location"]
    # While the answer is open again it still counts: on the task page, the project page and home.
    task = client.get(location).content.decode()
    assert "2 of 2 done" in task and 'name="from" value="mine"' in task
    assert "2 of 2 done" in client.get(reverse("annotation:start", args=[project.pk])).content.decode()
    assert "2 of 2 done" in client.get(reverse("home")).content.decode()
    fields = {f"r-{i}-{c}": "5" for i in range(1, 4) for c in ("relevance", "fluency")}
    response = client.post(
        reverse("annotation:submit", args=[target.token]), {**fields, "from": "mine"}, HTTP_HX_REQUEST="true"
    )
    assert response["HX-Redirect"] == reverse("annotation:my_work", args=[project.pk])
    page = client.get(response["HX-Redirect"]).content.decode()
    assert "Your change was saved." in page and "All done" not in page
    target.refresh_from_db()
    assert (target.status, target.round) == ("submitted", 2)
    assert "2 of 2 done" in client.get(reverse("home")).content.decode()
    # Without htmx: a redirect to My work, in Indonesian.
    client.post(reverse("annotation:my_work_edit", args=[target.token]))
    client.cookies["django_language"] = "id"
    page = client.post(
        reverse("annotation:submit", args=[target.token]), {**fields, "from": "mine"}, follow=True
    ).content.decode()
    assert "Perubahan Anda disimpan." in page


def test_work_sent_back_shows_on_home_as_needing_revision(client, make_user, make_project):
    project = make_project(n_prompts=2, n_models=3, per_group=1, overlap=1)
    user = project.annotators[0]
    target = _submit_all(project, user)[0]
    services.review_create(assignment=target, reviewer=make_user("reviewer"), verdict="reject", comment="cek")
    client.force_login(user)
    home = client.get(reverse("home")).content.decode()
    assert "1 of 2 done" in home and "1 sent back for revision" in home
    assert (
        "1 sent back for revision"
        in client.get(reverse("annotation:start", args=[project.pk])).content.decode()
    )
    client.cookies["django_language"] = "id"
    assert "1 dikembalikan untuk direvisi" in client.get(reverse("home")).content.decode()


def test_my_work_refuses_an_edit_when_the_project_allows_none(client, make_project):
    project = make_project(n_prompts=1, n_models=2, per_group=1, overlap=1, allow_edits=False)
    user = project.annotators[0]
    (target,) = _submit_all(project, user)
    client.force_login(user)
    page = client.get(reverse("annotation:my_work", args=[project.pk])).content.decode()
    assert 'data-testid="my-work-edit"' not in page
    response = client.post(reverse("annotation:my_work_edit", args=[target.token]), follow=True)
    assert "This project no longer allows changes to submitted answers." in response.content.decode()
    target.refresh_from_db()
    assert (target.status, target.round) == ("submitted", 1)


def test_filter_reads_back_what_it_was_given():
    query = {"project": "3", "annotator": "7", "status": "accepted", "from": "2026-01-02", "sort": "newest"}
    filters = selectors.ReviewFilter.from_query(query)
    assert filters.as_query() == query


def test_an_edit_submitted_in_the_loop_counts_once(make_project):
    project = make_project(n_prompts=3, n_models=2, per_group=1, overlap=1)
    user = project.annotators[0]
    first = services.assignment_claim(project=project, user=user)
    services.assignment_submit(token=first.token, user=user, payload=likert_payload(2, value=3))
    services.assignment_edit_open(token=first.token, user=user)
    assert selectors.done_count(project_id=project.pk, user_id=user.pk) == 1
    # The claim state read beside the submit (one statement on PostgreSQL) must not count the edit twice.
    result = services.assignment_submit_next(token=first.token, user=user, payload=likert_payload(2, value=4))
    assert result.next is not None and result.next.progress_done == 1
    assert selectors.done_count(project_id=project.pk, user_id=user.pk) == 1
