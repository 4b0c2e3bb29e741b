"""Chart axis titles come from the page, translated; charts.js keeps no English title of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .test_reports import likert  # noqa: F401 - the answered Likert project fixture

pytestmark = pytest.mark.django_db

CHARTS_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "charts.js"


def test_every_axis_title_in_charts_js_is_looked_up():
    source = CHARTS_JS.read_text(encoding="utf-8")
    literal_titles = re.findall(r'title:\s*"[^"]*"', source)
    assert literal_titles == [], literal_titles
    keys = set(re.findall(r'label\("([a-zA-Z]+)"', source))
    assert {"alphaCi", "submissions", "bradleyTerry", "conflicts"} <= keys


def test_the_dashboard_writes_the_titles_in_indonesian(role_client, likert):  # noqa: F811
    client = role_client("project_manager")
    client.cookies["django_language"] = "id"
    html = client.get(f"/analytics/projects/{likert.pk}/").content.decode()
    holder = re.search(r'<div id="chart-labels" hidden(.*?)></div>', html, re.S).group(1)
    attributes = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', holder))
    assert attributes["alpha-ci"] == "Alpha Krippendorff (IK 95%)"
    assert attributes["submissions"] == "kiriman"
    source = CHARTS_JS.read_text(encoding="utf-8")
    for key in re.findall(r'label\("([a-zA-Z]+)"', source):
        dashed = re.sub(r"([A-Z])", lambda m: "-" + m.group(1).lower(), key)
        assert dashed in attributes, f"charts.js asks for {key!r}; the dashboard has no data-{dashed}"
