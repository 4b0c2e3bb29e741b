"""A voter battles two model endpoints served by a real llama.cpp server, in headless Chromium: the answers
stream into panes A and B, the vote is cast with the keyboard and lands as a pairwise annotation, and the
names are revealed only then; once in English on a laptop, once in Indonesian on a phone. Every byte the
browser received before the vote (pages, scripts, the event stream) is scanned for the model names."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.core.cache import cache
from django.db import OperationalError, connection

from annotation.models import Annotation
from arena import services
from arena.models import Battle
from evaluation.models import ModelEndpoint
from evaluation.services.endpoints import backend_cache_clear
from tests.arena.builders import make_arena
from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUGS = ("sembunyi-kiri-model", "sembunyi-kanan-model")


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    backend_cache_clear()


class ModelWorker:
    """Each answer task runs on a thread of this process, as a model worker would run it from its queue.

    The test database is SQLite in memory shared by threads, which refuses a write at once while another
    thread reads (no waiting as a file or PostgreSQL would): the work starts once the battle page has loaded
    (``release``), and a database error is retried as Celery's ``autoretry_for`` would."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.released = threading.Event()

    def apply_async(self, args, queue):
        thread = threading.Thread(target=self._work, args=(args[0],), daemon=True)
        self.threads.append(thread)
        thread.start()

    def release(self) -> None:
        self.released.set()

    def _work(self, answer_id: int) -> None:
        self.released.wait(timeout=30)
        try:
            for attempt in range(20):
                try:
                    services.battle_answer_stream(answer_id=answer_id)
                    return
                except OperationalError:
                    time.sleep(0.1 * (attempt + 1))
        finally:
            connection.close()


@pytest.fixture
def model_worker(monkeypatch):
    worker = ModelWorker()
    monkeypatch.setattr(services, "task_named", lambda name: worker)
    yield worker
    worker.release()
    for thread in worker.threads:
        thread.join(timeout=60)


@pytest.fixture
def redis_stream(settings):
    """The relay through Redis pub/sub when a Redis server runs here, else through the stored answers."""
    import redis

    url = "redis://127.0.0.1:6379/3"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
        settings.ARENA_STREAM_REDIS_URL = url
    except redis.RedisError:
        settings.ARENA_STREAM_REDIS_URL = ""
    settings.ARENA_PROGRESS_EVERY_S = 1.0
    return settings.ARENA_STREAM_REDIS_URL


def _arena(llamacpp_server, llamacpp_model_id, voter, name):
    endpoints = [
        ModelEndpoint.objects.get_or_create(
            slug=slug,
            defaults={
                "base_url": llamacpp_server,
                "model_id": llamacpp_model_id,
                "backend_options": {"timeout_s": 60, "max_attempts": 1},
                "sampling_defaults": {"temperature": 0.0, "seed": 5},
            },
        )[0]
        for slug in SLUGS
    ]
    return make_arena(endpoints=endpoints, members=[voter], max_tokens=32, name=name, timeout_s=90)


# Every message the page's EventSource receives, kept in the page for the scan.
RECORD_EVENTS = """
(() => {
  const Original = window.EventSource;
  window.__arenaEvents = [];
  window.EventSource = function (url, options) {
    const source = new Original(url, options);
    window.__arenaEvents.push("url " + url);
    source.addEventListener("message", (m) => window.__arenaEvents.push(m.data));
    return source;
  };
})();
"""


def _battle(
    page, project, worker, *, prompt: str, labels: dict[str, str], shots: str
) -> tuple[Battle, list[str], dict]:
    bodies: list[str] = []
    page.add_init_script(RECORD_EVENTS)

    def keep(request) -> None:
        response = request.response()
        if response is not None:
            try:
                bodies.append(request.url + "\n" + response.body().decode(errors="replace"))
            except Exception:  # noqa: BLE001 - a body the browser did not keep (redirects)
                bodies.append(request.url)

    page.on("requestfinished", keep)
    page.goto(f"/arena/{project.pk}/")
    page.select_option("#id_language", "jav")
    page.select_option("#id_register", "ngoko")
    page.select_option("#id_category", "culture")
    page.fill("#id_text", prompt)
    page.click("[data-testid=battle-start]")
    page.wait_for_selector("[data-testid=battle]")
    page.wait_for_load_state("domcontentloaded")
    assert page.get_by_text(labels["question"]).is_visible()
    assert page.locator("[data-testid=vote-submit]").is_disabled()  # no vote before both answers
    worker.release()
    # Both panes fill as the answers stream, then the vote opens.
    page.wait_for_function(
        "() => ['A', 'B'].every(s => document.querySelector(`.stream-pane[data-pane=${s}]`).textContent.length > 0)",
        timeout=90_000,
    )
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=vote-submit]').disabled", timeout=90_000
    )
    bodies.extend(page.evaluate("window.__arenaEvents"))
    battle = Battle.objects.get(project=project)
    panes = {side: page.locator(f".stream-pane[data-pane={side}]").inner_text() for side in ("A", "B")}
    before_vote = list(bodies)
    shot(page, f"{shots}-answers")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=voted]")
    shot(page, f"{shots}-voted")
    return battle, before_vote, panes


def _check(battle, before_vote, panes, page):
    battle.refresh_from_db()
    assert battle.status == Battle.Status.VOTED and battle.vote == "B"
    vote = Annotation.objects.get(assignment_id=battle.assignment_id, criterion="vote")
    assert vote.choice == "B" and vote.response_id == battle.response_b_id
    # The stored answers are what streamed into the panes.
    assert panes["A"].strip() == battle.answers.get(side="A").text.strip()
    assert panes["B"].strip() == battle.answers.get(side="B").text.strip()
    assert any(b.startswith("url ") and "/stream?turn=0" in b for b in before_vote)
    events = [json.loads(b) for b in before_vote if b.startswith("{")]
    assert events[-1] == {"type": "end", "status": "ready"}
    assert {e["side"] for e in events if e["type"] == "done"} == {"A", "B"}
    received = "\n".join(before_vote)
    for secret in (*SLUGS, "smollm2", battle.prompt.external_id):
        assert secret not in received, f"{secret} reached the browser before the vote"
    # Named once the vote is cast.
    assert page.locator("[data-testid=reveal-a]").inner_text() == battle.endpoint_a.slug
    assert page.locator("[data-testid=reveal-b]").inner_text() == battle.endpoint_b.slug


def test_a_battle_in_english_on_a_laptop(
    page, login, llamacpp_server, llamacpp_model_id, model_worker, redis_stream
):
    voter = login(page, "annotator", username="penutur")
    project = _arena(llamacpp_server, llamacpp_model_id, voter, "Arena Jawa")
    page.goto("/")
    page.click("[data-testid=arena-link]")
    page.wait_for_url(f"**/arena/{project.pk}/")
    battle, before_vote, panes = _battle(
        page,
        project,
        model_worker,
        prompt="Sugeng enjing, piye kabare?",
        labels={"question": "Which answer is better?"},
        shots="arena-battle",
    )
    _check(battle, before_vote, panes, page)


def test_a_battle_in_indonesian_on_a_phone(
    phone_page, login, llamacpp_server, llamacpp_model_id, model_worker, redis_stream
):
    page = phone_page
    voter = login(page, "annotator", username="penutur-hp")
    page.click("[data-testid=lang-id]")
    page.wait_for_load_state("domcontentloaded")
    project = _arena(llamacpp_server, llamacpp_model_id, voter, "Arena Jawa HP")
    battle, before_vote, panes = _battle(
        page,
        project,
        model_worker,
        prompt="Kowe seneng mangan apa?",
        labels={"question": "Jawaban mana yang lebih baik?"},
        shots="arena-battle-phone-id",
    )
    _check(battle, before_vote, panes, page)
    assert page.get_by_role("heading", name="Suara Anda").is_visible()
    # On a phone the panes stack: B sits below A, not beside it.
    a = page.locator("[data-side=A]").bounding_box()
    b = page.locator("[data-side=B]").bounding_box()
    assert b["y"] >= a["y"] + a["height"] - 1
