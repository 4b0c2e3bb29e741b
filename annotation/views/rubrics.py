"""The rubric designer: the criteria, a new criterion, a criterion's edit page."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER
from annotation import selectors, services
from annotation.forms import RubricForm


@role_required(PROJECT_MANAGER)
def rubric_list(request: HttpRequest) -> HttpResponse:
    services.rubric_defaults_ensure()  # IndoPref's relevance and fluency are always there to pick
    return render(request, "annotation/rubric_list.html", {"rubrics": selectors.rubric_summaries()})


def _rubric_form_page(request: HttpRequest, form: RubricForm, summary: Any) -> HttpResponse:
    if request.method == "POST" and form.is_valid():
        try:
            criterion, version, new_version = services.rubric_save(new=summary is None, **form.rubric_input())
        except services.RubricInvalid as exc:
            for name, message in exc.errors.items():
                field = name.replace(".", "_") if name.replace(".", "_") in form.fields else None
                form.add_error(field, shown(message) if field else f"{name}: {shown(message)}")
        else:
            if new_version:
                text = _(
                    "Saved %(criterion)s as version %(version)d; projects already under way keep "
                    "the version they started with."
                )
            else:
                text = _("Saved %(criterion)s (version %(version)d).")
            messages.success(request, text % {"criterion": criterion, "version": version})
            return redirect("annotation:rubric_list")
    return render(request, "annotation/rubric_edit.html", {"form": form, "rubric": summary})


@role_required(PROJECT_MANAGER)
def rubric_create(request: HttpRequest) -> HttpResponse:
    return _rubric_form_page(request, RubricForm(request.POST or None), None)


@role_required(PROJECT_MANAGER)
def rubric_edit(request: HttpRequest, criterion: str) -> HttpResponse:
    summary = selectors.rubric_detail(criterion)
    if summary is None:
        raise Http404
    initial = RubricForm.initial_for(summary)
    data = None
    if request.method == "POST":
        data = request.POST.copy()
        data["criterion"] = criterion
    return _rubric_form_page(request, RubricForm(data, initial=initial, editing=True), summary)
