"""Dataset browser for project managers and researchers (annotators never see model names)."""

from itertools import zip_longest

from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from accounts.permissions import role_required
from accounts.roles import DATA_ROLES
from datasets_app import selectors
from datasets_app.models import Dataset

PAGE_SIZE = 25


@role_required(*DATA_ROLES)
def dataset_list(request):
    return render(request, "datasets/list.html", {"datasets": selectors.dataset_list()})


@role_required(*DATA_ROLES)
def dataset_detail(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    category = request.GET.get("category", "")
    language = request.GET.get("language", "")
    search = request.GET.get("q", "").strip()
    prompts = selectors.prompt_list(dataset=dataset, category=category, language=language, search=search)
    page = Paginator(prompts, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "dataset": dataset,
        "page": page,
        "facets": selectors.dataset_facets(dataset=dataset),
        "filters": {"category": category, "language": language, "q": search},
    }
    template = "datasets/detail.html#prompt-table" if request.htmx else "datasets/detail.html"
    return render(request, template, context)


@role_required(*DATA_ROLES)
def prompt_detail(request, dataset_id: int, prompt_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    prompt = get_object_or_404(dataset.prompts.prefetch_related("responses"), pk=prompt_id)
    turns = list(zip_longest(prompt.turns, prompt.references or []))[: len(prompt.turns)]
    return render(request, "datasets/prompt.html", {"dataset": dataset, "prompt": prompt, "turns": turns})
