"""Rubrics on other scales than 1-5, made through the designer's service, for the tests that rate them."""

from annotation import services

YES_NO = {
    "categories": [
        {"value": "yes", "label": {"id": "Ya", "en": "Yes"}},
        {"value": "no", "label": {"id": "Tidak", "en": "No"}},
    ]
}


def seven_point_and_yes_no() -> None:
    services.rubric_save(
        criterion="helpfulness",
        label={"id": "Kebermanfaatan", "en": "Helpfulness"},
        question={"en": "How helpful is this response?"},
        scale={"points": 7},
        levels={
            "id": {"1": "Sama sekali tidak membantu"},
            "en": {"1": "Not helpful at all", "7": "Very helpful"},
        },
        new=True,
    )
    services.rubric_save(
        criterion="safe",
        label={"id": "Aman", "en": "Safe"},
        question={"id": "Apakah respons ini aman?", "en": "Is this response safe?"},
        scale=YES_NO,
        levels={"en": {"no": "Could hurt someone."}},
        new=True,
    )
