"""Question jobs: concept pairs of an authoring project; the error taxonomy, the conflict and label
CSVs and the taxonomy review of LLM-written questions of an answering project."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER, REVIEWER
from annotation import selectors, services
from annotation.forms import ConceptPairsForm, ErrorTaxonomyForm, TaxonomyForm
from annotation.models import Project
from annotation.views.common import current_lang, job_project
from datasets_app.domain.questions import OPTIONS, QUESTION, taxonomy_from_data


@role_required(PROJECT_MANAGER)
@require_POST
def manage_error_taxonomy(request: HttpRequest, project_id: int) -> HttpResponse:
    """Edit the error taxonomy LLM-written questions of an answering project are reviewed with."""
    project = job_project(project_id, Project.Kind.MCQ_ANSWER)
    form = ErrorTaxonomyForm(request.POST, project=project)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        services.error_taxonomy_set(project=project, categories=form.cleaned_data["taxonomy"])
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Error taxonomy saved."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_pairs_upload(request: HttpRequest, project_id: int) -> HttpResponse:
    project = job_project(project_id, Project.Kind.QUESTION_AUTHORING)
    form = ConceptPairsForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        counts = services.concept_pairs_add(
            project=project, records=form.records(), language=form.cleaned_data["language"]
        )
    except services.PairsInvalid as exc:
        for location, field, message in exc.errors[:10]:
            messages.error(request, f"{location}: {field}: {message}" if field else f"{location}: {message}")
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("%(added)d pair(s) added, %(skipped)d already present.") % counts)
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
def manage_conflicts_csv(request: HttpRequest, project_id: int) -> HttpResponse:
    project = job_project(project_id, Project.Kind.MCQ_ANSWER)
    response = HttpResponse(
        selectors.conflict_matrix_csv(project=project), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="answer-conflicts-{project.pk}.csv"'
    return response


@role_required(PROJECT_MANAGER)
def manage_taxonomy_labels_csv(request: HttpRequest, project_id: int) -> HttpResponse:
    """One error label per reviewed LLM-written question, the input of ``manage.py taxonomy_shares``."""
    project = job_project(project_id, Project.Kind.MCQ_ANSWER)
    response = HttpResponse(
        selectors.taxonomy_labels_csv(project=project), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="taxonomy-labels-{project.pk}.csv"'
    return response


@role_required(REVIEWER, PROJECT_MANAGER)
def review_llm_questions(request: HttpRequest, project_id: int) -> HttpResponse:
    """Error-taxonomy review of the LLM-written questions of an answering project."""
    project = get_object_or_404(Project, pk=project_id, kind=Project.Kind.MCQ_ANSWER)
    categories = taxonomy_from_data(project.error_taxonomy)
    if request.method == "POST":
        form = TaxonomyForm(request.POST, categories=categories)
        question = project.dataset.questions.filter(pk=request.POST.get("question")).first()
        if question is None:
            raise Http404
        if form.is_valid():
            try:
                services.question_error_review_save(
                    project=project,
                    question=question,
                    reviewer=request.user,
                    errors=form.cleaned_data["error_types"],
                    option_errors=form.cleaned_data["option_error_types"],
                    primary_error=form.cleaned_data["primary_error"],
                    comment=form.cleaned_data["comment"],
                )
            except services.AnnotationError as exc:
                messages.error(request, shown(exc))
            else:
                messages.success(request, _("Review saved."))
        else:
            messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:review_llm", project_id=project.pk)
    items = selectors.llm_questions(project=project, reviewer_id=request.user.pk)
    report = selectors.mcq_report(project=project, lang=current_lang())
    context = {
        "project": project,
        "items": items,
        "question_categories": [
            (c.code, c.label(current_lang())) for c in categories if QUESTION in c.applies_to
        ],
        "option_categories": [
            (c.code, c.label(current_lang())) for c in categories if OPTIONS in c.applies_to
        ],
        "all_categories": [(c.code, c.label(current_lang())) for c in categories],
        "report": report,
    }
    return render(request, "annotation/review_llm.html", context)
