"""Annotation jobs: rubrics, projects, groups, tasks, assignments, long-format annotations, reviews.

Rating jobs (likert, best-of-N, pairwise) judge model responses. Translation jobs (``translation``,
``translation_review``) and question jobs (``question_authoring``, ``mcq_answer``) run through the same
projects, slots, claims and assignments; what they produce lives in ``datasets_app`` (translation units,
questions) with the history of every review round in ``TranslationRound`` and ``QuestionRound``.

Distribution rests on ``TaskSlot``: one row per (task, group) holding how many of the group's k places
are open, held by a lease, or submitted. The three counts always add up to k (a check constraint), so no
race can ever hand out a (k+1)-th place; the claim locks one open slot row and never scans assignments.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from datasets_app.models import Dataset, JobRecord, Prompt, Question, Response, TranslationUnit

# Per-annotator task order (annotation.domain.blinding): each slot row stores ORDER_SLOTS random keys and
# every annotator reads one of them from an index, rotated to start at their own offset.
ORDER_SLOTS = 4


def new_token() -> str:
    """Opaque handle of an assignment in annotator URLs: random, so it says nothing about the task."""
    return secrets.token_urlsafe(16)


def default_scale() -> dict:
    """The 1-5 scale every rubric had before scales could be chosen."""
    return {"points": 5}


class Rubric(models.Model):
    """Level descriptions of one criterion, for one category ("" = every category without its own).

    ``scale`` is ``{"points": N}`` (1..N, N from 2 to 10) or ``{"categories": [{"value", "label"}]}``
    (``annotation.domain.rubrics.scale_from_json``); every row of one criterion and version has the same.
    """

    criterion = models.SlugField(max_length=40)
    category = models.CharField(max_length=100, blank=True, help_text="Empty: the general rubric.")
    version = models.PositiveIntegerField(default=1)
    label = models.JSONField(help_text='Criterion name per language: {"id": ..., "en": ...}.')
    question = models.JSONField(default=dict, blank=True)
    levels = models.JSONField(help_text='Per language, level text by scale value: {"id": {"1": ...}}.')
    scale = models.JSONField(default=default_scale, help_text='{"points": 7} or {"categories": [...]}.')
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["criterion", "category", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["criterion", "category", "version"], name="uniq_rubric_criterion_category_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.criterion}/{self.category or 'default'} v{self.version}"


class Project(models.Model):
    class Kind(models.TextChoices):
        LIKERT = "likert", _("Likert rating")
        BEST_OF_N = "best_of_n", _("Best of N")
        PAIRWISE = "pairwise", _("Pairwise A/B")
        TRANSLATION = "translation", _("Translation")
        TRANSLATION_REVIEW = "translation_review", _("Translation review")
        QUESTION_AUTHORING = "question_authoring", _("Question authoring")
        MCQ_ANSWER = "mcq_answer", _("Multiple-choice answering")
        TRANSLATION_MQM = "translation_mqm", _("Translation errors (MQM)")
        TRANSLATION_ESA = "translation_esa", _("Translation errors and score (ESA)")
        # Live battles of two anonymous models on the person's own prompt (the ``arena`` app).
        ARENA = "arena", _("Arena (live model battles)")

    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        ACTIVE = "active", _("Active")
        PAUSED = "paused", _("Paused")
        CLOSED = "closed", _("Closed")

    class BestPick(models.TextChoices):
        OFF = "off", _("Off")
        OPTIONAL = "optional", _("Optional")
        REQUIRED = "required", _("Required")

    class PairMode(models.TextChoices):
        ALL = "all", _("All pairs")
        SAMPLE = "sample", _("Sample pairs per prompt")

    class TurnMode(models.TextChoices):
        OVERALL = "overall", _("Whole conversation")
        PER_TURN = "per_turn", _("Each turn")

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="annotation_projects")
    criteria = models.JSONField(
        default=list, blank=True, help_text="Criteria rated on their scales (likert)."
    )
    rubric_versions = models.JSONField(default=dict, blank=True, help_text="Rubric version per criterion.")
    best_pick = models.CharField(max_length=10, choices=BestPick.choices, default=BestPick.OFF)
    allow_all_bad = models.BooleanField(default=False)
    overlap = models.PositiveSmallIntegerField(default=3, help_text="Submissions needed per task per group.")
    seed = models.PositiveIntegerField(default=0)
    lease_minutes = models.PositiveIntegerField(default=30)
    allow_edits = models.BooleanField(default=True, help_text="Submitted answers may be changed later.")
    instructions_id = models.TextField(blank=True)
    instructions_en = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    pair_mode = models.CharField(max_length=10, choices=PairMode.choices, default=PairMode.ALL)
    pairs_per_prompt = models.PositiveSmallIntegerField(default=3)
    turn_mode = models.CharField(max_length=10, choices=TurnMode.choices, default=TurnMode.OVERALL)
    gold_rate = models.FloatField(default=0.0)
    n_tasks = models.PositiveIntegerField(default=0, help_text="Tasks that count toward k (gold excluded).")
    max_ambiguous = models.PositiveSmallIntegerField(
        default=3, help_text="mcq_answer: a question with more ambiguous flags than this is excluded."
    )
    flag_settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="Translation flags: thresholds and register word lists ({'register_markers': {...}}).",
    )
    error_taxonomy = models.JSONField(
        default=list,
        blank=True,
        help_text="Error categories for LLM-written questions ([{code, en, id, applies_to}]); empty: id-csqa's.",
    )
    quality_settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="Thresholds of the annotator quality signals (annotation.domain.quality.QualityThresholds).",
    )
    span_settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="Error-span jobs (MQM, ESA): {'categories': [...], 'weights': {...}}; empty: the MQM core "
        "typology and the WMT 2021 weights.",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    # Moves on (in the same transaction) whenever any rubric row is written (``selectors.rubrics_changed``):
    # every process keeps rubric texts under the project's stamp, and the loop reads the project row anyway.
    # Only that update writes it: a plain ``save()`` leaves it out (see ``save``).
    rubric_stamp = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="project_overlap_positive"),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0) & Q(gold_rate__lte=1), name="project_gold_rate_fraction"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        # A project read before a rubric was written must not take the stamp back when saved whole: the
        # texts some process keeps under the older stamp would be served again.
        if not self._state.adding and kwargs.get("update_fields") is None and not kwargs.get("force_insert"):
            deferred = self.get_deferred_fields()  # as Django's own save: only the fields that were loaded
            kwargs["update_fields"] = [
                f.name
                for f in self._meta.concrete_fields
                if not f.primary_key and f.name != "rubric_stamp" and f.attname not in deferred
            ]
        super().save(*args, **kwargs)

    @property
    def is_pairwise(self) -> bool:
        return self.kind == self.Kind.PAIRWISE

    @property
    def is_rating(self) -> bool:
        return self.kind in RATING_KINDS


RATING_KINDS = (Project.Kind.LIKERT, Project.Kind.BEST_OF_N, Project.Kind.PAIRWISE)
# Error-span jobs: annotators mark spans of a translation with a category and a severity (MQM), or with a
# severity and then score the segment 0-100 (ESA).
SPAN_KINDS = (Project.Kind.TRANSLATION_MQM, Project.Kind.TRANSLATION_ESA)
JOB_KINDS = (
    Project.Kind.TRANSLATION,
    Project.Kind.TRANSLATION_REVIEW,
    Project.Kind.QUESTION_AUTHORING,
    Project.Kind.MCQ_ANSWER,
    *SPAN_KINDS,
)


class ConceptPair(models.Model):
    """A (category, concept) an author of a question_authoring project writes one question for."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="concept_pairs")
    category = models.CharField(max_length=100)
    concept = models.CharField(max_length=200)
    language = models.CharField(max_length=3, default="ind")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "category", "concept", "language"], name="uniq_concept_pair_per_project"
            )
        ]

    def __str__(self) -> str:
        return f"{self.category}: {self.concept}"


class AnnotatorGroup(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="groups")
    name = models.CharField(max_length=100)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="annotator_groups", blank=True
    )

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="uniq_group_name_per_project")
        ]

    def __str__(self) -> str:
        return f"{self.project_id}:{self.name}"


class Membership(models.Model):
    """An annotator in one group of a project, with their place in their own task order.

    ``cursor_key`` is the order key of the last task they claimed: the next claim reads the index from
    there, so an annotator far into a large project does not walk past their own finished tasks again.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    group = models.ForeignKey(AnnotatorGroup, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    order_slot = models.PositiveSmallIntegerField(default=0)
    order_offset = models.BigIntegerField(default=0)
    cursor_key = models.BigIntegerField(null=True, blank=True)
    n_served = models.PositiveIntegerField(default=0, help_text="Tasks handed out, gold included.")
    is_simulated = models.BooleanField(
        default=False,
        help_text="A simulated annotator (demo data): left out of the review queue unless asked.",
    )
    qualification = models.CharField(
        max_length=10,
        blank=True,
        choices=[("passed", "passed"), ("failed", "failed")],
        help_text="Outcome of the project's qualification set, once taken (empty: not yet, or none required).",
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "group", "id"]
        constraints = [
            # One group per annotator and project: k per group would mean nothing otherwise.
            models.UniqueConstraint(fields=["project", "user"], name="uniq_member_per_project")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.group_id}"


class Task(models.Model):
    """What is shown once: a prompt with its responses, a response pair (and turn) for pairwise, a
    translation unit, a concept pair to write a question for, or a question to answer.

    ``response_ids`` fixes the canonical order that assignment permutations index into (empty for the
    translation and question jobs).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tasks")
    prompt = models.ForeignKey(
        Prompt, null=True, blank=True, on_delete=models.PROTECT, related_name="annotation_tasks"
    )
    translation_unit = models.ForeignKey(
        TranslationUnit, null=True, blank=True, on_delete=models.PROTECT, related_name="annotation_tasks"
    )
    question = models.ForeignKey(
        Question, null=True, blank=True, on_delete=models.PROTECT, related_name="annotation_tasks"
    )
    concept_pair = models.ForeignKey(
        ConceptPair, null=True, blank=True, on_delete=models.CASCADE, related_name="tasks"
    )
    response_ids = models.JSONField(
        default=list, blank=True, help_text="Canonical order of the task's responses."
    )
    response_a = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    response_b = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    turn = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="0-based turn judged (pairwise)."
    )
    is_gold = models.BooleanField(default=False)
    gold_answer = models.JSONField(null=True, blank=True, help_text="Expected answer in canonical indexes.")

    class Meta:
        ordering = ["project", "id"]
        indexes = [models.Index(fields=["project", "is_gold"], name="task_project_gold")]

    def __str__(self) -> str:
        return f"task {self.pk} of project {self.project_id}"


class TaskSlot(models.Model):
    """The k places a group has on a task: open + active + submitted == capacity, always."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey(AnnotatorGroup, on_delete=models.CASCADE, related_name="slots")
    # Looked up through ``uniq_slot_per_task_group``, whose first column it is.
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="slots", db_index=False)
    capacity = models.PositiveSmallIntegerField()
    open_count = models.PositiveSmallIntegerField()
    active_count = models.PositiveSmallIntegerField(default=0)
    submitted_count = models.PositiveSmallIntegerField(default=0)
    order_key_0 = models.BigIntegerField()
    order_key_1 = models.BigIntegerField()
    order_key_2 = models.BigIntegerField()
    order_key_3 = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "group"], name="uniq_slot_per_task_group"),
            models.CheckConstraint(
                condition=Q(open_count=F("capacity") - F("active_count") - F("submitted_count")),
                name="slot_counts_add_up_to_capacity",
            ),
        ]
        indexes = [
            # The claim's scan: a group's open places in one order, ties broken by task id.
            models.Index(
                fields=["group", f"order_key_{i}", "task"],
                condition=Q(open_count__gt=0),
                name=f"slot_open_order_task_{i}",
            )
            for i in range(ORDER_SLOTS)
        ]

    def __str__(self) -> str:
        return f"slot task={self.task_id} group={self.group_id} ({self.submitted_count}/{self.capacity})"


class Assignment(models.Model):
    class Status(models.TextChoices):
        ASSIGNED = "assigned", _("Assigned")
        SUBMITTED = "submitted", _("Submitted")
        SKIPPED = "skipped", _("Skipped")
        EXPIRED = "expired", _("Expired")

    # Unique through ``uniq_assignment_token``: a unique field would also get a pattern (LIKE) index on
    # PostgreSQL, which no query uses and every new assignment would update. The project and the task are
    # the first columns of indexes below, which serve their lookups, so they have none of their own.
    token = models.CharField(max_length=32, default=new_token, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments", db_index=False)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="assignments", db_index=False)
    slot = models.ForeignKey(TaskSlot, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    group = models.ForeignKey(AnnotatorGroup, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_assignments"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASSIGNED)
    round = models.PositiveSmallIntegerField(default=1, help_text="Goes up when a reviewer sends it back.")
    is_gold = models.BooleanField(default=False)
    permutation = models.JSONField(help_text="Canonical response indexes in the order shown.")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    seconds_on_task = models.FloatField(null=True, blank=True)
    skip_reason = models.CharField(max_length=500, blank=True)
    n_edits = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["token"], name="uniq_assignment_token"),
            models.UniqueConstraint(fields=["task", "annotator"], name="uniq_assignment_task_annotator"),
        ]
        indexes = [
            models.Index(fields=["project", "annotator", "status"], name="assignment_own_status"),
            models.Index(
                fields=["project", "lease_expires_at"],
                condition=Q(status="assigned"),
                name="assignment_open_leases",
            ),
            models.Index(fields=["project", "status", "submitted_at"], name="assignment_project_status"),
            # An annotator's progress (their submitted, non-gold tasks), counted on every claim: exactly this
            # index, so the count never walks the whole project's submitted rows.
            models.Index(
                fields=["project", "annotator"],
                condition=Q(status="submitted", is_gold=False),
                name="assignment_own_done",
            ),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.status})"


class AnnotationQuerySet(models.QuerySet):
    """The one definition of the answers that count, used by every read that counts them."""

    def current(self) -> AnnotationQuerySet:
        """Rows of submitted work in its assignment's current round (a returned answer is replaced by its
        revision; the old round stays stored but no longer counts). Gold work included."""
        return self.filter(assignment__status=Assignment.Status.SUBMITTED, round=F("assignment__round"))

    def counted(self) -> AnnotationQuerySet:
        """Current rows of real (non-gold) work: what agreement, exports and quality measures read."""
        return self.current().filter(assignment__is_gold=False)


class Annotation(models.Model):
    """One value in long format: a rating of a response on a criterion, a best pick, or a vote.

    ``response`` is canonical (never a screen position): the rated response, the picked one, or the
    pairwise winner (empty for a tie or both bad). ``value_int`` holds 1-5 ratings; ``choice`` holds
    "all_bad" or the canonical pairwise vote A/B/tie/both_bad (A is the task's ``response_a``).
    """

    # Looked up through ``uniq_annotation_value``, whose first column it is: ten answer rows a submit
    # update one index fewer each.
    assignment = models.ForeignKey(
        Assignment, on_delete=models.CASCADE, related_name="annotations", db_index=False
    )
    round = models.PositiveSmallIntegerField(default=1)
    response = models.ForeignKey(Response, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    turn = models.PositiveSmallIntegerField(null=True, blank=True)
    criterion = models.CharField(max_length=40)
    value_int = models.SmallIntegerField(null=True, blank=True)
    choice = models.CharField(max_length=20, blank=True)
    comment = models.TextField(blank=True)
    rubric_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AnnotationQuerySet.as_manager()

    class Meta:
        ordering = ["assignment", "id"]
        constraints = [
            models.UniqueConstraint(
                F("assignment"),
                F("round"),
                Coalesce(F("response"), Value(0)),
                Coalesce(F("turn"), Value(-1)),
                F("criterion"),
                name="uniq_annotation_value",
            )
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id}/{self.criterion}"


class Review(models.Model):
    class Verdict(models.TextChoices):
        ACCEPT = "accept", _("Accept")
        REJECT = "reject", _("Reject")

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="reviews")
    annotation = models.ForeignKey(
        Annotation, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviews"
    )
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    comment = models.TextField(blank=True)
    round = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "round", "reviewer"],
                condition=Q(annotation__isnull=True),
                name="uniq_review_per_round",
            )
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on {self.assignment_id} round {self.round}"


class TranslationError(models.TextChoices):
    """Error categories a translation reviewer can give when rejecting (LoraxBench review guidelines)."""

    TRANSLATION = "translation_error", _("Translation error")
    WRONG_LANGUAGE = "wrong_language", _("Wrong language")
    SENTENCE_STRUCTURE = "sentence_structure", _("Sentence structure")
    FLUENCY = "fluency", _("Fluency")
    CONTEXT = "context", _("Context")
    SUBJECTIVITY = "subjectivity", _("Subjectivity")
    TYPO = "typo_mechanics", _("Typo / mechanics")


class TranslationRound(models.Model):
    """One round of a translation unit: the text a translator submitted and what the reviewer said.

    Round 1 is the first translation (or the imported one); a rejection opens the next round for the same
    translator. ``fixed_text`` holds the reviewer's edit when the verdict is ``fix`` (the unit keeps it).
    """

    class Verdict(models.TextChoices):
        ACCEPT = "accept", _("Accept")
        FIX = "fix", _("Fix")
        REJECT = "reject", _("Reject")

    unit = models.ForeignKey(TranslationUnit, on_delete=models.CASCADE, related_name="rounds")
    round = models.PositiveSmallIntegerField()
    translation_text = models.TextField(blank=True)
    translator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    translator_name = models.CharField(max_length=200, blank=True)
    translation_assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    flags = models.JSONField(default=list, blank=True, help_text="Automatic flags of the submitted text.")
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    review_assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verdict = models.CharField(max_length=10, choices=Verdict.choices, blank=True)
    error_categories = models.JSONField(default=list, blank=True)
    comment = models.TextField(blank=True)
    fixed_text = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["unit", "round"]
        constraints = [models.UniqueConstraint(fields=["unit", "round"], name="uniq_translation_round")]

    def __str__(self) -> str:
        return f"unit {self.unit_id} round {self.round} ({self.verdict or 'open'})"


class QuestionRound(models.Model):
    """One round of an authored question: what the author submitted and the reviewer's verdict."""

    class Verdict(models.TextChoices):
        ACCEPT = "accept", _("Accept")
        RETURN = "return", _("Return to author")

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="rounds")
    round = models.PositiveSmallIntegerField()
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.TextField()
    choices = models.JSONField()
    answer_key = models.CharField(max_length=1)
    distractor = models.CharField(max_length=1, blank=True)
    concept_override = models.BooleanField(default=False)
    override_comment = models.TextField(blank=True)
    submitted_at = models.DateTimeField()
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verdict = models.CharField(max_length=10, choices=Verdict.choices, blank=True)
    comment = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["question", "round"]
        constraints = [models.UniqueConstraint(fields=["question", "round"], name="uniq_question_round")]

    def __str__(self) -> str:
        return f"question {self.question_id} round {self.round} ({self.verdict or 'open'})"


class QuestionErrorReview(models.Model):
    """A reviewer's error-taxonomy tags on a question (LLM-written ones, id-csqa): ``errors`` of the question,
    ``option_errors`` of its options, from the project's taxonomy; both empty means the reviewer found nothing
    wrong. ``primary_error`` is the main one of them (chosen by the reviewer when several are ticked)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="question_error_reviews")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="error_reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    errors = models.JSONField(default=list, blank=True, help_text="Errors of the question itself.")
    option_errors = models.JSONField(default=list, blank=True, help_text="Errors of its options.")
    primary_error = models.CharField(
        max_length=40,
        blank=True,
        help_text="The main error, one of those ticked (the question's one label in the error shares); "
        "empty when none is ticked.",
    )
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "question", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "question", "reviewer"], name="uniq_question_error_review"
            )
        ]

    def __str__(self) -> str:
        return f"taxonomy review of {self.question_id} by {self.reviewer_id}"


class FlagRecompute(JobRecord):
    """A background recomputation of the translation flags of a project's units, with its progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="flag_recomputes")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    n_flagged = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"flag recompute {self.pk} ({self.status}, {self.done}/{self.total})"

    @property
    def percent(self) -> int:
        return (
            round(100 * self.done / self.total) if self.total else (100 if self.status == "succeeded" else 0)
        )


class StudyImport(JobRecord):
    """A study from another tool (Label Studio, Argilla, Potato) imported in the background: the upload and
    how it is read, then the project it became or every problem that stopped it."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    tool = models.CharField(max_length=20)
    # Read from the file when it was previewed (the worker reads it again).
    tool_version = models.CharField(max_length=100, blank=True)
    kind = models.CharField(max_length=30, blank=True)
    name = models.CharField(max_length=200)
    language = models.CharField(max_length=3, default="ind")
    # The data fields the file is read with ({"prompt", "responses", "item_id"}); empty: the tool's defaults.
    mapping = models.JSONField(default=dict, blank=True)
    upload_path = models.CharField(max_length=500)
    original_filename = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="study_imports"
    )
    counts = models.JSONField(default=dict, blank=True)
    # The study's question name -> the criterion it is rated under here.
    criteria = models.JSONField(default=dict, blank=True)
    # Every problem found (file, record, field, message; with the message's template and values, to show
    # it in the page's language), up to a limit, and how many there were in all.
    errors = models.JSONField(default=list, blank=True)
    n_errors = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"study import {self.pk} ({self.name}, {self.status})"


class SpanSuggestion(models.Model):
    """A span offered to the annotators of an error-span task before they start: from the unit's automatic
    flags or from an LLM judge. Annotators accept, edit or remove each; ``ErrorSpan`` records which."""

    class Source(models.TextChoices):
        FLAGS = "flags", _("Automatic flags")
        LLM = "llm", _("LLM judge")

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="span_suggestions")
    source = models.CharField(max_length=10, choices=Source.choices)
    side = models.CharField(max_length=10, default="target")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    category = models.CharField(max_length=80)
    severity = models.CharField(max_length=10)
    note = models.CharField(
        max_length=300, blank=True, help_text="Why: the flag's code or the judge's words."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "side", "start", "end", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "source", "side", "start", "end", "category"], name="uniq_span_suggestion"
            ),
            models.CheckConstraint(condition=Q(end__gte=F("start")), name="span_suggestion_ordered"),
        ]

    def __str__(self) -> str:
        return f"{self.source} suggestion {self.start}-{self.end} on task {self.task_id}"


class ErrorSpan(models.Model):
    """One error an annotator marked in a submitted error-span task (one round of the assignment).

    ``start``/``end`` are character offsets (end exclusive) in the stored text of ``side``; an omission is
    marked on the source. ``origin`` says whether the span came from a suggestion; ``outcome`` what the
    annotator did with it (a removed suggestion is kept as a row with outcome ``removed`` and counts for
    no score).
    """

    class Side(models.TextChoices):
        TARGET = "target", _("Translation")
        SOURCE = "source", _("Source")

    class Origin(models.TextChoices):
        MANUAL = "manual", _("Marked by the annotator")
        SUGGESTED = "suggested", _("Suggested")

    class Outcome(models.TextChoices):
        NONE = "", _("Marked by the annotator")
        ACCEPTED = "accepted", _("Accepted")
        EDITED = "edited", _("Edited")
        REMOVED = "removed", _("Removed")

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="error_spans")
    round = models.PositiveSmallIntegerField(default=1)
    side = models.CharField(max_length=10, choices=Side.choices, default=Side.TARGET)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    category = models.CharField(max_length=80, blank=True)
    severity = models.CharField(max_length=10)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.MANUAL)
    suggestion = models.ForeignKey(
        SpanSuggestion, null=True, blank=True, on_delete=models.SET_NULL, related_name="outcomes"
    )
    outcome = models.CharField(max_length=10, choices=Outcome.choices, blank=True)
    comment = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["assignment", "round", "side", "start", "end", "id"]
        constraints = [models.CheckConstraint(condition=Q(end__gte=F("start")), name="error_span_ordered")]

    def __str__(self) -> str:
        return f"{self.severity} {self.category} {self.start}-{self.end} ({self.assignment_id})"


class AttentionCheck(models.Model):
    """An error-span task whose target carries a known, injected error (``domain.attention_checks``).

    The task shows ``target_text`` in place of its unit's translation and looks like any other task to the
    annotator; its answers are kept out of the scores, the span agreement and the score exports, and score
    the annotator on finding the error: a marked span overlapping ``start``-``end`` of the target.
    """

    class Kind(models.TextChoices):
        NUMBER_SWAP = "number_swap", _("Swapped number")
        NEGATION_DROP = "negation_drop", _("Dropped negation")
        UNTRANSLATED = "untranslated", _("Word left in the source language")

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="attention_check")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    target_text = models.TextField(help_text="The translation with the injected error, as annotators see it.")
    start = models.PositiveIntegerField(help_text="The credited span of the target (characters).")
    end = models.PositiveIntegerField()
    category = models.CharField(max_length=80, help_text="The category an annotator is expected to give.")
    severity = models.CharField(max_length=10)
    original = models.CharField(max_length=200, blank=True, help_text="What stood in the translation.")
    inserted = models.CharField(max_length=200, blank=True, help_text="What stands there now.")
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task"]
        constraints = [
            models.CheckConstraint(condition=Q(end__gte=F("start")), name="attention_check_ordered")
        ]

    def __str__(self) -> str:
        return f"{self.kind} check on task {self.task_id}"
