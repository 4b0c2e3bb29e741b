"""The arena: a project's model endpoints and rules, its battles, and each side's answer per turn.

A battle is a conversation of one person with two anonymous endpoints. Its user turns are a ``Prompt`` of the
arena's own dataset; each side's answers are a generated ``Response`` (one per endpoint); the vote is a
pairwise annotation of an ``annotation.Task`` made for the battle when the vote is cast.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Assignment, Project, Task
from datasets_app.models import Dataset, Prompt, Response
from evaluation.models import ModelEndpoint


def new_battle_token() -> str:
    """The battle's handle in the voter's URLs: random, so it says nothing about the battle or its models."""
    return secrets.token_urlsafe(16)


class Arena(models.Model):
    """The arena settings of a project of kind ``arena``."""

    class Reveal(models.TextChoices):
        AFTER_VOTE = "after_vote", _("After the vote")
        NEVER = "never", _("Never")

    class Sampler(models.TextChoices):
        UNIFORM = "uniform", _("Uniform")
        ACTIVE = "active", _("Active (narrows the confidence intervals)")

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="arena")
    endpoints = models.ManyToManyField(ModelEndpoint, related_name="arenas")
    reveal = models.CharField(max_length=12, choices=Reveal.choices, default=Reveal.AFTER_VOTE)
    sampler = models.CharField(max_length=12, choices=Sampler.choices, default=Sampler.UNIFORM)
    rules_id = models.TextField(blank=True)
    rules_en = models.TextField(blank=True)
    consent_id = models.TextField(blank=True)
    consent_en = models.TextField(blank=True)
    seed_dataset = models.ForeignKey(
        Dataset,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("Prompts offered as a starting point."),
    )
    max_prompt_chars = models.PositiveIntegerField(default=2000)
    battles_per_hour = models.PositiveSmallIntegerField(default=30)
    blocked_terms = models.JSONField(default=list, blank=True)
    max_turns = models.PositiveSmallIntegerField(default=3)
    max_tokens = models.PositiveIntegerField(default=512)
    timeout_s = models.PositiveIntegerField(
        default=120, help_text=_("A side that has not finished its answer by then ends the battle.")
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(max_turns__gte=1), name="arena_max_turns_positive"),
            models.CheckConstraint(condition=Q(timeout_s__gte=1), name="arena_timeout_positive"),
        ]

    def __str__(self) -> str:
        return f"arena of project {self.project_id}"


class Battle(models.Model):
    class Status(models.TextChoices):
        STREAMING = "streaming", _("Answering")
        READY = "ready", _("Ready for the vote")
        VOTED = "voted", _("Voted")
        NOT_COUNTED = "not_counted", _("Not counted")

    class Ending(models.TextChoices):
        NONE = "", _("None")
        TIMEOUT = "timeout", _("A model took too long")
        MODEL_ERROR = "model_error", _("A model failed to answer")

    token = models.CharField(max_length=32, default=new_battle_token, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="battles")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="battles")
    prompt = models.OneToOneField(Prompt, on_delete=models.PROTECT, related_name="battle")
    endpoint_a = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="+")
    endpoint_b = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="+")
    response_a = models.OneToOneField(Response, on_delete=models.PROTECT, related_name="+")
    response_b = models.OneToOneField(Response, on_delete=models.PROTECT, related_name="+")
    sampler = models.CharField(max_length=20)
    probability = models.FloatField(help_text=_("Probability with which the sampler chose this pair."))
    language = models.CharField(max_length=3)
    register = models.CharField(max_length=40, blank=True)
    category = models.CharField(max_length=100, blank=True)
    n_turns = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.STREAMING)
    ending = models.CharField(max_length=12, choices=Ending.choices, blank=True, default="")
    turn_deadline = models.DateTimeField(help_text=_("When the current turn's answers are due."))
    task = models.OneToOneField(Task, null=True, blank=True, on_delete=models.SET_NULL, related_name="battle")
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="battle"
    )
    vote = models.CharField(max_length=10, blank=True, help_text=_("A, B, tie or both_bad (A: endpoint_a)."))
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    voted_at = models.DateTimeField(null=True, blank=True)
    # A reviewer may take a voted battle out of the leaderboard and the export (it stays stored and listed).
    excluded = models.BooleanField(default=False)
    excluded_reason = models.TextField(blank=True)
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    excluded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["token"], name="uniq_battle_token"),
            models.CheckConstraint(
                condition=~Q(endpoint_a=models.F("endpoint_b")), name="battle_two_endpoints"
            ),
        ]
        indexes = [models.Index(fields=["project", "user", "created_at"], name="battle_user_recent")]

    def __str__(self) -> str:
        return f"battle {self.pk} ({self.status})"


class BattleAnswer(models.Model):
    """One side's answer on one turn: streamed by a model worker, kept here as it grows."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting")
        STREAMING = "streaming", _("Streaming")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    battle = models.ForeignKey(Battle, on_delete=models.CASCADE, related_name="answers")
    side = models.CharField(max_length=1, choices=[("A", "A"), ("B", "B")])
    turn = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    text = models.TextField(blank=True)
    n_tokens = models.PositiveIntegerField(default=0)
    ttft_ms = models.FloatField(null=True, blank=True, help_text=_("Time to the first token."))
    duration_ms = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True, help_text=_("For managers only; never shown to the voter."))
    attempts = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["battle", "turn", "side"]
        constraints = [models.UniqueConstraint(fields=["battle", "turn", "side"], name="uniq_battle_answer")]

    def __str__(self) -> str:
        return f"battle {self.battle_id} turn {self.turn} side {self.side} ({self.status})"
