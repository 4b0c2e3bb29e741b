"""CSV downloads of report tables, for the dashboard pages and the API alike."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse

from datasets_app.domain.csv_cells import SafeDictWriter


def csv_response(rows: list[dict[str, Any]], filename: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    columns = list(dict.fromkeys(key for row in rows for key in row))
    writer = SafeDictWriter(response, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return response
