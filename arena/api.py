"""REST operations of the arena, one view per operation, over the same services as the pages.

A voter starts a battle on a project, reads it (its answers as they grow; its event stream is the page's
``/arena/b/{token}/stream``), continues it, and votes. Project managers and researchers read the voted
battles as rows of the ``leaderboard`` command's CSV columns.
"""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from accounts.roles import ANNOTATOR, DATA_ROLES
from annotation.models import Membership, Project
from arena import selectors, services
from arena.models import Arena, Battle
from arena.serializers import (
    ArenaErrorSerializer,
    BattleContinueInputSerializer,
    BattleRowSerializer,
    BattleSerializer,
    BattleStartInputSerializer,
    BattleVoteInputSerializer,
)

NOT_FOUND = OpenApiResponse(description="No such arena or battle for you.")


def battle_data(battle: Battle) -> dict:
    """The blinded view of a battle: sides A and B, never an endpoint, model or response id, except the
    names under ``reveal`` after the vote in an arena that reveals them."""
    arena = Arena.objects.get(project_id=battle.project_id)
    answers = selectors.battle_answers(battle)
    turns = []
    for n, text in enumerate(battle.prompt.turns):
        row = {"user": text}
        for side in ("A", "B"):
            answer = answers.get((n, side))
            row[side.lower()] = None if answer is None else {"status": answer.status, "text": answer.text}
        turns.append(row)
    reveal = None
    if battle.status == Battle.Status.VOTED and arena.reveal == Arena.Reveal.AFTER_VOTE:
        names = Battle.objects.filter(pk=battle.pk).values_list("endpoint_a__slug", "endpoint_b__slug").get()
        reveal = {"A": names[0], "B": names[1]}
    return {
        "battle": battle.token,
        "status": battle.status,
        "ending": battle.ending,
        "language": battle.language,
        "register": battle.register,
        "category": battle.category,
        "turns": turns,
        "can_vote": battle.status == Battle.Status.READY,
        "vote": battle.vote,
        "stream_url": reverse("arena:stream", args=[battle.token]) + f"?turn={battle.n_turns - 1}",
        "reveal": reveal,
    }


def _own(request, token: str) -> Battle:
    try:
        return selectors.battle_for_user(token=token, user=request.user)
    except Battle.DoesNotExist:
        raise Http404 from None


def _refused(exc: services.ArenaError) -> Response:
    code = (
        status.HTTP_409_CONFLICT if isinstance(exc, services.BattleConflict) else status.HTTP_400_BAD_REQUEST
    )
    return Response({"detail": str(exc)}, status=code)


class BattleStartApi(APIView):
    """Start a battle on the caller's prompt in an arena they are a member of."""

    permission_classes = [HasRole(ANNOTATOR)]

    @extend_schema(
        request=BattleStartInputSerializer,
        responses={201: BattleSerializer, 400: ArenaErrorSerializer, 404: NOT_FOUND},
    )
    def post(self, request, project_id: int):
        membership = (
            Membership.objects.select_related("project")
            .filter(project_id=project_id, user_id=request.user.pk, project__kind=Project.Kind.ARENA)
            .first()
        )
        if membership is None:
            raise Http404
        data = BattleStartInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            battle = services.battle_start(
                project=membership.project,
                user=request.user,
                text=data.validated_data["prompt"],
                language=data.validated_data["language"],
                register=data.validated_data["register"],
                category=data.validated_data["category"],
            )
        except services.ArenaError as exc:
            return _refused(exc)
        battle = selectors.battle_for_user(token=battle.token, user=request.user)
        return Response(battle_data(battle), status=status.HTTP_201_CREATED)


class BattleDetailApi(APIView):
    """The caller's battle, blinded, with its answers as stored so far."""

    permission_classes = [HasRole(ANNOTATOR)]

    @extend_schema(responses={200: BattleSerializer, 404: NOT_FOUND})
    def get(self, request, token: str):
        battle = _own(request, token)
        if battle.status == Battle.Status.STREAMING:
            services.battle_expire(battle_id=battle.pk)
            battle = _own(request, token)
        return Response(battle_data(battle))


class BattleContinueApi(APIView):
    """Send the caller's next message to both models (once both answered the last one)."""

    permission_classes = [HasRole(ANNOTATOR)]

    @extend_schema(
        request=BattleContinueInputSerializer,
        responses={
            200: BattleSerializer,
            400: ArenaErrorSerializer,
            404: NOT_FOUND,
            409: ArenaErrorSerializer,
        },
    )
    def post(self, request, token: str):
        battle = _own(request, token)
        data = BattleContinueInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.battle_continue(battle=battle, user=request.user, text=data.validated_data["prompt"])
        except services.ArenaError as exc:
            return _refused(exc)
        return Response(battle_data(_own(request, token)))


class BattleVoteApi(APIView):
    """Vote A, B, tie or both_bad; refused (409) before both answers are complete or when not counted."""

    permission_classes = [HasRole(ANNOTATOR)]

    @extend_schema(
        request=BattleVoteInputSerializer,
        responses={
            200: BattleSerializer,
            400: ArenaErrorSerializer,
            404: NOT_FOUND,
            409: ArenaErrorSerializer,
        },
    )
    def post(self, request, token: str):
        battle = _own(request, token)
        data = BattleVoteInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.battle_vote(
                battle=battle,
                user=request.user,
                vote=data.validated_data["vote"],
                reason=data.validated_data["reason"],
            )
        except services.ArenaError as exc:
            return _refused(exc)
        return Response(battle_data(_own(request, token)))


class BattleRowsApi(APIView):
    """The arena's voted battles as rows of the ``leaderboard`` command's CSV columns."""

    permission_classes = [HasRole(*DATA_ROLES)]

    @extend_schema(responses={200: BattleRowSerializer(many=True), 404: NOT_FOUND})
    def get(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id, kind=Project.Kind.ARENA)
        rows = selectors.battle_leaderboard_rows(project_ids=[project.pk])
        return Response(BattleRowSerializer(rows, many=True).data)
