"""A researcher cancels a judge run on the demo model from its page, and Retry finishes the rest.

The run's worker is a real Celery process; the model is SmolLM2 behind llama.cpp's server, reached through a
small proxy that counts the requests that reach the model server.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from config.celery import app as celery_app
from evaluation.models import JudgeRun, Judgment, ModelEndpoint
from evaluation.services import judge_run_start
from tests.evaluation.services.builders import make_pair_dataset
from tests.integration.conftest import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

N_PAIRS = 16


class CountingProxy:
    """Forwards POSTs to the model server after ``delay_s`` and notes when each one arrived."""

    def __init__(self, upstream: str, delay_s: float) -> None:
        self.upstream = upstream.rstrip("/")
        self.delay_s = delay_s
        self.arrivals: list[float] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=120)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                with proxy._lock:
                    proxy.arrivals.append(time.monotonic())
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(proxy.delay_s)
                upstream = proxy._client.post(
                    proxy.upstream + self.path.removeprefix("/v1"),
                    content=body,
                    headers={"Content-Type": "application/json"},
                )
                self.send_response(upstream.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(upstream.content)))
                self.end_headers()
                self.wfile.write(upstream.content)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def count(self, after: float = float("-inf")) -> int:
        with self._lock:
            return sum(at > after for at in self.arrivals)

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()


@pytest.fixture
def worker(transactional_db, settings):
    """A Celery worker on the default queue that shares this process's cache (the stop signal) in Redis."""
    settings.CACHES = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": settings.REDIS_URL}}
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as connection:
        connection.default_channel.queue_purge("default")
    process = WorkerProcess(queues="default", extra_env={"TIMBANG_TEST_SHARED_CACHE": "1"})
    process.wait_ready()
    yield process
    process.stop()
    celery_app.conf.task_always_eager = eager


def test_cancel_stops_the_requests_within_seconds_and_retry_judges_the_rest(
    page, login, worker, llamacpp_server, llamacpp_model_id
):
    login(page, "researcher")
    with CountingProxy(llamacpp_server, delay_s=0.4) as proxy:
        endpoint = ModelEndpoint.objects.create(
            slug="demo-judge",
            base_url=proxy.base_url,
            model_id=llamacpp_model_id,
            max_concurrency=1,
            backend_options={"structured_output": "json_object", "max_attempts": 1, "timeout_s": 120},
        )
        run = judge_run_start(
            judge_kind="pairwise",
            endpoint=endpoint,
            dataset=make_pair_dataset(n_prompts=N_PAIRS),
            order_mode="single_random",
            options={"chunk_size": N_PAIRS, "max_tokens": 24},  # one chunk: it is running when cancelled
        )
        page.goto(f"/evaluation/runs/judge/{run.pk}/")
        wait_for(lambda: proxy.count() >= 3, timeout=120, message="three requests at the model server")

        page.get_by_role("button", name="Cancel run").click()
        cancelled_at = time.monotonic()
        page.locator("#run-progress", has_text="Cancelled").wait_for()
        time.sleep(12)

        # A request already on its way when the cancel landed may still arrive; nothing after that.
        assert proxy.count(after=cancelled_at + 3) == 0
        sent_before_retry = proxy.count()
        assert sent_before_retry < N_PAIRS
        run.refresh_from_db()
        assert run.status == "cancelled"
        done = Judgment.objects.filter(judge_run=run).count()
        assert run.n_done == done and run.n_failed == 0
        page.reload()
        counts = page.get_by_test_id("run-counts").inner_text()
        assert f"{done} / {N_PAIRS}" in counts and f"{N_PAIRS - done} not sent (cancelled)" in counts

        page.get_by_test_id("run-retry").click()
        page.get_by_text(f"{N_PAIRS - done} items without a result were queued again.").wait_for()
        finished = wait_for(
            lambda: JudgeRun.objects.filter(pk=run.pk, status="succeeded").first(),
            timeout=180,
            message="the retried run to finish",
        )
        assert (finished.n_done, finished.n_failed, finished.n_total) == (N_PAIRS, 0, N_PAIRS)
        # Each pair judged once in all: the retry sent only what the cancel had left.
        assert Judgment.objects.filter(judge_run=run).count() == N_PAIRS
        assert proxy.count() == N_PAIRS
        page.locator("#run-progress", has_text=f"{N_PAIRS} / {N_PAIRS}").wait_for(timeout=15_000)
