"""An arena's battles as a Hugging Face dataset with a card, and its votes as preference pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena import services
from arena.models import Battle
from exports.selectors import annotator_pseudonym
from exports.services import ExportInvalid, ExportOptions, export_create
from tests.arena.builders import SECRET_SLUGS, make_arena, make_endpoints, run_answers
from tests.exports.conftest import load_offline

pytestmark = pytest.mark.django_db


@pytest.fixture
def voted_arena(stream_stub, make_user, no_dispatch):
    voter = make_user("annotator", username="pemilih.rahasia")
    project = make_arena(endpoints=make_endpoints(stream_stub.base_url), members=[voter])
    for vote, language in (("A", "jav"), ("tie", "sun"), ("B", "ind")):
        battle = services.battle_start(
            project=project, user=voter, text=f"Halo {language}", language=language
        )
        run_answers(battle)
        services.battle_vote(battle=battle, user=voter, vote=vote, reason="alasan")
    stream_stub.script.status = 500
    failed = services.battle_start(project=project, user=voter, text="gagal", language="ind")
    run_answers(failed)
    project.voter = voter
    return project


def _run(project, settings, tmp_path, capture, **options):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(**options))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def test_arena_battles_load_offline_with_a_card(
    voted_arena, settings, tmp_path, django_capture_on_commit_callbacks
):
    record = _run(voted_arena, settings, tmp_path, django_capture_on_commit_callbacks, kind="")
    assert record.kind == "arena-battles"  # an arena's default format
    folder = Path(record.folder_path)
    loaded = load_offline(folder, tmp_path)["train"]
    rows = loaded["rows"]
    assert len(rows) == 3
    assert [r["winner"] for r in rows] == ["model_a", "tie", "model_b"]
    assert [r["language"] for r in rows] == ["jav", "sun", "ind"]
    first = rows[0]
    assert first["conversation_a"] == [
        {"role": "user", "content": "Halo jav"},
        {"role": "assistant", "content": "Halo, apa kabar?"},
    ]
    assert first["sampler"] == "uniform" and first["probability"] == 1.0
    assert first["voter"] == annotator_pseudonym(project=voted_arena, user_id=voted_arena.voter.pk)
    assert len(first["ttft_ms_a"]) == 1 and first["length_a"] == 9
    card = (folder / "README.md").read_text()
    assert "3 voted battles" in card and "not counted and are not here (1)" in card
    assert "## Leaderboard" in card and "No ratings yet" not in card
    voted = list(
        Battle.objects.filter(project=voted_arena, status="voted").select_related("endpoint_a", "endpoint_b")
    )
    for slug in SECRET_SLUGS:
        line = next(line for line in card.splitlines() if line.startswith(f"| {slug} | "))
        sides = [("A" if b.endpoint_a.slug == slug else "B", b.vote) for b in voted]
        wins = sum(vote == side for side, vote in sides)
        losses = sum(vote in ("A", "B") and vote != side for side, vote in sides)
        # rating, interval, rank range, then battles, wins, ties, losses
        assert line.endswith(f"| 3 | {wins} | 1 | {losses} |")
    text = card + (folder / "data" / "train-00000-of-00001.parquet").read_bytes().decode(errors="replace")
    assert "pemilih.rahasia" not in text


def test_arena_votes_export_as_preference_pairs(
    voted_arena, settings, tmp_path, django_capture_on_commit_callbacks
):
    record = _run(voted_arena, settings, tmp_path, django_capture_on_commit_callbacks, kind="hf")
    assert record.strategy == "pairwise_majority"
    rows = load_offline(Path(record.folder_path), tmp_path)["train"]["rows"]
    assert len(rows) == 2  # the tie gives no pair
    assert all({r["chosen_model"], r["rejected_model"]} == set(SECRET_SLUGS) for r in rows)


def test_arena_export_refuses_pair_options(voted_arena):
    with pytest.raises(ExportInvalid):
        export_create(
            project=voted_arena, options=ExportOptions(kind="arena-battles", test_size=0.2), queue=False
        )
