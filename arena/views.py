"""Arena pages: a voter's arena (rules, consent, picker, prompt), a battle (two panes streaming, vote, next
message, reveal), the battle's event stream; a manager's new arena and battle list with the battles CSV.

The voter's pages and stream name battles only by their random token and sides only as A and B: no model
name, endpoint or response id reaches them before the vote (nor after it when the arena never reveals).
"""

from __future__ import annotations

import csv
import io

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import ANNOTATOR, DATA_ROLES, PROJECT_MANAGER, REVIEWER, has_role
from annotation.models import Membership, Project
from arena import relay, selectors, services
from arena.domain.battles import LEADERBOARD_COLUMNS
from arena.forms import CATEGORY_LABELS, ArenaCreateForm, BattleForm, ContinueForm
from arena.models import Arena, Battle
from datasets_app.domain.languages import language_name


def _lang() -> str:
    return "id" if (get_language() or "en").startswith("id") else "en"


def _member_project(request: HttpRequest, project_id: int) -> Project:
    membership = (
        Membership.objects.select_related("project")
        .filter(project_id=project_id, user_id=request.user.pk, project__kind=Project.Kind.ARENA)
        .first()
    )
    if membership is None:
        raise Http404
    return membership.project


def _own_battle(request: HttpRequest, token: str) -> Battle:
    try:
        return selectors.battle_for_user(token=token, user=request.user)
    except Battle.DoesNotExist:
        raise Http404 from None


@role_required(ANNOTATOR)
def arena_page(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: the arena's rules and consent, the language / register / category picker and the prompt box.
    POST: start a battle and go to it."""
    project = _member_project(request, project_id)
    arena = selectors.arena_of(project)
    lang = _lang()
    consent_text = arena.consent_id if lang == "id" else arena.consent_en
    consent_text = consent_text or arena.consent_en or arena.consent_id
    form_kwargs = {"lang": lang, "consent_required": bool(consent_text), "max_chars": arena.max_prompt_chars}
    if request.method == "POST":
        form = BattleForm(request.POST, **form_kwargs)
        if form.is_valid():
            try:
                battle = services.battle_start(
                    project=project,
                    user=request.user,
                    text=form.cleaned_data["text"],
                    language=form.cleaned_data["language"],
                    register=form.cleaned_data["register"],
                    category=form.cleaned_data["category"],
                )
            except services.ArenaError as exc:
                messages.error(request, shown(exc))
            else:
                return redirect("arena:battle", token=battle.token)
    else:
        initial = {"language": request.GET.get("language", "ind"), "text": request.GET.get("prompt", "")}
        form = BattleForm(initial=initial, **form_kwargs)
    chosen_language = form["language"].value() or "ind"
    context = {
        "project": project,
        "arena": arena,
        "form": form,
        "rules": (arena.rules_id if lang == "id" else arena.rules_en) or arena.rules_en or arena.rules_id,
        "consent_text": consent_text,
        "seeds": selectors.seed_prompts(arena=arena, language=chosen_language),
        "recent": [_battle_line(b) for b in selectors.battles_recent(project=project, user=request.user)],
    }
    return render(request, "arena/arena.html", context)


def _battle_line(battle: Battle) -> dict:
    return {
        "token": battle.token,
        "prompt": (battle.prompt.turns or [""])[0],
        "status": battle.status,
        "status_label": battle.get_status_display(),
        "created_at": battle.created_at,
    }


def battle_context(battle: Battle, lang: str) -> dict:
    """What the battle page shows: turns with the user's message and the A and B answers, the status, and the
    model names only once the vote is cast in an arena that reveals them."""
    arena = Arena.objects.get(project_id=battle.project_id)
    answers = selectors.battle_answers(battle)
    turns = []
    for n, text in enumerate(battle.prompt.turns):
        turns.append(
            {
                "number": n + 1,
                "index": n,
                "user": text,
                "a": answers.get((n, "A")),
                "b": answers.get((n, "B")),
            }
        )
    revealed = battle.status == Battle.Status.VOTED and arena.reveal == Arena.Reveal.AFTER_VOTE
    context = {
        "battle": battle,
        "arena": arena,
        "turns": turns,
        "current_turn": battle.n_turns - 1,
        "language_label": language_name(battle.language, lang),
        "category_label": CATEGORY_LABELS.get(battle.category, battle.category),
        "can_vote": battle.status == Battle.Status.READY,
        "can_continue": battle.status == Battle.Status.READY and battle.n_turns < arena.max_turns,
        "streaming": battle.status == Battle.Status.STREAMING,
        "continue_form": ContinueForm(),
    }
    if revealed:
        battle = Battle.objects.select_related("endpoint_a", "endpoint_b").get(pk=battle.pk)
        context["reveal"] = {"A": battle.endpoint_a.model_name, "B": battle.endpoint_b.model_name}
    return context


@role_required(ANNOTATOR)
@require_safe
def battle_page(request: HttpRequest, token: str) -> HttpResponse:
    battle = _own_battle(request, token)
    if battle.status == Battle.Status.STREAMING:
        battle = services.battle_expire(battle_id=battle.pk) or battle
    context = battle_context(battle, _lang())
    return render(request, "arena/battle.html", context)


@role_required(ANNOTATOR)
@require_safe
def battle_stream(request: HttpRequest, token: str) -> StreamingHttpResponse:
    """Server-sent events of the battle's current turn (``arena.relay``), bounded by
    ``ARENA_STREAM_TIMEOUT_S``."""
    battle = _own_battle(request, token)
    try:
        turn = int(request.GET.get("turn", battle.n_turns - 1))
    except ValueError:
        raise Http404 from None
    if not 0 <= turn < battle.n_turns:
        raise Http404
    frames = relay.battle_stream(battle=battle, turn=turn, timeout_s=settings.ARENA_STREAM_TIMEOUT_S)
    # Django gives the database connection back when the stream ends (request_finished, on close).
    response = StreamingHttpResponse(frames, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache, no-store"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must pass each event on at once
    return response


@role_required(ANNOTATOR)
@require_POST
def battle_vote(request: HttpRequest, token: str) -> HttpResponse:
    battle = _own_battle(request, token)
    try:
        services.battle_vote(
            battle=battle,
            user=request.user,
            vote=request.POST.get("vote", ""),
            reason=request.POST.get("reason", ""),
        )
    except services.BattleConflict as exc:
        messages.error(request, shown(exc))
        return redirect("arena:battle", token=token)
    except services.ArenaError as exc:
        messages.error(request, shown(exc))
        return redirect("arena:battle", token=token)
    messages.success(request, _("Thank you, your vote is stored."))
    return redirect("arena:battle", token=token)


@role_required(ANNOTATOR)
@require_POST
def battle_continue(request: HttpRequest, token: str) -> HttpResponse:
    battle = _own_battle(request, token)
    form = ContinueForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Write a message first."))
        return redirect("arena:battle", token=token)
    try:
        services.battle_continue(battle=battle, user=request.user, text=form.cleaned_data["text"])
    except services.ArenaError as exc:
        messages.error(request, shown(exc))
    return redirect("arena:battle", token=token)


# --- managers -------------------------------------------------------------------------------------------


@role_required(PROJECT_MANAGER)
def manage_create(request: HttpRequest) -> HttpResponse:
    form = ArenaCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.arena_create(created_by=request.user, **form.service_kwargs())
        except services.ArenaInvalid as exc:
            for name, message in exc.errors.items():
                form.add_error(name if name in form.fields else None, shown(message))
        else:
            messages.success(request, _("Arena created. Add annotators, then activate it."))
            return redirect("annotation:manage_detail", project_id=project.pk)
    return render(request, "arena/manage_create.html", {"form": form})


def _arena_project(project_id: int) -> Project:
    return get_object_or_404(Project, pk=project_id, kind=Project.Kind.ARENA)


@role_required(REVIEWER, *DATA_ROLES)
@require_safe
def manage_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _arena_project(project_id)
    battles = list(selectors.battle_manager_list(project=project))
    counts = {status: 0 for status in Battle.Status.values}
    for battle in battles:
        counts[battle.status] += 1
    context = {
        "project": project,
        "arena": selectors.arena_of(project),
        "battles": battles,
        "counts": counts,
        "can_exclude": has_role(request.user, (REVIEWER, PROJECT_MANAGER)),
    }
    return render(request, "arena/manage_detail.html", context)


@role_required(REVIEWER, PROJECT_MANAGER)
@require_POST
def battle_exclude(request: HttpRequest, battle_id: int) -> HttpResponse:
    """Take a voted battle out of the leaderboard with a reason, or put it back (``action=include``)."""
    battle = get_object_or_404(Battle, pk=battle_id)
    try:
        services.battle_exclude(
            battle=battle,
            reviewer=request.user,
            reason=request.POST.get("reason", ""),
            excluded=request.POST.get("action") != "include",
        )
    except services.ArenaError as exc:
        messages.error(request, shown(exc))
    return redirect("arena:manage_detail", project_id=battle.project_id)


@role_required(*DATA_ROLES)
@require_safe
def manage_battles_csv(request: HttpRequest, project_id: int) -> HttpResponse:
    """The arena's voted battles in the ``leaderboard`` command's CSV columns."""
    project = _arena_project(project_id)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(LEADERBOARD_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(selectors.battle_leaderboard_rows(project_ids=[project.pk]))
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="arena-{project.pk}-battles.csv"'
    return response
