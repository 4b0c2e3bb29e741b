"""``manage.py import_mqm_tsv``: a file in, an active project out; exit code 2 and nothing written on bad input."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.roles import user_roles
from annotation.models import ErrorSpan, Project

pytestmark = pytest.mark.django_db

HAND = Path(__file__).resolve().parents[1] / "domain" / "data" / "mqm_hand.tsv"


def _run(*args: str) -> dict:
    out = StringIO()
    call_command("import_mqm_tsv", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_import_creates_rater_accounts_and_the_project():
    result = _run(str(HAND), "--name", "WMT Kecil", "--source-language", "eng", "--target-language", "ind")
    assert (result["units"], result["ratings"], result["spans"]) == (4, 8, 8)
    assert result["raters"] == {"r1": "wmt-kecil-r1", "r2": "wmt-kecil-r2"}
    project = Project.objects.get(pk=result["project"])
    assert (
        project.kind == "translation_mqm"
        and ErrorSpan.objects.filter(assignment__project=project).count() == 8
    )
    person = get_user_model().objects.get(username="wmt-kecil-r1")
    assert user_roles(person) == {"annotator"}
    again = _run(
        str(HAND),
        "--name",
        "WMT lagi",
        "--source-language",
        "eng",
        "--target-language",
        "ind",
        "--rater-prefix",
        "wmt-kecil-",
    )
    assert again["raters"] == result["raters"]  # the same accounts
    assert get_user_model().objects.filter(username__startswith="wmt-kecil-").count() == 2


@pytest.mark.parametrize(
    ("args", "content", "message"),
    [
        (
            ("--source-language", "eng", "--target-language", "ind"),
            "system\tdoc\n",
            "missing column 'doc_id'",
        ),
        (("--source-language", "english", "--target-language", "ind"), None, "not an ISO 639-3 code"),
        (
            ("--source-language", "eng", "--target-language", "ind", "--protocol", "esa"),
            None,
            "needs a 'score'",
        ),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, args, content, message):
    path = tmp_path / "bad.tsv"
    path.write_text(content if content is not None else HAND.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(CommandError, match=message) as caught:
        call_command("import_mqm_tsv", str(path), "--name", "rusak", *args, stdout=StringIO())
    assert caught.value.returncode == 2
    assert (
        not Project.objects.exists()
        and not get_user_model().objects.filter(username__startswith="rusak").exists()
    )
