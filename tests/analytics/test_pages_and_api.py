"""Dashboard pages, CSV downloads and the JSON API: fields, permissions, query counts, progress."""

from __future__ import annotations

import csv
import io
import re

import pytest

from analytics import selectors, services

from .test_reports import likert  # noqa: F401 - the answered Likert project fixture

pytestmark = pytest.mark.django_db


def url(project, suffix: str = "") -> str:
    return f"/analytics/projects/{project.pk}/{suffix}"


def test_manager_sees_alpha_values_and_chart_containers(role_client, likert):  # noqa: F811
    client = role_client("project_manager")
    response = client.get(url(likert) + "?level=interval")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-table="alpha-alpha"' in html
    assert "0.866" in html  # relevance: 71/82 = 0.8659
    assert re.search(r"computed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", html)  # a date and a time, not ISO
    assert 'data-chart="alpha"' in html and 'id="analytics-data"' in html
    assert "vendor/vega/vega-lite.min.js" in html
    assert "hx-trigger" not in html  # ready: nothing to poll


def test_both_kappas_stand_beside_alpha_and_ac1_in_both_languages(role_client, likert):  # noqa: F811
    client = role_client("project_manager")
    english = client.get(url(likert) + "?level=interval").content.decode()
    assert "Cohen&#x27;s kappa (two annotators)" in english and "Fleiss&#x27; kappa" in english
    assert "0.571" in english  # relevance: Cohen's kappa 4/7
    indonesian = client.get(url(likert) + "?level=interval", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Kappa Cohen (dua anotator)" in indonesian and "Kappa Fleiss" in indonesian


def test_why_an_alpha_is_undefined_reads_in_both_languages(role_client, likert):  # noqa: F811
    client = role_client("project_manager")
    english = client.get(url(likert)).content.decode()
    assert "<td>no pairable unit</td>" in english
    client.cookies["django_language"] = "id"
    indonesian = client.get(url(likert), HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "<td>tidak ada unit yang dapat dipasangkan</td>" in indonesian
    assert "<td>no pairable unit</td>" not in indonesian
    csv_text = client.get(url(likert, "trend/trend.csv")).content.decode()
    assert "no pairable unit" in csv_text  # the download keeps the domain's words


def test_cached_dashboard_page_needs_few_queries(role_client, likert, django_assert_max_num_queries):  # noqa: F811
    client = role_client("researcher")
    with django_assert_max_num_queries(14):  # first visit computes the small report in the request
        assert client.get(url(likert)).status_code == 200
    # Session, user, roles, project, and the two data-version queries.
    with django_assert_max_num_queries(7):
        assert client.get(url(likert)).status_code == 200


def test_annotators_get_403_and_anonymous_users_the_login_page(client, role_client, likert):  # noqa: F811
    assert client.get(url(likert)).status_code == 302
    annotator = role_client("annotator")
    assert annotator.get(url(likert)).status_code == 403
    assert annotator.get("/analytics/").status_code == 403
    assert annotator.get(url(likert, "alpha/alpha.csv")).status_code == 403
    assert annotator.get(f"/api/v1/projects/{likert.pk}/agreement").status_code == 403


def test_csv_download_of_a_section(role_client, likert):  # noqa: F811
    client = role_client("project_manager")
    response = client.get(url(likert, "distributions/distributions.csv") + "?level=interval")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    relevance = {r["value"]: int(r["count"]) for r in rows if r["criterion"] == "relevance"}
    assert relevance == {"1": 4, "2": 4, "3": 2, "4": 2, "5": 0}
    assert client.get(url(likert, "nothing/alpha.csv")).status_code == 404
    assert client.get(url(likert, "alpha/nothing.csv")).status_code == 404


def test_project_list_links_to_dashboards(role_client, likert):  # noqa: F811
    response = role_client("project_manager").get("/analytics/")
    assert url(likert) in response.content.decode()
    home = role_client("project_manager").get("/")
    assert 'href="/analytics/"' in home.content.decode()


def test_progress_fragment_polls_while_computing(role_client, likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    version = selectors.data_version(project=likert)
    services.status_set(
        project_id=likert.pk, level="ordinal", version=version, state="running", progress=40, stage="alpha"
    )
    client = role_client("project_manager")
    response = client.get(url(likert), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html  # the fragment only
    assert 'hx-trigger="every 1s"' in html
    assert '<progress max="100" value="40"' in html
    assert client.get(url(likert, "alpha/alpha.csv")).status_code == 409


def test_failed_report_offers_a_retry(role_client, likert, settings, django_capture_on_commit_callbacks):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    version = selectors.data_version(project=likert)
    services.status_set(project_id=likert.pk, level="ordinal", version=version, state="failed", error="boom")
    client = role_client("project_manager")
    html = client.get(url(likert)).content.decode()
    assert "boom" in html and "hx-trigger" not in html
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url(likert, "retry") + "?level=ordinal")
        assert response.status_code == 302
        client.get(url(likert))  # queues the task again; it runs eagerly when the callbacks run
    assert services.report_state(project=likert, level="ordinal").ready


# -- API ----------------------------------------------------------------------------------------------


def test_api_report_fields(api_client_for, likert):  # noqa: F811
    api = api_client_for("researcher")
    response = api.get(f"/api/v1/projects/{likert.pk}/agreement", {"level": "interval"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {"project", "kind", "level", "data_version", "computed_at", "n_values", "sections"}
    assert body["level"] == "interval" and body["n_values"] == 24
    assert set(body["sections"]) == set(services.SECTIONS) - {"conflicts"}  # conflicts: question projects
    alpha = {row["criterion"]: row for row in body["sections"]["alpha"]["tables"]["alpha"]}
    assert alpha["relevance"]["alpha"] == pytest.approx(71 / 82)
    assert set(alpha["relevance"]) >= {
        "alpha",
        "ci_low",
        "ci_high",
        "n_units",
        "n_coders",
        "n_pairable_values",
        "percent_agreement",
        "ac1",
        "undefined_reason",
    }


def test_api_section_and_csv(api_client_for, likert):  # noqa: F811
    api = api_client_for("project_manager")
    section = api.get(f"/api/v1/projects/{likert.pk}/agreement/annotators", {"level": "interval"})
    assert section.status_code == 200
    assert {"tables", "note"} <= set(section.json())
    rows = section.json()["tables"]["annotators"]
    assert {r["coder"] for r in rows} == {u.get_username() for u in likert.annotators}
    response = api.get(f"/api/v1/projects/{likert.pk}/agreement/alpha.csv", {"level": "interval"})
    assert response.status_code == 200
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("criterion,level,alpha,ci_low,ci_high")
    assert len(lines) == 3  # header + relevance + fluency
    assert api.get(f"/api/v1/projects/{likert.pk}/agreement/nothing").status_code == 404
    assert api.get(f"/api/v1/projects/{likert.pk}/agreement/conflicts").status_code == 404
    assert api.get(f"/api/v1/projects/{likert.pk}/agreement/alpha.csv", {"table": "x"}).status_code == 404
    assert api.get(f"/api/v1/projects/{likert.pk}/agreement", {"level": "loud"}).status_code == 400
    assert api.get("/api/v1/projects/999999/agreement").status_code == 404


def test_api_answers_202_while_computing(api_client_for, likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    api = api_client_for("project_manager")
    response = api.get(f"/api/v1/projects/{likert.pk}/agreement")
    assert response.status_code == 202
    assert response.json()["status"] == "queued" and response.json()["progress"] == 0


def test_schema_documents_the_agreement_operations(api_client_for):
    response = api_client_for("researcher").get("/api/schema/", {"format": "json"})
    paths = response.json()["paths"]
    assert "/api/v1/projects/{project_id}/agreement" in paths
    operation = paths["/api/v1/projects/{project_id}/agreement"]["get"]
    assert {"200", "202"} <= set(operation["responses"])
    assert any("{section}" in p for p in paths)


def test_table_headings_are_words_in_the_page_language_and_the_csv_keeps_field_names(role_client, likert):  # noqa: F811
    client = role_client("project_manager")
    client.cookies["django_language"] = "id"
    html = client.get(url(likert) + "?level=interval", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    headings = re.findall(r"<th>([^<]*)</th>", html)
    assert (
        "Kriteria" in headings and "Batas bawah IK 95%" in headings and "Persentase kesepakatan" in headings
    )
    raw = {"criterion", "ci_low", "ci_high", "alpha", "n_units", "n_coders", "undefined_reason", "share"}
    assert not raw & set(headings)
    assert all("_" not in heading for heading in headings)
    header = client.get(url(likert, "alpha/alpha.csv") + "?level=interval").content.decode().splitlines()[0]
    assert header.split(",")[:5] == ["criterion", "level", "alpha", "ci_low", "ci_high"]
