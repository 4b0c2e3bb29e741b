"""PostgreSQL restart during annotation: clients get a clear error, nothing half-written.

A private PostgreSQL cluster (never the shared one) serves a real gunicorn server with the production
settings. Annotators drive the API over HTTP (next task, submit) while the cluster is restarted, and
then while it is stopped. Requests that meet the outage get ``503`` with a message that says the
database is unavailable and that retrying is safe; once the database is back the same clients carry
on without any intervention, a retried submit is stored exactly once, and the database holds no
half-written submission: every submitted assignment has its full set of ratings, nothing else has any,
and the places counted on each task match the assignments.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO_ROOT
from tests.integration.conftest import wait_for
from tests.integration.private_servers import (
    PrivatePostgres,
    PrivateRedis,
    free_port,
    postgres_bindir,
    system_user_exists,
)

pytestmark = pytest.mark.integration

N_ANNOTATORS = 4
N_TASKS = 40
# What bench/annotation_loop.py answers: 5 responses x 2 criteria rated, and a best pick.
ROWS_PER_SUBMISSION = 5 * 2 + 1

INVARIANTS = r"""
import json
from collections import Counter
from django.db.models import Count
from annotation.models import Annotation, Assignment, TaskSlot

project = int(PROJECT)
assignments = Assignment.objects.filter(project_id=project)
rows = Counter(
    dict(
        Annotation.objects.filter(assignment__project_id=project)
        .values_list("assignment_id")
        .annotate(n=Count("id"))
        .values_list("assignment_id", "n")
    )
)
status = dict(assignments.values_list("id", "status"))
active = Counter(assignments.filter(status="assigned").values_list("slot_id", flat=True))
submitted = Counter(assignments.filter(status="submitted").values_list("slot_id", flat=True))
slots = [
    {"slot": s.pk, "capacity": s.capacity, "open": s.open_count, "active": s.active_count,
     "submitted": s.submitted_count, "held": active[s.pk], "done": submitted[s.pk]}
    for s in TaskSlot.objects.filter(project_id=project)
]
print(json.dumps({
    "submitted": {a.token: rows[a.pk] for a in assignments if a.status == "submitted"},
    "rows_elsewhere": {status[pk]: n for pk, n in rows.items() if status[pk] != "submitted"},
    "slots": slots,
}))
"""


class Server:
    """gunicorn with the production settings over the private database."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log, "w+")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "2",
                "--timeout",
                "60",
                "--graceful-timeout",
                "5",
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        def up() -> bool:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError("gunicorn exited:\n" + self.log.read()[-3000:])
            try:
                return httpx.get(self.url + "/accounts/login/", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(up, timeout=timeout, interval=0.3, message="gunicorn to answer")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


class Site:
    """What a test needs: the server, the cluster, the project and one API token per annotator."""

    def __init__(self, *, pg: PrivatePostgres, server: Server, env: dict[str, str], setup: dict) -> None:
        self.pg = pg
        self.server = server
        self.env = env
        self.project = setup["project"]
        self.tokens = setup["tokens"]

    def client(self, n: int) -> httpx.Client:
        return httpx.Client(
            base_url=self.server.url, headers={"Authorization": f"Token {self.tokens[n]}"}, timeout=30
        )

    def invariants(self) -> dict:
        out = _manage(self.env, "shell", "-c", INVARIANTS.replace("PROJECT", str(self.project)))
        return json.loads(out.strip().splitlines()[-1])


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"manage.py {' '.join(args[:1])} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def site():
    bindir = postgres_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found")
    if os.geteuid() == 0 and not (shutil.which("runuser") and system_user_exists("postgres")):
        pytest.skip("running as root, and PostgreSQL refuses root: needs runuser and a 'postgres' user")
    cleanup = []
    try:
        pg = PrivatePostgres(bindir)
        cleanup.append(pg.close)
        pg.init().start()
        pg.createdb("timbang")
        cache = PrivateRedis().start()
        cleanup.append(cache.close)
        var = Path(tempfile.mkdtemp(prefix="timbang-var-"))
        cleanup.append(lambda: shutil.rmtree(var, ignore_errors=True))
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "SECRET_KEY": "fault-test-secret-key-not-used-anywhere-else-0123456789",
            "DATABASE_URL": pg.url("timbang"),
            "REDIS_URL": cache.url,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "TIMBANG_VAR_DIR": str(var),
            "LOG_LEVEL": "WARNING",
        }
        # Static files (the production storage needs their manifest) are collected while the database migrates.
        collect = subprocess.Popen(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env
        )
        cleanup.append(lambda: collect.poll() is None and collect.kill())
        _manage(env, "migrate", "--noinput", "-v", "0")
        out = subprocess.run(
            [
                sys.executable,
                "bench/annotation_loop.py",
                "setup",
                "--tasks",
                str(N_TASKS),
                "--annotators",
                str(N_ANNOTATORS),
                "--out",
                str(var / "setup.json"),
            ],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr
        assert collect.wait(timeout=120) == 0
        server = Server(env, var / "gunicorn.log")
        cleanup.append(server.stop)
        server.wait_ready()
        yield Site(pg=pg, server=server, env=env, setup=json.loads((var / "setup.json").read_text()))
    finally:
        for step in reversed(cleanup):
            step()


def answer() -> dict:
    ratings = {str(n): {"relevance": 1 + n % 5, "fluency": 1 + (n + 2) % 5} for n in range(1, 6)}
    return {"answer": {"ratings": ratings, "best": 2}}


def assert_unavailable(response: httpx.Response) -> None:
    """The outage answer of the API: 503, JSON, a message saying what happened and what to do."""
    assert response.status_code == 503, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["retry-after"].isdigit()
    body = response.json()
    assert body["code"] == "database_unavailable"
    assert "database is unavailable" in body["detail"] and "try again" in body["detail"]


class Annotator(threading.Thread):
    """Next task + submit in a loop; a 503 is answered by sending the same request again."""

    def __init__(self, site: Site, n: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.site, self.n, self.stop = site, n, stop
        self.stored: dict[str, int] = {}  # task token -> status of the accepted submit (201, or 200)
        self.unavailable: list[httpx.Response] = []
        self.unexpected: list[str] = []
        self.finished = False

    def _send(self, client: httpx.Client, method: str, url: str, **kwargs) -> httpx.Response:
        while True:
            response = client.request(method, url, **kwargs)
            if response.status_code != 503:
                return response
            self.unavailable.append(response)
            time.sleep(0.2)

    def run(self) -> None:
        try:
            with self.site.client(self.n) as client:
                while not self.stop.is_set():
                    got = self._send(client, "GET", f"/api/v1/projects/{self.site.project}/next")
                    if got.status_code == 204:
                        break
                    if got.status_code != 200:
                        self.unexpected.append(f"next {got.status_code}: {got.text[:300]}")
                        break
                    token = got.json()["task"]
                    sent = self._send(client, "POST", f"/api/v1/tasks/{token}/annotations", json=answer())
                    # 200 "unchanged": the first try was committed but its answer never arrived.
                    if sent.status_code not in (200, 201):
                        self.unexpected.append(f"submit {sent.status_code}: {sent.text[:300]}")
                        break
                    self.stored[token] = sent.status_code
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.unexpected.append(repr(exc))
        finally:
            self.finished = True


def check_nothing_half_written(site: Site, accepted: set[str]) -> None:
    state = site.invariants()
    # Exactly the submits the clients saw accepted are stored, each with its full set of rows.
    assert set(state["submitted"]) == accepted
    assert set(state["submitted"].values()) <= {ROWS_PER_SUBMISSION}
    # Held or expired work has no rows at all.
    assert state["rows_elsewhere"] == {}
    for slot in state["slots"]:
        assert slot["open"] + slot["active"] + slot["submitted"] == slot["capacity"], slot
        assert (slot["active"], slot["submitted"]) == (slot["held"], slot["done"]), slot


def test_postgres_restart_and_outage_during_annotation(site):
    # 1. A restart in the middle of traffic: four annotators keep claiming and submitting.
    stop = threading.Event()
    annotators = [Annotator(site, n, stop) for n in range(N_ANNOTATORS)]
    for annotator in annotators:
        annotator.start()

    def submits() -> int:
        problems = [msg for a in annotators for msg in a.unexpected]
        assert problems == [], problems
        return sum(len(a.stored) for a in annotators)

    wait_for(lambda: submits() >= 8, timeout=60, message="the first submits")
    before = submits()
    site.pg.restart()
    wait_for(lambda: submits() >= before + 12, timeout=60, message="submits after the restart")
    stop.set()
    for annotator in annotators:
        annotator.join(timeout=60)
    assert all(a.finished for a in annotators)
    assert [msg for a in annotators for msg in a.unexpected] == []
    for response in (r for a in annotators for r in a.unavailable):
        assert_unavailable(response)
    accepted = {token for a in annotators for token in a.stored}
    check_nothing_half_written(site, accepted)

    # 2. Requests while the database is down, then the same clients once it is back.
    with site.client(0) as first, site.client(1) as second, httpx.Client(base_url=site.server.url) as browser:
        claimed = first.get(f"/api/v1/projects/{site.project}/next")
        assert claimed.status_code == 200
        token = claimed.json()["task"]
        login = browser.get("/accounts/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)

        site.pg.stop()
        assert_unavailable(first.post(f"/api/v1/tasks/{token}/annotations", json=answer()))
        assert_unavailable(second.get(f"/api/v1/projects/{site.project}/next"))
        # The production CSRF cookie is marked Secure, which a client sends over https only: pass it on.
        page = browser.post(
            "/accounts/login/",
            data={"username": "bench-ann-000", "password": "wrong", "csrfmiddlewaretoken": csrf},
            headers={
                "Referer": site.server.url + "/accounts/login/",
                "Cookie": f"csrftoken={login.cookies['csrftoken']}",
            },
        )
        assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
        assert "Retry-After" in page.headers
        assert "database is unavailable" in page.text and "Traceback" not in page.text

        site.pg.start()
        # The same clients, the same connections: the retried submit is stored once, a repeat changes nothing.
        retried = first.post(f"/api/v1/tasks/{token}/annotations", json=answer())
        assert (retried.status_code, retried.json()["outcome"]) == (201, "created")
        again = first.post(f"/api/v1/tasks/{token}/annotations", json=answer())
        assert (again.status_code, again.json()["outcome"]) == (200, "unchanged")
        assert second.get(f"/api/v1/projects/{site.project}/next").status_code == 200

    check_nothing_half_written(site, accepted | {token})
