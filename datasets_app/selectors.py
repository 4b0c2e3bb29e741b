"""Reads of datasets_app."""

from django.db.models import Count, QuerySet

from datasets_app.models import Dataset, Prompt


def dataset_list() -> QuerySet[Dataset]:
    return (
        Dataset.objects.select_related("created_by")
        .annotate(
            n_prompts=Count("prompts", distinct=True),
            n_units=Count("translation_units", distinct=True),
            n_questions=Count("questions", distinct=True),
        )
        .order_by("-created_at", "-id")
    )


def prompt_list(
    *, dataset: Dataset, category: str = "", language: str = "", search: str = ""
) -> QuerySet[Prompt]:
    qs = dataset.prompts.annotate(n_responses=Count("responses")).order_by("id")
    if category:
        qs = qs.filter(category=category)
    if language:
        qs = qs.filter(language=language)
    if search:
        qs = qs.filter(external_id__icontains=search)
    return qs


def dataset_facets(*, dataset: Dataset) -> dict[str, list[tuple[str, int]]]:
    """Categories and languages present, with counts, for the filter controls."""
    prompts = dataset.prompts.order_by()
    return {
        "categories": list(prompts.values_list("category").annotate(n=Count("id")).order_by("category")),
        "languages": list(prompts.values_list("language").annotate(n=Count("id")).order_by("language")),
    }


def prompt_detail(*, dataset: Dataset, prompt_id: int) -> Prompt:
    return dataset.prompts.prefetch_related("responses").get(pk=prompt_id)
