"""An export family added through the registry alone: offered, checked, previewed and written by the same
service path as the built-in families (``export_create``, the worker's ``export_run``)."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import pytest

from exports import selectors
from exports.families import FAMILIES, family_for, formats, kinds_for
from exports.families.base import Family
from exports.models import Export
from exports.options import ExportInvalid, ExportOptions, default_license, default_pretty_name
from exports.services import export_create, export_preview

pytestmark = pytest.mark.django_db

TOY = "toy-prompts"


@dataclass
class ToyBuild:
    frame: pd.DataFrame
    rows_written: int = 0


def toy_family(calls: list[str]) -> Family:
    """A family that writes the project's prompts as one CSV file with a short card."""

    def offered(project):
        return project.kind == "likert"

    def resolve(*, project, options):
        calls.append("resolve")
        if options.test_size:
            raise ExportInvalid({"split": "a toy export is one file"})
        return replace(
            options,
            seed=project.seed if options.seed is None else options.seed,
            license=default_license(project, options),
            pretty_name=default_pretty_name(project, options),
        )

    def preview(*, project, options):
        return {"format": options.kind, "rows": len(selectors.items_frame(project))}

    def read(*, project, options, step):
        calls.append("read")
        step(10, "reading prompts")
        return selectors.items_frame(project)

    def build(*, project, options, data, step):
        calls.append("build")
        frame = data[["external_id", "category", "language"]].sort_values("external_id")
        return ToyBuild(frame=frame.reset_index(drop=True))

    def card(*, project, options, built, destination):
        calls.append("card")
        return (
            f"---\nlicense: {options.license}\n---\n\n# {options.pretty_name}\n\n"
            f"{built.rows_written} prompts of {project.name}, written to {destination.folder.name}.\n"
        )

    def write(*, destination, built, card, step):
        calls.append("write")
        step(50, "writing prompts")
        destination.folder.mkdir(parents=True, exist_ok=True)
        built.frame.to_csv(destination.folder / "prompts.csv", index=False)
        built.rows_written = len(built.frame)
        (destination.folder / "README.md").write_text(card(), encoding="utf-8")
        return {"format": TOY, "rows": built.rows_written}

    return Family(
        name="toy",
        formats=(TOY,),
        offered=offered,
        resolve=resolve,
        preview=preview,
        read=read,
        build=build,
        card=card,
        write=write,
    )


@pytest.fixture
def toy_calls(monkeypatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setitem(FAMILIES, "toy", toy_family(calls))
    return calls


def test_a_registered_family_is_offered_after_the_built_in_ones(toy_calls, likert_project):
    assert family_for(TOY).name == "toy"
    assert formats()[-1] == TOY
    kinds = kinds_for(likert_project)
    assert kinds[0] == "hf" and kinds[-1] == TOY


def test_a_registered_family_exports_through_the_service_and_the_worker(
    toy_calls, likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.EXPORTS_DIR = tmp_path / "exports"
    assert export_preview(project=likert_project, options=ExportOptions(kind=TOY)) == {
        "format": TOY,
        "rows": 2,
    }
    toy_calls.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = export_create(
            project=likert_project, options=ExportOptions(kind=TOY, license="CC0-1.0", pretty_name="Toy")
        )
    record.refresh_from_db()
    assert record.status == Export.Status.SUCCEEDED, record.error
    assert toy_calls == ["resolve", "read", "build", "write", "card"]
    assert (record.kind, record.progress, record.stage) == (TOY, 100, "done")
    assert record.options["license"] == "CC0-1.0" and record.options["seed"] == likert_project.seed
    assert record.counts == {"format": TOY, "rows": 2}

    folder = Path(record.folder_path)
    assert folder == tmp_path / "exports" / f"export-{record.pk}"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "prompts.csv"]
    prompts = pd.read_csv(folder / "prompts.csv")
    assert prompts["external_id"].tolist() == ["ext-0000", "ext-0001"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: CC0-1.0\n---\n\n# Toy\n")
    assert f"2 prompts of {likert_project.name}, written to {folder.name}." in card
    with zipfile.ZipFile(record.zip_path) as archive:
        assert sorted(archive.namelist()) == ["README.md", "prompts.csv"]


def test_a_registered_family_checks_its_own_options(toy_calls, likert_project):
    with pytest.raises(ExportInvalid) as refused:
        export_create(project=likert_project, options=ExportOptions(kind=TOY, test_size=0.5), queue=False)
    assert refused.value.errors == {"split": "a toy export is one file"}


def test_without_the_family_its_format_is_unknown(likert_project):
    assert TOY not in formats() and TOY not in kinds_for(likert_project)
    with pytest.raises(ExportInvalid) as refused:
        export_preview(project=likert_project, options=ExportOptions(kind=TOY))
    assert "unknown format 'toy-prompts'" in refused.value.errors["format"]
