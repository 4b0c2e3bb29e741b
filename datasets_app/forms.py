"""Forms of the import pages: the upload, the Hub dataset, and the column mapping built from a preview."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from datasets_app.domain.column_mapping import (
    CONSTANT_FIELDS,
    MAX_RESPONSES,
    PROMPT_FIELDS,
    ROW_NUMBER,
    ColumnMapping,
)

RESPONSE_ROWS = 5


class UploadForm(forms.Form):
    file = forms.FileField(
        label=_("File"), help_text=_("JSONL or CSV, or a .zip of a Hugging Face dataset folder.")
    )
    name = forms.CharField(label=_("Dataset name"), max_length=200)
    replace = forms.BooleanField(label=_("Replace a dataset of the same name"), required=False)


class HubImportForm(forms.Form):
    dataset = forms.CharField(label=_("Hub dataset id"), max_length=300, help_text=_("owner/name"))
    config = forms.CharField(label=_("Config"), max_length=200, required=False)
    split = forms.CharField(label=_("Split"), max_length=200, required=False)
    revision = forms.CharField(label=_("Revision"), max_length=200, required=False)
    name = forms.CharField(label=_("Dataset name"), max_length=200)
    mapping_name = forms.ChoiceField(label=_("Column mapping"), required=False)
    replace = forms.BooleanField(label=_("Replace a dataset of the same name"), required=False)

    def __init__(self, *args, mapping_names: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["mapping_name"].choices = [("", _("None: the columns are ours"))] + [
            (n, n) for n in mapping_names
        ]


def mapping_form_rows(mapping: ColumnMapping, columns: list[str]) -> dict[str, Any]:
    """What the mapping form shows, prefilled from ``mapping``."""
    responses = list(mapping.responses) + [None] * (
        min(RESPONSE_ROWS, MAX_RESPONSES) - len(mapping.responses)
    )
    return {
        "fields": [
            {
                "name": name,
                "column": mapping.columns.get(name, ""),
                "constant": mapping.constants.get(name, ""),
                "takes_constant": name in CONSTANT_FIELDS,
                "takes_row_number": name == "id",
            }
            for name in PROMPT_FIELDS
        ],
        "responses": [
            {
                "index": i,
                "text": r.text if r else "",
                "model_column": r.model_column if r else "",
                "model_name": r.model_name if r else "",
            }
            for i, r in enumerate(responses)
        ],
        "columns": columns,
        "row_number": ROW_NUMBER,
    }


def mapping_data_from_post(post) -> dict[str, Any]:
    """The mapping as plain data from the form's fields (checked by ``mapping_from_dict``)."""
    columns = {name: post.get(f"col-{name}", "").strip() for name in PROMPT_FIELDS}
    constants = {name: post.get(f"const-{name}", "").strip() for name in CONSTANT_FIELDS}
    responses = []
    for i in range(RESPONSE_ROWS):
        text = post.get(f"resp-{i}-text", "").strip()
        if not text:
            continue
        responses.append(
            {
                "text": text,
                "model_column": post.get(f"resp-{i}-model_column", "").strip(),
                "model_name": post.get(f"resp-{i}-model_name", "").strip(),
            }
        )
    return {
        "columns": {k: v for k, v in columns.items() if v},
        "constants": {k: v for k, v in constants.items() if v and not columns.get(k)},
        "responses": responses,
        "keep_other_columns": post.get("keep_other_columns") == "on",
    }
