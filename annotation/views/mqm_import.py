"""The MQM TSV import page for project managers: a WMT/Anthea file becomes an active MQM or ESA project
with its raters' spans (``services.mqm_tsv_import``), or the page lists every problem of the file by line
and column and nothing is written."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.permissions import role_required
from accounts.roles import PROJECT_MANAGER
from accounts.services import PersonInvalid
from annotation import services
from annotation.domain.mqm_tsv import TsvError
from annotation.forms import MqmImportForm


@role_required(PROJECT_MANAGER)
def manage_mqm_import(request: HttpRequest) -> HttpResponse:
    form = MqmImportForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            done, _users = services.mqm_tsv_import_with_accounts(
                text=form.text(),
                name=data["name"],
                source_language=data["source_language"],
                target_language=data["target_language"],
                kind=data["protocol"],
                rater_prefix=data["rater_prefix"],
                created_by=request.user,
            )
        except forms.ValidationError as exc:
            form.add_error("file", exc)
        except TsvError as exc:
            problems = exc.errors
        except (services.ProjectInvalid, PersonInvalid) as exc:
            form.add_error(None, " ".join(str(exc).split()))
        else:
            messages.success(
                request,
                _("Imported %(ratings)d ratings with %(spans)d spans on %(units)d segments.")
                % {"ratings": done.ratings, "spans": done.spans, "units": done.units},
            )
            return redirect("annotation:manage_detail", project_id=done.project.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "annotation/mqm_import.html", {"form": form, "problems": problems}, status=status)
