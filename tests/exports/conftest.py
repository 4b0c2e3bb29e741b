"""Small rating projects annotated through the real annotation services, with answers planned per model.

Annotators submit in the positions they were shown; the helpers turn "annotator 1 gives model zeta a 5"
into the shown number of that annotator's own permutation, so the stored canonical answers are exactly
the planned ones whatever the shuffling.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from annotation import services
from annotation.models import Assignment
from datasets_app.models import Dataset, Prompt, Response

MODELS = ("zeta-7b", "omega-13b", "kappa-70b")
# Distinctive identities: a test scans every exported byte for them.
SECRET_USERS = (
    ("siti.rahasia", "siti.rahasia@example.org"),
    ("budi.tersembunyi", "budi.tersembunyi@example.org"),
    ("wayan.anonim", "wayan.anonim@example.org"),
)
_names = itertools.count(1)


def build_dataset(*, n_turns: int = 1, license: str = "CC-BY-4.0") -> Dataset:
    """Two prompts (analysis/ind, math/sun), one response per model in ``MODELS``."""
    dataset = Dataset.objects.create(name=f"export-data-{next(_names)}", license=license)
    specs = (("ext-0000", "analysis", "ind", "formal"), ("ext-0001", "math", "sun", ""))
    for p, (external_id, category, language, register) in enumerate(specs):
        prompt = Prompt.objects.create(
            dataset=dataset,
            external_id=external_id,
            category=category,
            language=language,
            register=register,
            turns=[f"Pertanyaan {p} giliran {t + 1}" for t in range(n_turns)],
            meta={"internal": "prompt-meta-secret"},
        )
        for model in MODELS:
            Response.objects.create(
                prompt=prompt,
                model_name=model,
                turns=[f"Jawaban {model} untuk {p} giliran {t + 1}" for t in range(n_turns)],
                meta={"api_key": "sk-response-meta-secret"},
            )
    return dataset


def canonical_models(assignment: Assignment) -> list[str]:
    names = dict(Response.objects.filter(pk__in=assignment.task.response_ids).values_list("id", "model_name"))
    return [names[rid] for rid in assignment.task.response_ids]


def shown_number(assignment: Assignment, model: str) -> int:
    """The 1-based number under which ``model``'s response was shown to this annotator."""
    return list(assignment.permutation).index(canonical_models(assignment).index(model)) + 1


def shown_vote(assignment: Assignment, winner: str) -> str:
    """The on-screen vote (A/B) that prefers ``winner``; tie and both_bad pass through."""
    if winner in ("tie", "both_bad"):
        return winner
    return "AB"[shown_number(assignment, winner) - 1]


def prompt_of(assignment: Assignment) -> str:
    return assignment.task.prompt.external_id


def drain(project, user, plan: Callable[[Assignment], dict]) -> int:
    """Claim and submit every task the user gets; ``plan`` builds the payload from the assignment."""
    done = 0
    while (assignment := services.assignment_claim(project=project, user=user)) is not None:
        services.assignment_submit(token=assignment.token, user=user, payload=plan(assignment), seconds=12.5)
        done += 1
    return done


@pytest.fixture
def annotators(make_user):
    """Annotators named after ``SECRET_USERS`` (a suffix from the second project of a test on)."""
    calls = itertools.count()

    def _make(n: int):
        suffix = next(calls) or ""
        return [
            make_user("annotator", username=f"{u}{suffix}", email=e.replace("@", f"{suffix}@"))
            for u, e in SECRET_USERS[:n]
        ]

    return _make


@pytest.fixture
def make_rating_project(annotators):
    """An active project over ``build_dataset()`` with one group of ``n_annotators`` and overlap k = n."""

    def _make(*, kind: str, n_annotators: int, n_turns: int = 1, **options):
        dataset = build_dataset(n_turns=n_turns)
        options.setdefault("seed", 7)
        project = services.project_create(
            dataset=dataset,
            name=f"{kind} export project",
            kind=kind,
            groups=["Kelompok A"],
            overlap=n_annotators,
            instructions_en="Rate every answer for relevance and fluency.",
            instructions_id="Nilai setiap jawaban untuk relevansi dan kelancaran.",
            **options,
        )
        group = project.groups.get()
        users = annotators(n_annotators)
        for user in users:
            services.project_member_add(project=project, user=user, group=group)
        services.project_activate(project=project)
        project.refresh_from_db()
        project.annotators = users
        return project

    return _make


# Likert plan (both prompts alike). Relevance: annotator 1 gives zeta 5, omega 3, kappa 1; annotator 2
# gives 4, 3, 2. Fluency: both give zeta 4, omega 4, kappa 2. Best pick: on ext-0000 annotator 1 picks
# zeta and annotator 2 omega; on ext-0001 both pick zeta.
RELEVANCE = ({"zeta-7b": 5, "omega-13b": 3, "kappa-70b": 1}, {"zeta-7b": 4, "omega-13b": 3, "kappa-70b": 2})
FLUENCY = {"zeta-7b": 4, "omega-13b": 4, "kappa-70b": 2}
BEST = ({"ext-0000": "zeta-7b", "ext-0001": "zeta-7b"}, {"ext-0000": "omega-13b", "ext-0001": "zeta-7b"})


def likert_plan(index: int) -> Callable[[Assignment], dict]:
    def plan(assignment: Assignment) -> dict:
        ratings = {
            str(shown_number(assignment, model)): {
                "relevance": RELEVANCE[index][model],
                "fluency": FLUENCY[model],
            }
            for model in MODELS
        }
        best = shown_number(assignment, BEST[index][prompt_of(assignment)])
        return {"ratings": ratings, "best": best, "comment": f"catatan {index}"}

    return plan


@pytest.fixture
def likert_project(make_rating_project):
    project = make_rating_project(
        kind="likert", n_annotators=2, criteria=["relevance", "fluency"], best_pick="required"
    )
    for index, user in enumerate(project.annotators):
        assert drain(project, user, likert_plan(index)) == 2
    return project


# Pairwise plan: the winner each annotator votes for, per prompt and model pair (sorted by MODELS order).
VOTES = {
    ("ext-0000", "zeta-7b", "omega-13b"): ("zeta-7b", "zeta-7b", "zeta-7b"),
    ("ext-0000", "zeta-7b", "kappa-70b"): ("zeta-7b", "zeta-7b", "kappa-70b"),
    ("ext-0000", "omega-13b", "kappa-70b"): ("tie", "tie", "omega-13b"),
    ("ext-0001", "zeta-7b", "omega-13b"): ("both_bad", "both_bad", "zeta-7b"),
    ("ext-0001", "zeta-7b", "kappa-70b"): ("zeta-7b", "zeta-7b", "zeta-7b"),
    ("ext-0001", "omega-13b", "kappa-70b"): ("omega-13b", "kappa-70b", "tie"),
}


def pairwise_plan(index: int) -> Callable[[Assignment], dict]:
    def plan(assignment: Assignment) -> dict:
        pair = sorted(canonical_models(assignment), key=MODELS.index)
        winner = VOTES[(prompt_of(assignment), *pair)][index]
        return {"vote": shown_vote(assignment, winner), "rationale": f"alasan {index}"}

    return plan


@pytest.fixture
def pairwise_project(make_rating_project):
    project = make_rating_project(kind="pairwise", n_annotators=3, pair_mode="all")
    for index, user in enumerate(project.annotators):
        assert drain(project, user, pairwise_plan(index)) == 6
    return project


# datasets reads the offline switches when it is imported, so loading runs in a fresh interpreter (one
# for several folders: starting it is the slow part).
LOAD_SCRIPT = """
import json, sys
import datasets
out = []
for folder in sys.argv[1:]:
    loaded = datasets.load_dataset(folder)
    out.append({name: {"columns": part.column_names, "rows": part.to_list()} for name, part in loaded.items()})
print(json.dumps(out, default=str))
"""


def load_offline_many(folders: list[Path], tmp_path: Path) -> list[dict]:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT, *map(str, folders)],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_offline(folder: Path, tmp_path: Path) -> dict:
    return load_offline_many([folder], tmp_path)[0]


def exported_text(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` as text: parquet files as their rows in JSON, the rest decoded."""
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            out[str(path)] = json.dumps(pq.read_table(path).to_pylist(), default=str, ensure_ascii=False)
        else:
            out[str(path)] = path.read_bytes().decode("utf-8", errors="replace")
    return out
