"""The client's operations against the server's OpenAPI schema: what disagrees, and what the client lacks."""

from __future__ import annotations

import re
from typing import Any

from timbang_client.operations import Operation

METHODS = ("get", "post", "put", "patch", "delete")
CONTENT = {"json": "application/json", "multipart": "multipart/form-data"}


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _placeholders(path: str) -> list[str]:
    return re.findall(r"{(\w+)}", path)


def operation_problems(schema: dict[str, Any], operations: dict[str, Operation]) -> list[str]:
    """One line per disagreement: a path or method the schema does not have, path parameters named
    otherwise, a body field or query parameter the schema does not accept, a body sent as the wrong
    content type, or a required field the client cannot send."""
    problems = []
    for name, op in sorted(operations.items()):
        path_item = schema["paths"].get(op.path)
        if path_item is None:
            problems.append(f"{name}: {op.path} is not in the schema")
            continue
        spec = path_item.get(op.method.lower())
        if spec is None:
            problems.append(f"{name}: the schema has no {op.method} {op.path}")
            continue
        parameters = path_item.get("parameters", []) + spec.get("parameters", [])
        in_path = {p["name"] for p in parameters if p["in"] == "path"}
        if set(_placeholders(op.path)) != in_path:
            problems.append(
                f"{name}: path parameters {sorted(_placeholders(op.path))} vs schema {sorted(in_path)}"
            )
        in_query = {p["name"] for p in parameters if p["in"] == "query"}
        for extra in sorted(op.query - in_query):
            problems.append(f"{name}: query parameter {extra!r} is not in the schema")
        content = spec.get("requestBody", {}).get("content", {})
        if not op.body:
            continue
        media = CONTENT[op.content]
        if media not in content:
            problems.append(f"{name}: sends {media}; the schema takes {sorted(content) or 'no body'}")
            continue
        body = _resolve(schema, content[media]["schema"])
        accepted = set(body.get("properties", {}))
        for extra in sorted(op.body - accepted):
            problems.append(f"{name}: field {extra!r} is not in the schema's {op.method} {op.path} body")
        for required in sorted(set(body.get("required", [])) - op.body):
            problems.append(f"{name}: the schema requires {required!r}, which the client cannot send")
    return problems


def uncovered(schema: dict[str, Any], operations: dict[str, Operation]) -> list[str]:
    """``METHOD path`` of every API operation the client does not call (listed, not a failure)."""
    called = {(op.method, op.path) for op in operations.values()}
    return sorted(
        f"{method.upper()} {path}"
        for path, item in schema["paths"].items()
        if path.startswith("/api/v1/")
        for method in item
        if method in METHODS and (method.upper(), path) not in called
    )
