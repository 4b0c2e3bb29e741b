"""The review queue: filters, one verdict, many accepted at once."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER, REVIEWER
from annotation import selectors, services
from annotation.models import Assignment
from annotation.views.common import current_lang


def _queue_url(query: str) -> str:
    url = reverse("annotation:review")
    return f"{url}?{query}" if query else url


@role_required(REVIEWER, PROJECT_MANAGER)
def review_list(request: HttpRequest) -> HttpResponse:
    """The review queue: filters, sort and paging in the query string; real annotators first, simulated
    ones only when asked; each item as its annotator saw it, with a box to accept many at once."""
    try:
        filters = selectors.ReviewFilter.from_query(request.GET)
    except selectors.ReviewFilterInvalid as exc:
        for name, message in exc.errors.items():
            messages.error(request, f"{name}: {message}")
        filters = selectors.ReviewFilter()
    flagged: dict[int, set[int]] = {}
    if filters.flagged:
        flagged = selectors.flagged_annotators(project_ids=[filters.project] if filters.project else None)
    queue = selectors.review_queue_filtered(filters=filters, reviewer_id=request.user.pk, flagged=flagged)
    page = selectors.review_page(queue, request.GET.get("page"))
    items = selectors.review_items(list(page.object_list), lang=current_lang(), flagged=flagged)
    query = urlencode(filters.as_query())
    context = {
        "items": items,
        "page": page,
        "filters": filters,
        "query": query,
        "choices": selectors.review_filter_choices(filters=filters),
    }
    return render(request, "annotation/review.html", context)


@role_required(REVIEWER, PROJECT_MANAGER)
@require_POST
def review_submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = get_object_or_404(Assignment, pk=assignment_id)
    try:
        services.review_create(
            assignment=assignment,
            reviewer=request.user,
            verdict=request.POST.get("verdict", ""),
            comment=request.POST.get("comment", ""),
        )
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Review saved."))
    return redirect(_queue_url(request.POST.get("query", "")))


@role_required(REVIEWER, PROJECT_MANAGER)
@require_POST
def review_accept_many(request: HttpRequest) -> HttpResponse:
    """Accept every selected item of the page, or none with the reason."""
    raw = request.POST.getlist("selected")
    bad = [value for value in raw if not value.isdigit()]
    if bad:
        messages.error(request, _("Selected item %(value)r is not an item number.") % {"value": bad[0]})
        return redirect(_queue_url(request.POST.get("query", "")))
    try:
        reviews = services.reviews_accept_many(assignment_ids=[int(v) for v in raw], reviewer=request.user)
    except services.AnnotationError as exc:
        messages.error(request, _("Nothing was accepted: %(reason)s") % {"reason": shown(exc)})
    else:
        messages.success(request, _("%(n)d item(s) accepted.") % {"n": len(reviews)})
    return redirect(_queue_url(request.POST.get("query", "")))
