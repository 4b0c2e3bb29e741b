"""Project management pages: the project list, the new-project wizard, a project's page, its status,
groups, members and expired claims."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER
from annotation import selectors, services
from annotation.forms import (
    KIND_FIELDS,
    AttentionCheckForm,
    ConceptPairsForm,
    ErrorTaxonomyForm,
    FlagSettingsForm,
    GoldRateForm,
    GroupForm,
    MemberForm,
    ProjectCreateForm,
    QualificationForm,
    QualitySettingsForm,
)
from annotation.models import JOB_KINDS, SPAN_KINDS, Project
from annotation.views.common import GOLD_KINDS, current_lang, manager_project, response_rows


@role_required(PROJECT_MANAGER)
def manage_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/manage_list.html", {"projects": selectors.project_list()})


@role_required(PROJECT_MANAGER)
def manage_create(request: HttpRequest) -> HttpResponse:
    """A short wizard: choose the kind of job, then fill in only that kind's fields, seeing the chosen
    dataset's counts and one of its tasks as the annotator will see it."""
    kind = request.POST.get("kind") or request.GET.get("kind", "")
    if kind not in KIND_FIELDS:
        if kind:
            messages.error(
                request, _("Unknown project kind %(kind)s; choose one below.") % {"kind": repr(kind)}
            )
        # An arena is set up on its own page (its model endpoints, rules and limits): linked from the list.
        kinds = [(value, label) for value, label in Project.Kind.choices if value != Project.Kind.ARENA]
        return render(request, "annotation/manage_create.html", {"kinds": kinds})
    if request.method == "POST":
        form = ProjectCreateForm(request.POST, kind=kind)
    else:
        initial: dict[str, Any] = {"dataset": request.GET.get("dataset")}
        # The preview asks again with the form's choices (``from_form``): no criterion ticked is none, not
        # the default ones; "all bad" unticked is off.
        from_form = request.GET.get("from_form") == "1"
        if from_form or "criteria" in request.GET:
            initial["criteria"] = request.GET.getlist("criteria")
        if request.GET.get("best_pick") in Project.BestPick.values:
            initial["best_pick"] = request.GET["best_pick"]
        if from_form:
            initial["allow_all_bad"] = request.GET.get("allow_all_bad") == "on"
        form = ProjectCreateForm(initial=initial, kind=kind)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(created_by=request.user, **form.service_kwargs())
        except services.ProjectInvalid as exc:
            for name, message in exc.errors.items():
                form.add_error(name if name in form.fields else None, shown(message))
        else:
            messages.success(
                request,
                _("Project created with %(n)d tasks. Add annotators, then activate it.")
                % {"n": project.n_tasks},
            )
            return redirect("annotation:manage_detail", project_id=project.pk)
    context = {"form": form, "kind": kind, "kind_label": Project.Kind(kind).label}
    chosen = form["dataset"].value()
    dataset = (
        form.fields["dataset"].queryset.filter(pk=chosen).first() if str(chosen or "").isdigit() else None
    )
    if dataset is not None:
        context["summary"] = selectors.dataset_summary(dataset=dataset)
        services.rubric_defaults_ensure()  # the default criteria's scales, before any rubric was opened
        criteria = form["criteria"].value() if "criteria" in form.fields else []
        if (
            criteria
        ):  # in the form's order, as the project would be created (htmx sends the clicked one first)
            order = {value: n for n, (value, _label) in enumerate(form.fields["criteria"].choices)}
            criteria = sorted(criteria, key=lambda c: order.get(c, len(order)))
        best_pick = form["best_pick"].value() if "best_pick" in form.fields else None
        preview = selectors.task_preview(
            dataset=dataset,
            kind=kind,
            lang=current_lang(),
            criteria=criteria or [],
            best_pick=best_pick if best_pick in Project.BestPick.values else Project.BestPick.OPTIONAL,
            allow_all_bad="allow_all_bad" in form.fields and bool(form["allow_all_bad"].value()),
        )
        if preview and "responses" in preview:
            context["response_rows"] = response_rows(preview["responses"], preview["criteria"], {})
        context["preview"] = preview
        context["lang"] = current_lang()
    template = "annotation/manage_create.html#dataset" if request.htmx else "annotation/manage_create.html"
    return render(request, template, context)


@role_required(PROJECT_MANAGER)
def manage_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    context = {
        "project": project,
        "report": selectors.progress_report(project=project),
        "members": selectors.project_members(project=project),
        "groups": project.groups.order_by("id"),
        "group_form": GroupForm(),
        "member_form": MemberForm(project=project),
        "is_job": project.kind in JOB_KINDS,
        "quality": selectors.quality_report(project=project),
        "quality_form": QualitySettingsForm(project=project),
        "qualification_form": QualificationForm(project=project),
        "gold_rate_form": GoldRateForm(project=project),
        "gold_open": project.kind in GOLD_KINDS and project.status != Project.Status.CLOSED,
    }
    if project.kind in SPAN_KINDS:
        context["is_span"] = True
        context["span_agreement"] = selectors.span_agreement_summary(project)
        context["span_settings"] = selectors.span_settings_text(project)
        context["attention_form"] = AttentionCheckForm(
            project=project, checks=selectors.span_config_of(project).checks.as_json()
        )
    if project.kind in (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW):
        context["translation"] = selectors.translation_report(project=project, lang=current_lang())
        context["unit_rounds"] = selectors.unit_round_table(project=project, lang=current_lang(), limit=20)
        context["recompute"] = project.flag_recomputes.first()
        context["flag_form"] = FlagSettingsForm(project=project)
    elif project.kind == Project.Kind.QUESTION_AUTHORING:
        context["authoring"] = selectors.authoring_report(project=project)
        context["pairs_form"] = ConceptPairsForm()
    elif project.kind == Project.Kind.MCQ_ANSWER:
        context["mcq"] = selectors.mcq_report(project=project, lang=current_lang())
        context["taxonomy_form"] = ErrorTaxonomyForm(project=project)
    template = "annotation/manage_detail.html#progress" if request.htmx else "annotation/manage_detail.html"
    return render(request, template, context)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_status(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    try:
        services.project_status_set(project=project, action=request.POST.get("action", ""))
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_group_add(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    form = GroupForm(request.POST)
    if form.is_valid():
        try:
            services.annotator_group_create(project=project, name=form.cleaned_data["name"])
        except services.ProjectInvalid as exc:
            messages.error(request, shown(exc))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_member_add(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    form = MemberForm(request.POST, project=project)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:manage_detail", project_id=project.pk)
    added = 0
    for user in form.cleaned_data["users"]:
        try:
            services.project_member_add(project=project, user=user, group=form.cleaned_data["group"])
            added += 1
        except services.ProjectInvalid as exc:
            messages.error(request, f"{user.get_username()}: {exc}")
    if added:
        messages.success(request, _("%(n)d annotator(s) added.") % {"n": added})
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_member_remove(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    user = get_object_or_404(get_user_model(), pk=request.POST.get("user"))
    services.project_member_remove(project=project, user=user)
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_reclaim(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    n = services.leases_reclaim(project=project)
    messages.success(request, _("%(n)d expired claim(s) returned to the pool.") % {"n": n})
    return redirect("annotation:manage_detail", project_id=project.pk)
