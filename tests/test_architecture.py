"""Architecture rules that CI keeps green (import-linter runs the same contracts in .ci/run)."""

import ast

import pytest

from tests.conftest import REPO_ROOT

FORBIDDEN = ("django", "rest_framework", "celery")
PURE_PACKAGES = [
    "accounts/domain",
    "datasets_app/domain",
    "annotation/domain",
    "evaluation/domain",
    "evaluation/inference",
    "analytics/domain",
    "exports/domain",
    "demo/domain",
]


def imported_roots(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module.split(".")[0]


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_pure_packages_import_no_framework(package):
    offenders = []
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        for lineno, root in imported_roots(path):
            if root in FORBIDDEN:
                offenders.append(f"{path.relative_to(REPO_ROOT)}:{lineno} imports {root}")
    assert offenders == []


def test_migrations_have_descriptive_names():
    autos = [p.name for p in REPO_ROOT.glob("*/migrations/*.py") if "_auto_" in p.name]
    assert autos == []
