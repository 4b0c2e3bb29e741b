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
    "webhooks/domain",
    "demo/domain",
    "arena/domain",
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


APPS = [
    "config",
    "accounts",
    "datasets_app",
    "annotation",
    "evaluation",
    "analytics",
    "exports",
    "webhooks",
    "demo",
]


@pytest.fixture(scope="module")
def import_graph():
    """Every import of the project's packages, those inside functions included (grimp, import-linter's)."""
    import grimp

    return grimp.build_graph(*APPS)


def test_tasks_modules_are_imported_by_celerys_autodiscovery_alone(import_graph):
    """Tasks call services; services queue tasks by name (``datasets_app.jobs.task_named``)."""
    importers = {
        module: sorted(import_graph.find_modules_that_directly_import(module))
        for module in import_graph.modules
        if module.rsplit(".", 1)[-1] == "tasks"
    }
    assert importers and all(not found for found in importers.values()), importers


def _cycles(modules: set[str], imports) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(imports(root) & modules)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports(child) & modules))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.mark.parametrize("app", APPS)
def test_no_import_circles_between_the_modules_of_an_app(import_graph, app):
    modules = {m for m in import_graph.modules if m == app or m.startswith(f"{app}.")}
    assert _cycles(modules, import_graph.find_modules_directly_imported_by) == []


def test_the_cycle_finder_finds_a_circle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(set(edges), lambda m: edges[m]) == [["a", "b", "c"]]
