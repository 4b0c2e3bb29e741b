"""Webhook pages for project managers: the endpoints and a form to add one; an endpoint with its secret,
its controls (rotate the secret, switch off or on, delete) and its delivery log with a redeliver button."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER
from webhooks import selectors, services
from webhooks.forms import WebhookForm
from webhooks.models import WebhookDelivery, WebhookEndpoint


@role_required(PROJECT_MANAGER)
def webhook_list(request: HttpRequest) -> HttpResponse:
    form = WebhookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            hook = services.webhook_create(
                project=data["project"],
                url=data["url"],
                events=data["events"],
                description=data["description"],
                created_by=request.user,
            )
        except services.WebhookInvalid as exc:
            for field, reason in exc.reasons.items():
                form.add_error(field if field in form.fields else None, shown(reason))
        else:
            messages.success(request, _("Webhook added. Give its secret to the receiver."))
            return redirect("webhooks:detail", hook_id=hook.pk)
    hooks = selectors.webhook_list()
    return render(request, "webhooks/list.html", {"form": form, "hooks": hooks})


@role_required(PROJECT_MANAGER)
def webhook_detail(request: HttpRequest, hook_id: int) -> HttpResponse:
    hook = get_object_or_404(selectors.webhook_list(), pk=hook_id)
    page = Paginator(selectors.delivery_log(hook=hook), 25).get_page(request.GET.get("page"))
    template = "webhooks/detail.html#log" if request.htmx else "webhooks/detail.html"
    return render(request, template, {"hook": hook, "page": page})


@require_POST
@role_required(PROJECT_MANAGER)
def webhook_rotate(request: HttpRequest, hook_id: int) -> HttpResponse:
    hook = services.webhook_secret_rotate(hook=get_object_or_404(WebhookEndpoint, pk=hook_id))
    messages.success(
        request,
        _("New secret made. The old one keeps signing beside it until %(until)s.")
        % {"until": hook.previous_secret_until.strftime("%Y-%m-%d %H:%M UTC")},
    )
    return redirect("webhooks:detail", hook_id=hook.pk)


@require_POST
@role_required(PROJECT_MANAGER)
def webhook_active(request: HttpRequest, hook_id: int) -> HttpResponse:
    hook = get_object_or_404(WebhookEndpoint, pk=hook_id)
    services.webhook_update(hook=hook, active=request.POST.get("active") == "1")
    return redirect("webhooks:detail", hook_id=hook.pk)


@require_POST
@role_required(PROJECT_MANAGER)
def webhook_delete(request: HttpRequest, hook_id: int) -> HttpResponse:
    services.webhook_delete(hook=get_object_or_404(WebhookEndpoint, pk=hook_id))
    messages.success(request, _("Webhook deleted."))
    return redirect("webhooks:list")


@require_POST
@role_required(PROJECT_MANAGER)
def delivery_redeliver(request: HttpRequest, delivery_id: int) -> HttpResponse:
    delivery = get_object_or_404(WebhookDelivery.objects.select_related("endpoint"), pk=delivery_id)
    try:
        services.webhook_redeliver(delivery=delivery)
    except services.WebhookInvalid as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Sent again; the new delivery is at the top of the log."))
    return redirect("webhooks:detail", hook_id=delivery.endpoint_id)
