"""Every HTML page carries an enforced Content-Security-Policy that allows no inline script.

What Chromium makes of the policy on the same pages is tested in tests/browser/test_content_security_policy.py;
here, fast and without a browser: the header on every page of the permission matrix, on the error pages and
on the 503 page, and no inline script, event handler or style attribute in our templates.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import OperationalError, connection
from django.test import Client, override_settings

from tests.security.pages import client_for, is_html, matrix_pages

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
REQUIRED = {
    "default-src": {"'self'"},
    "object-src": {"'none'"},
    "base-uri": {"'self'"},
    "frame-ancestors": {"'none'"},
    "form-action": {"'self'"},
}
NEVER_FOR_SCRIPTS = {
    "'unsafe-inline'",
    "'unsafe-eval'",
    "'unsafe-hashes'",
    "*",
    "data:",
    "blob:",
    "http:",
    "https:",
}


def directives(response) -> dict[str, list[str]]:
    """The enforced policy as {directive: sources}; fails when the header is missing."""
    assert "Content-Security-Policy" in response, "no Content-Security-Policy header"
    assert "Content-Security-Policy-Report-Only" not in response
    parsed = {}
    for part in response["Content-Security-Policy"].split(";"):
        name, *sources = part.split()
        assert name not in parsed, f"{name} twice"
        parsed[name] = sources
    return parsed


def assert_strict(response, where: str) -> dict[str, list[str]]:
    policy = directives(response)
    for name, sources in REQUIRED.items():
        assert set(policy.get(name, [])) == sources, (where, name, policy.get(name))
    scripts = set(policy.get("script-src", policy["default-src"]))
    assert not scripts & NEVER_FOR_SCRIPTS, (where, scripts)
    assert "script-src-attr" not in policy and "script-src-elem" not in policy, where
    return policy


def test_every_html_page_of_the_permission_matrix_carries_the_policy(world):
    clients = {}
    checked = set()
    for page in matrix_pages(world):
        client = clients.setdefault(page.role, client_for(world, page.role))
        response = client.get(page.url)
        assert response.status_code < 400, (page, response.status_code)
        if not is_html(response):
            continue
        policy = assert_strict(response, f"{page.name} as {page.role}")
        if page.name not in ("api-docs", "api-redoc"):
            # Our own pages: no inline style either, only the nonce of the 503 page could be added.
            assert policy["style-src"] == ["'self'"], (page, policy["style-src"])
        checked.add((page.role, page.name))
    names = {name for _, name in checked}
    # The pages this part is about are among them; more than a few roles were looked at.
    assert {"annotation:task", "analytics:project", "home", "login", "api-docs", "api-redoc"} <= names
    assert {role for role, _ in checked} == {
        "anonymous",
        "annotator",
        "annotator_peer",
        "annotator_outsider",
        "reviewer",
        "project_manager",
        "researcher",
        "admin",
    }
    assert len(checked) > 60


def test_error_pages_carry_the_policy(world):
    annotator = client_for(world, "annotator")
    missing = annotator.get("/no/such/page/")
    forbidden = annotator.get("/datasets/")
    assert (missing.status_code, forbidden.status_code) == (404, 403)
    for response in (missing, forbidden):
        assert is_html(response)
        assert_strict(response, str(response.status_code))


def test_api_answers_carry_the_policy_too(world):
    response = Client().get("/api/schema/")
    assert response.status_code == 200
    assert_strict(response, "schema")


def test_the_503_page_allows_exactly_its_own_inline_style(world):
    client = client_for(world, "annotator")

    def refuse(execute, sql, params, many, context):
        raise OperationalError("terminating connection due to administrator command")

    with connection.execute_wrapper(refuse):
        response = client.get("/")

    assert response.status_code == 503
    policy = assert_strict(response, "503")
    nonces = [s for s in policy["style-src"] if s.startswith("'nonce-")]
    assert len(nonces) == 1 and set(policy["style-src"]) == {"'self'", nonces[0]}
    nonce = nonces[0][len("'nonce-") : -1]
    text = response.content.decode()
    assert f'<style nonce="{nonce}">' in text
    assert text.count("<style") == 1
    # A fresh nonce each time.
    with connection.execute_wrapper(refuse):
        again = client.get("/")
    assert directives(again)["style-src"] != policy["style-src"]


# What the policy refuses, written into a template: a <script> with a body (a <script type="application/json">
# data block is not run and is allowed), an on...= event handler attribute, a style= attribute, a <style>
# element without the nonce, a javascript: address.
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)
STYLE_ATTRIBUTE = re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I)
STYLE_ELEMENT = re.compile(r"<style(?![^>]*nonce=)[^>]*>", re.I)
JAVASCRIPT_URL = re.compile(r"""(href|src|action|formaction)\s*=\s*["']?\s*javascript:""", re.I)


COMMENT = re.compile(r"\{#.*?#\}|\{% comment %\}.*?\{% endcomment %\}", re.S)


def offences(text: str) -> list[str]:
    text = COMMENT.sub("", text)
    found = []
    for label, pattern in [
        ("inline script", INLINE_SCRIPT),
        ("event handler attribute", HANDLER),
        ("style attribute", STYLE_ATTRIBUTE),
        ("<style> without nonce", STYLE_ELEMENT),
        ("javascript: address", JAVASCRIPT_URL),
    ]:
        found += [f"{label}: {m.group(0)[:80]}" for m in pattern.finditer(text)]
    return found


def test_the_template_check_finds_what_the_policy_refuses():
    assert offences('<p><script>alert(1)</script><button onclick="x()">') == [
        "inline script: <script>",
        "event handler attribute: <button onclick=",
    ]
    assert offences('<td class="n" style="color: red">') == ['style attribute: <td class="n" style=']
    assert offences("<style>p {}</style>") == ["<style> without nonce: <style>"]
    assert offences('<a href="javascript:void(0)">') == ['javascript: address: href="javascript:']
    assert (
        offences('<script src="/static/x.js" defer></script><script type="application/json">{}</script>')
        == []
    )
    assert offences('<style nonce="{{ csp_nonce }}">p {}</style><select data-autosubmit>') == []
    assert offences("{# no <style> here #}{% comment %}nor <script> here{% endcomment %}") == []


def test_no_template_carries_inline_script_handlers_or_styles():
    found = {}
    for path in sorted(TEMPLATES.rglob("*.html")):
        problems = offences(path.read_text())
        if problems:
            found[str(path.relative_to(TEMPLATES))] = problems
    assert found == {}


def test_the_policy_follows_the_settings(client):
    """The header is built once per process from the settings, and again when they change."""
    assert "frame-ancestors 'none'" in client.get("/accounts/login/")["Content-Security-Policy"]
    changed = {"DIRECTIVES": {"default-src": ["'self'"], "frame-ancestors": ["'self'"]}}
    with override_settings(CONTENT_SECURITY_POLICY=changed, CONTENT_SECURITY_POLICY_REPORT_ONLY=changed):
        response = client.get("/accounts/login/")
        for header in ("Content-Security-Policy", "Content-Security-Policy-Report-Only"):
            assert sorted(response[header].split("; ")) == ["default-src 'self'", "frame-ancestors 'self'"]
    response = client.get("/accounts/login/")
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert "Content-Security-Policy-Report-Only" not in response
