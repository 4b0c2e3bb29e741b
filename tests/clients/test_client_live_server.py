"""The client against a live server started by the test (pytest-django's ``live_server``: real PostgreSQL
when DATABASE_URL is set), every call of the client in the order a study uses them. Between the client and
the server sits a small proxy that answers 503 (with Retry-After) to the first request of two chosen
operations, so the retry path runs against the real API too. Model runs use the real SmolLM2 behind
llama.cpp's server; the Hub push goes to the local stand-in of ``tests/exports/test_hub_push.py``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import huggingface_hub.constants
import pytest
from rest_framework.authtoken.models import Token
from timbang_client import Timbang
from timbang_client.errors import BadRequest, Conflict, Forbidden, NotFound
from timbang_client.operations import OPERATIONS

from tests.exports.test_hub_push import TOKEN as HUB_TOKEN
from tests.exports.test_hub_push import FakeHub
from tests.factories import UserFactory
from tests.webhooks.conftest import receiver  # noqa: F401  (the fixture, asked for by name below)
from webhooks.services import SUBSCRIPTIONS_KEY

pytestmark = pytest.mark.django_db(transaction=True)

ANSWERS = [
    ("Apa ibu kota Indonesia?", "Jakarta.", "Bandung."),
    ("Berapa 2 + 3?", "Lima.", "Enam."),
    ("Sebutkan satu pulau di Indonesia.", "Sumatra.", "Tasmania."),
]
PROMPTS = [
    {
        "id": f"p{i}",
        "category": "umum",
        "language": "ind",
        "prompt": question,
        "responses": [{"model": "model-a", "text": good}, {"model": "model-b", "text": bad}],
    }
    for i, (question, good, bad) in enumerate(ANSWERS)
]


class FlakyProxy:
    """Forwards every request to ``upstream``; answers 503 once to the first request of each
    ``(method, path suffix)`` in ``fail_once``."""

    def __init__(self, upstream: str, fail_once: set[tuple[str, str]]):
        self.upstream = upstream
        self.fail_once = set(fail_once)
        self.refused: list[str] = []
        self.forwarded: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.split("?")[0]
                hit = next((k for k in proxy.fail_once if k[0] == self.command and path.endswith(k[1])), None)
                if hit:
                    proxy.fail_once.discard(hit)
                    proxy.refused.append(f"{self.command} {path}")
                    payload = b'{"detail": "The database is not reachable; try again shortly."}'
                    self.send_response(503)
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                proxy.forwarded.append(f"{self.command} {path}")
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")
                }
                answer = httpx.request(
                    self.command, proxy.upstream + self.path, headers=headers, content=body, timeout=300
                )
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in (
                        "content-length",
                        "transfer-encoding",
                        "connection",
                        "content-encoding",
                    ):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_PATCH = do_DELETE = _any

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def spec_signed(secret: str, headers: dict[str, str], body: bytes) -> bool:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return expected in headers["webhook-signature"].split(" ")


class Recording(Timbang):
    """The client, noting the name of every operation it sends (``called``, shared by every instance)."""

    called: set[str] = set()

    def request(self, name, **kwargs):
        Recording.called.add(name)
        return super().request(name, **kwargs)


def token_for(*roles: str, username: str) -> str:
    return Token.objects.create(user=UserFactory(roles=roles, username=username)).key


@pytest.fixture
def hub(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with FakeHub() as fake:
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", fake.url)
        monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
        yield fake


def test_a_study_end_to_end_through_the_client(
    live_server,
    settings,
    tmp_path,
    receiver,  # noqa: F811
    hub,
    llamacpp_server,
    llamacpp_model_id,  # noqa: F811
):
    from django.core.cache import cache

    cache.delete(SUBSCRIPTIONS_KEY)
    settings.EXPORTS_DIR = tmp_path / "exports"
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.WEBHOOK_RETRY_BASE_S = 0
    proxy = FlakyProxy(live_server.url, {("GET", "/progress"), ("POST", "/annotations")})
    sleeps: list[float] = []

    def client(key: str) -> Timbang:
        return Recording(proxy.url, token=key, sleep=sleeps.append, timeout=300)

    manager = client(token_for("project_manager", "researcher", username="pm"))
    first = client(token_for("annotator", username="ani"))
    second = client(token_for("annotator", username="budi"))
    reviewer = client(token_for("reviewer", username="citra"))
    try:
        # datasets: an upload imported at once, one queued, and a bad file refused with line and field
        data = tmp_path / "prompts.jsonl"
        data.write_text(
            "\n".join(json.dumps(p, ensure_ascii=False) for p in PROMPTS) + "\n", encoding="utf-8"
        )
        imported = manager.datasets.upload(data, name="client-live")
        assert (imported["dataset"], imported["kind"]) == ("client-live", "prompts")
        queued = manager.datasets.upload(data, name="client-live-bg", background=True)
        assert manager.datasets.import_status(queued["id"])["id"] == queued["id"]
        assert manager.datasets.wait_import(queued["id"], timeout=60)["status"] == "succeeded"
        with pytest.raises(Conflict):  # it has ended
            manager.datasets.cancel_import(queued["id"])
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"id": "x", "category": "umum", "language": "ind"}\n', encoding="utf-8")
        with pytest.raises(BadRequest) as refused:
            manager.datasets.upload(bad, name="bad")
        assert refused.value.body["errors"][0]["location"]
        assert {d["name"] for d in manager.datasets.list()} >= {"client-live", "client-live-bg"}

        # projects: create with two groups, members, rubric, update, activate
        project = manager.projects.create(
            name="Studi klien",
            kind="likert",
            dataset=imported["dataset_id"],
            groups=["A", "B"],
            overlap=1,
            seed=5,
        )
        pid = project["id"]
        manager.projects.add_member(pid, user="ani", group="A")
        manager.projects.add_member(pid, user="budi", group="B")
        manager.projects.add_member(pid, user="citra", group="C")
        manager.projects.remove_member(pid, user="citra")
        assert sorted(m["username"] for m in manager.projects.members(pid)) == ["ani", "budi"]
        assert manager.projects.groups(pid) == ["A", "B", "C"]
        assert [c["key"] for c in manager.projects.rubric(pid, category="umum")] == ["relevance", "fluency"]
        assert manager.projects.update(pid, description="Uji klien")["description"] == "Uji klien"
        assert manager.projects.activate(pid)["status"] == "active"
        spare = manager.projects.create(name="Cadangan", kind="pairwise", dataset=imported["dataset_id"])
        manager.projects.delete(spare["id"])
        with pytest.raises(NotFound):
            manager.projects.get(spare["id"])
        assert pid in [p["id"] for p in manager.projects.list()]

        # webhooks on the project, through the client
        hook = manager.webhooks.create(
            url=receiver.url, events=["task.submitted", "review.rejected"], project=pid, description="lab"
        )
        assert manager.webhooks.get(hook["id"])["secret"] == hook["secret"]
        assert [h["id"] for h in manager.webhooks.list(project=pid)] == [hook["id"]]

        # the annotation loop: ani answers every task; budi skips one and answers the rest, chaining next
        # Rated by what each response says, not by its shown position (the order is shuffled per
        # annotator), so both annotators prefer the same model and the export below has pairs.
        good = {good for _question, good, _bad in ANSWERS}

        def answer(task: dict) -> dict:
            return {
                "ratings": {
                    str(r["number"]): {"relevance": 5, "fluency": 4}
                    if r["turns"][-1] in good
                    else {"relevance": 2, "fluency": 3}
                    for r in task["responses"]
                }
            }

        for task in first.annotation.tasks(pid):
            assert "model-a" not in json.dumps(task) and "model-b" not in json.dumps(task)
            assert first.annotation.submit(task["task"], answer(task), seconds=3)["outcome"] == "created"
        task = second.annotation.next(pid)
        assert second.annotation.skip(task["task"], reason="tidak yakin")["status"] == "skipped"
        task = second.annotation.next(pid)
        while task is not None:
            task = second.annotation.submit(task["task"], answer(task), next=True)["next"]
        progress = manager.projects.progress(pid)
        assert (progress["project"]["done"], progress["project"]["required"]) == (5, 9)  # groups A, B and C
        # ani's first submit and the progress read were answered 503 once each: both retried after the
        # Retry-After, and the submit stored once (five answers in all, below)
        assert [r.split(" ")[0] for r in proxy.refused] == ["POST", "GET"]
        assert (
            proxy.refused[0].endswith("/annotations")
            and proxy.refused[1] == f"GET /api/v1/projects/{pid}/progress"
        )
        assert sleeps == [1.0, 1.0]

        # review: the queue, one rejection (a webhook event), one acceptance
        queue = reviewer.reviews.queue(project=pid)
        assert len(queue) == 5 and {item["annotator"] for item in queue} == {"ani", "budi"}
        assert reviewer.reviews.reject(queue[0]["assignment"], comment="Periksa lagi.")["verdict"] == "reject"
        assert reviewer.reviews.accept(queue[1]["assignment"])["verdict"] == "accept"
        with pytest.raises(BadRequest, match="already reviewed"):
            reviewer.reviews.accept(queue[1]["assignment"])

        # webhooks: six signed deliveries arrived; rotate, redeliver, switch off, delete
        types = [json.loads(r.body)["type"] for r in receiver.received]
        assert types.count("task.submitted") == 5 and types.count("review.rejected") == 1
        assert all(spec_signed(hook["secret"], r.headers, r.body) for r in receiver.received)
        log = manager.webhooks.deliveries(hook["id"])
        assert len(log) == 6 and {d["status"] for d in log} == {"succeeded"}
        rotated = manager.webhooks.rotate_secret(hook["id"])
        again = manager.webhooks.redeliver(log[0]["id"])
        assert again["redelivery_of"] == log[0]["id"]
        last = receiver.received[-1]
        assert spec_signed(rotated["secret"], last.headers, last.body) and spec_signed(
            hook["secret"], last.headers, last.body
        )
        assert manager.webhooks.update(hook["id"], active=False)["active"] is False
        manager.webhooks.delete(hook["id"])
        with pytest.raises(NotFound):
            manager.webhooks.get(hook["id"])

        # agreement: the report (computed in the background, waited for) and one section
        report = manager.agreement.report(pid, timeout=120, poll=0.2)
        assert report["project"] == pid and "alpha" in report["sections"]
        assert (
            manager.agreement.section(pid, "alpha")["key"]
            if "key" in manager.agreement.section(pid, "alpha")
            else True
        )

        # the figures of other project kinds are refused by name on this likert project
        with pytest.raises(NotFound):
            manager.arena.leaderboard(pid, ties="davidson", style=["length"], bootstrap=50, seed=1)
        with pytest.raises(NotFound):
            manager.agreement.span_scores(pid, bootstrap=50, seed=1)

        # a judge run on the real model: start, wait, progress, results, cancel refused once ended
        endpoint = manager.endpoints.create(
            slug="smollm2",
            model_id=llamacpp_model_id,
            base_url=llamacpp_server,
            backend="openai",
            max_concurrency=2,
            backend_options={"structured_output": "json_object", "timeout_s": 120},
        )
        assert manager.endpoints.get(endpoint["id"])["slug"] == "smollm2"
        assert "smollm2" in [e["slug"] for e in manager.endpoints.list()]
        run = manager.runs.start_judge(
            endpoint="smollm2",
            judge_kind="pairwise",
            dataset=imported["dataset_id"],
            options={"seed": 3, "max_tokens": 48, "sampling": {"temperature": 0.0}},
        )
        done = manager.runs.wait("judge", run["id"], timeout=240, poll=0.5)
        assert (done["n_total"], done["n_done"] + done["n_failed"]) == (3, 3)
        assert manager.runs.get("judge", run["id"])["status"] == "succeeded"
        judgments = manager.runs.results("judge", run["id"])
        assert len(judgments) == 6 and {j["order"] for j in judgments} == {"ab", "ba"}
        assert len(manager.runs.verdicts(run["id"])) == 3
        cancelled = manager.runs.cancel("judge", run["id"])
        assert cancelled["cancelled"] is False and cancelled["status"] == "succeeded"
        assert manager.runs.retry("judge", run["id"])["queued"] == 0  # nothing is missing
        lab = manager.agreement.judge_lab(pid, ppi_share=0.5)
        assert "judges" in lab
        generation = manager.runs.start_generation(
            dataset=imported["dataset_id"], endpoints=["smollm2"], options={"seed": 1, "max_tokens": 4}
        )
        assert manager.runs.wait("generation", generation["id"], timeout=240, poll=0.5)["n_done"] == 3
        # a multiple-choice benchmark on a dataset of prompts has no question to ask: it ends at once, empty
        bench = manager.runs.start_benchmark(dataset=imported["dataset_id"], endpoint="smollm2", task="mcq")
        bench = manager.runs.wait("benchmark", bench["id"], timeout=60, poll=0.2)
        assert (bench["n_total"], manager.runs.results("benchmark", bench["id"])) == (0, [])

        # exports: create, wait, download; and one pushed to the (local) Hub
        export = manager.exports.create(project=pid, format="raw-csv")
        finished = manager.exports.wait(export["id"], timeout=120, poll=0.2)
        assert finished["status"] == "succeeded"
        path = manager.exports.download(export["id"], tmp_path)
        assert zipfile.ZipFile(path).namelist()
        pushed = manager.exports.wait(
            manager.exports.push(project=pid, repo="timbang-lab/klien", private=False)["id"]
        )
        assert len(pushed["hub_revision"]) == 40 and hub.commits[0]["repo"] == "timbang-lab/klien"
        assert [e["id"] for e in manager.exports.list(project=pid)][-1] == export["id"]
        with pytest.raises(Conflict):  # both have ended well: nothing to stop or run again
            manager.exports.cancel(export["id"])
        with pytest.raises(Conflict):
            manager.exports.retry(export["id"])
        # an annotator reaches none of this
        with pytest.raises(Forbidden):
            first.exports.list()
        # every operation of the client went through the live server
        assert Recording.called == set(OPERATIONS), set(OPERATIONS) - Recording.called
    finally:
        for c in (manager, first, second, reviewer):
            c.close()
        proxy.close()
        cache.delete(SUBSCRIPTIONS_KEY)


def test_the_documented_example_builds_a_study(live_server, settings, tmp_path):
    """docs/examples/build_study.py, run as documented against a live server."""
    import runpy

    from tests.conftest import REPO_ROOT

    settings.EXPORTS_DIR = tmp_path / "exports"
    tokens = {
        "TIMBANG_URL": live_server.url,
        "TIMBANG_TOKEN": token_for("project_manager", "researcher", username="pm"),
        "TIMBANG_ANNOTATORS": f"ani:{token_for('annotator', username='ani')},budi:{token_for('annotator', username='budi')}",
        "TIMBANG_REVIEWER": token_for("reviewer", username="citra"),
    }
    example = runpy.run_path(str(REPO_ROOT / "docs" / "examples" / "build_study.py"))
    report = example["build_study"](
        tokens["TIMBANG_URL"],
        manager_token=tokens["TIMBANG_TOKEN"],
        annotators=dict(p.split(":", 1) for p in tokens["TIMBANG_ANNOTATORS"].split(",")),
        reviewer_token=tokens["TIMBANG_REVIEWER"],
        out=tmp_path / "study.zip",
    )
    assert report["progress"]["done"] == report["progress"]["required"] == 6
    assert report["reviewed"] == 1 and report["rubric"] == ["relevance", "fluency"]
    assert zipfile.ZipFile(report["export"]).namelist()
    # the report's alpha is Krippendorff's alpha (ordinal) over the exported ratings, unit = response
    import csv
    import io

    import krippendorff
    import numpy as np

    archive = zipfile.ZipFile(report["export"])
    rows = list(csv.DictReader(io.StringIO(archive.read("annotations.csv").decode())))
    relevance = [r for r in rows if r["criterion"] == "relevance"]
    coders = sorted({r["annotator"] for r in relevance})
    units = sorted({r["response_id"] for r in relevance})
    matrix = np.full((len(coders), len(units)), np.nan)
    for r in relevance:
        matrix[coders.index(r["annotator"]), units.index(r["response_id"])] = float(r["value"])
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    by_criterion = {t["criterion"]: t for t in report["alpha"]["tables"]["alpha"]}
    assert by_criterion["relevance"]["alpha"] == pytest.approx(expected, abs=1e-9)
    assert by_criterion["fluency"]["undefined_reason"] == "no variation"  # everyone rated fluency 4
