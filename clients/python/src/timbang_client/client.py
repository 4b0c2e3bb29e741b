"""The Timbang API client: one ``Timbang`` object with a namespace per part of the API.

Retries: an answer of 429 or 503 is asked again (every method: the API answers 503 before it writes
anything, and 429 refuses the request whole), after the server's ``Retry-After`` when it sends one, else
after an exponential pause (``backoff_base * 2**n``, capped, with jitter); a connection that could not be
opened is tried again the same way. Other errors raise an :class:`~timbang_client.errors.ApiError` subclass
carrying the status code and the API's error body.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, cast

import httpx

from timbang_client.errors import BY_STATUS, ApiError, JobFailed, RetriesExhausted, WaitTimeout
from timbang_client.operations import OPERATIONS

# Bound here, where ``list`` is still the builtin (the parts below have ``list`` methods).
Json = dict[str, Any]
JsonList = list[Json]

RETRY_STATUSES = frozenset({429, 503})
JOB_ENDED = frozenset({"succeeded", "failed", "cancelled"})


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (None when absent or unreadable)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Timbang:
    """``Timbang("https://host", token="...")``; use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
        headers: Mapping[str, str] | None = None,
    ):
        all_headers = {"Accept": "application/json", "User-Agent": "timbang-client/0.1"}
        if token:
            all_headers["Authorization"] = f"Token {token}"
        all_headers.update(headers or {})
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"), headers=all_headers, timeout=timeout, transport=transport
        )
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._sleep = sleep
        self._jitter = jitter
        self.datasets = Datasets(self)
        self.projects = Projects(self)
        self.annotation = Annotation(self)
        self.reviews = Reviews(self)
        self.endpoints = Endpoints(self)
        self.runs = Runs(self)
        self.agreement = Agreement(self)
        self.arena = Arena(self)
        self.exports = Exports(self)
        self.webhooks = Webhooks(self)

    # -- plumbing ----------------------------------------------------------------------------------------

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Timbang:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _pause(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_cap)
        return float(min(self.backoff_cap, self.backoff_base * 2**attempt) * (0.5 + self._jitter() / 2))

    def request(
        self,
        name: str,
        *,
        path: Mapping[str, object] | None = None,
        body: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        files: Mapping[str, Any] | None = None,
        url: str | None = None,
        stream_to: BinaryIO | None = None,
    ) -> httpx.Response:
        """Send operation ``name`` (a key of ``OPERATIONS``) and return the answer, retried as described
        above; raise ``ApiError`` for an error status. Fields and parameters outside the operation's lists
        are refused before anything is sent."""
        op = OPERATIONS[name]
        body = {k: v for k, v in (body or {}).items() if v is not None}
        query = {k: v for k, v in (query or {}).items() if v is not None}
        extra = (set(body) | set(files or {})) - op.body
        if extra:
            raise TypeError(
                f"{name} takes no field(s) {', '.join(sorted(extra))}; it takes {sorted(op.body)}"
            )
        if set(query) - op.query:
            raise TypeError(f"{name} takes no parameter(s) {', '.join(sorted(set(query) - op.query))}")
        target = url or op.url(**(path or {}))
        kwargs: dict[str, Any] = {"params": query or None}
        if op.content == "multipart":
            kwargs["data"] = {k: _form_value(v) for k, v in body.items()}
            kwargs["files"] = files
        elif op.content == "json":
            kwargs["json"] = body
        attempt = 0
        while True:
            try:
                if stream_to is not None:
                    with self.http.stream(op.method, target, **kwargs) as answer:
                        if answer.status_code < 400:
                            for chunk in answer.iter_bytes():
                                stream_to.write(chunk)
                        else:
                            answer.read()
                else:
                    answer = self.http.request(op.method, target, **kwargs)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                if attempt >= self.max_retries:
                    raise
                self._sleep(self._pause(attempt, None))
                attempt += 1
                continue
            if answer.status_code in RETRY_STATUSES:
                if attempt >= self.max_retries:
                    raise RetriesExhausted(
                        status_code=answer.status_code,
                        method=op.method,
                        url=str(answer.url),
                        body=_body(answer),
                    )
                self._sleep(self._pause(attempt, retry_after_seconds(answer.headers.get("retry-after"))))
                attempt += 1
                continue
            if answer.status_code >= 400:
                error = BY_STATUS.get(answer.status_code, ApiError)
                raise error(
                    status_code=answer.status_code, method=op.method, url=str(answer.url), body=_body(answer)
                )
            return answer

    def call(self, name: str, **kwargs: Any) -> Any:
        """:meth:`request`, decoded: the JSON body, or None for an empty answer (204)."""
        answer = self.request(name, **kwargs)
        if answer.status_code == 204 or not answer.content:
            return None
        return answer.json()

    def paginate(
        self, name: str, *, path: Mapping[str, object] | None = None, **query: Any
    ) -> Iterator[Json]:
        """Every item of a paged list operation, following the ``next`` links page by page."""
        page = self.call(name, path=path, query=query)
        while True:
            if isinstance(page, list):  # an unpaged list
                yield from page
                return
            yield from page["results"]
            if not page.get("next"):
                return
            page = self.call(name, path=path, url=page["next"])

    def wait_job(
        self,
        name: str,
        *,
        path: Mapping[str, object],
        timeout: float,
        poll: float,
        noun: str,
    ) -> Json:
        deadline = time.monotonic() + timeout
        while True:
            job: Json = self.call(name, path=path)
            if job["status"] in JOB_ENDED:
                if job["status"] != "succeeded":
                    raise JobFailed(f"{noun} {job.get('id')} {job['status']}: {job.get('error', '')}", job)
                return job
            if time.monotonic() >= deadline:
                raise WaitTimeout(f"{noun} {job.get('id')} still {job['status']} after {timeout:g} s", job)
            self._sleep(poll)


def _form_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def _body(answer: httpx.Response) -> Any:
    try:
        return answer.json()
    except ValueError:
        return answer.text


class _Part:
    def __init__(self, client: Timbang):
        self._c = client

    def _obj(self, name: str, **kwargs: Any) -> Json:
        """An operation whose answer is one JSON object."""
        return cast(Json, self._c.call(name, **kwargs))


class Datasets(_Part):
    def list(self) -> JsonList:
        return list(self._c.paginate("datasets.list"))

    def upload(
        self,
        file: str | Path | BinaryIO,
        *,
        name: str,
        format: str | None = None,
        kind: str | None = None,
        replace: bool | None = None,
        background: bool | None = None,
        description: str | None = None,
        license: str | None = None,
        mapping: Json | None = None,
        mapping_name: str | None = None,
    ) -> Json:
        """Import a file (JSONL, CSV, a zipped Hugging Face folder). Small files are imported at once (the
        answer has the dataset and its counts); large ones, or ``background=True``, are queued: the answer
        is the import job, to follow with :meth:`import_status` or :meth:`wait_import`."""
        fields = {
            "name": name,
            "format": format,
            "kind": kind,
            "replace": replace,
            "background": background,
            "description": description,
            "license": license,
            "mapping": mapping,
            "mapping_name": mapping_name,
        }
        if isinstance(file, str | Path):
            with open(file, "rb") as handle:
                return self._obj("datasets.upload", body=fields, files={"file": (Path(file).name, handle)})
        return self._obj(
            "datasets.upload", body=fields, files={"file": (getattr(file, "name", "upload"), file)}
        )

    def import_status(self, import_id: int) -> Json:
        return self._obj("datasets.import_status", path={"import_id": import_id})

    def cancel_import(self, import_id: int) -> Json:
        """Cancel a queued import, or stop a running one before its next batch (409 once it ended)."""
        return self._obj("datasets.import_cancel", path={"import_id": import_id})

    def wait_import(self, import_id: int, *, timeout: float = 600, poll: float = 1.0) -> Json:
        return self._c.wait_job(
            "datasets.import_status", path={"import_id": import_id}, timeout=timeout, poll=poll, noun="import"
        )


class Projects(_Part):
    def list(self) -> JsonList:
        return list(self._c.paginate("projects.list"))

    def create(self, *, name: str, kind: str, dataset: int | None = None, **options: Any) -> Json:
        """A draft project and its tasks; ``groups`` names the annotator groups (default one group "A")."""
        return self._obj("projects.create", body={"name": name, "kind": kind, "dataset": dataset, **options})

    def get(self, project_id: int) -> Json:
        return self._obj("projects.get", path={"project_id": project_id})

    def update(self, project_id: int, **fields: Any) -> Json:
        return self._obj("projects.update", path={"project_id": project_id}, body=fields)

    def delete(self, project_id: int) -> None:
        self._c.call("projects.delete", path={"project_id": project_id})

    def set_status(self, project_id: int, action: str) -> Json:
        """``action``: activate, pause or close."""
        return self._obj("projects.status", path={"project_id": project_id}, body={"action": action})

    def activate(self, project_id: int) -> Json:
        return self.set_status(project_id, "activate")

    def progress(self, project_id: int) -> Json:
        return self._obj("projects.progress", path={"project_id": project_id})

    def groups(self, project_id: int) -> Sequence[str]:
        return cast(Sequence[str], self.get(project_id)["groups"])

    def members(self, project_id: int) -> JsonList:
        return list(self._c.paginate("projects.members", path={"project_id": project_id}))

    def add_member(self, project_id: int, *, user: str, group: str) -> Json:
        """Add ``user`` (a username) to ``group``, which is created when the project has none of that name."""
        return self._obj(
            "projects.member_add", path={"project_id": project_id}, body={"user": user, "group": group}
        )

    def remove_member(self, project_id: int, *, user: str) -> None:
        self._c.call("projects.member_remove", path={"project_id": project_id}, body={"user": user})

    def rubric(self, project_id: int, *, category: str | None = None) -> JsonList:
        return cast(
            JsonList,
            self._c.call("projects.rubric", path={"project_id": project_id}, query={"category": category}),
        )


class Annotation(_Part):
    def next(self, project_id: int) -> Json | None:
        """The caller's next blinded task (claimed for the lease), or None when there is none left."""
        return cast("Json | None", self._c.call("annotation.next", path={"project_id": project_id}))

    def submit(self, task: str, answer: Json, *, seconds: float | None = None, next: bool = False) -> Json:
        """Answer ``task`` (the token from :meth:`next`). Submitting the same answer again is harmless.
        With ``next=True`` the answer holds the next task under ``"next"``."""
        return self._obj(
            "annotation.submit",
            path={"token": task},
            body={"answer": answer, "seconds": seconds},
            query={"next": 1 if next else None},
        )

    def skip(self, task: str, *, reason: str = "") -> Json:
        return self._obj("annotation.skip", path={"token": task}, body={"reason": reason})

    def tasks(self, project_id: int) -> Iterator[Json]:
        """Claim tasks one after another until none is left (answer each before asking for the next)."""
        while (task := self.next(project_id)) is not None:
            yield task


class Reviews(_Part):
    def queue(self, *, project: int | None = None, status: str | None = None) -> JsonList:
        """Submitted work of others waiting for review (``status``: pending, resubmitted, accepted, all)."""
        return list(self._c.paginate("reviews.queue", project=project, status=status))

    def accept(self, assignment: int, *, comment: str = "") -> Json:
        return self._obj(
            "reviews.create", body={"assignment": assignment, "verdict": "accept", "comment": comment}
        )

    def reject(self, assignment: int, *, comment: str) -> Json:
        """Send the work back to its annotator as a new round; the comment says what to fix."""
        return self._obj(
            "reviews.create", body={"assignment": assignment, "verdict": "reject", "comment": comment}
        )


class Endpoints(_Part):
    """Model endpoints (an OpenAI-compatible server, vLLM, transformers, llama.cpp) that runs call."""

    def list(self) -> JsonList:
        return list(self._c.paginate("endpoints.list"))

    def create(self, *, slug: str, model_id: str, **fields: Any) -> Json:
        return self._obj("endpoints.create", body={"slug": slug, "model_id": model_id, **fields})

    def get(self, endpoint_id: int) -> Json:
        return self._obj("endpoints.get", path={"endpoint_id": endpoint_id})


class Runs(_Part):
    """Generation, judge and benchmark runs; ``kind`` is ``generation``, ``judge`` or ``benchmark``."""

    def start_generation(self, *, dataset: int, endpoints: Sequence[str], **options: Any) -> Json:
        return self._obj(
            "runs.generation_start", body={"dataset": dataset, "endpoints": list(endpoints), **options}
        )

    def start_judge(self, *, endpoint: str, judge_kind: str, **options: Any) -> Json:
        return self._obj("runs.judge_start", body={"endpoint": endpoint, "judge_kind": judge_kind, **options})

    def start_benchmark(self, *, dataset: int, endpoint: str, task: str, **options: Any) -> Json:
        return self._obj(
            "runs.benchmark_start", body={"dataset": dataset, "endpoint": endpoint, "task": task, **options}
        )

    def get(self, kind: str, run_id: int) -> Json:
        """The run with its status and progress counts (``n_total``, ``n_done``, ``n_failed``)."""
        return self._obj("runs.get", path={"kind": kind, "run_id": run_id})

    def cancel(self, kind: str, run_id: int) -> Json:
        return self._obj("runs.cancel", path={"kind": kind, "run_id": run_id})

    def retry(self, kind: str, run_id: int) -> Json:
        return self._obj("runs.retry", path={"kind": kind, "run_id": run_id})

    def wait(self, kind: str, run_id: int, *, timeout: float = 3600, poll: float = 2.0) -> Json:
        return self._c.wait_job(
            "runs.get", path={"kind": kind, "run_id": run_id}, timeout=timeout, poll=poll, noun=f"{kind} run"
        )

    def results(self, kind: str, run_id: int) -> JsonList:
        """A judge run's judgments, a benchmark run's results (a generation run's answers are the
        dataset's responses: read them through the dataset)."""
        names = {"judge": "runs.judgments", "benchmark": "runs.benchmark_results"}
        if kind not in names:
            raise ValueError(f"results are read for judge and benchmark runs, not {kind!r}")
        return list(self._c.paginate(names[kind], path={"run_id": run_id}))

    def verdicts(self, run_id: int) -> JsonList:
        """A pairwise judge run's combined verdicts (both orders) with their consistency."""
        return list(self._c.paginate("runs.verdicts", path={"run_id": run_id}))


class Agreement(_Part):
    def report(
        self,
        project_id: int,
        *,
        level: str | None = None,
        wait: bool = True,
        timeout: float = 600,
        poll: float = 1.0,
    ) -> Json:
        """The project's agreement report (every section). It is computed in the background when the data
        changed: with ``wait`` the client asks again until it is ready."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self._c.request(
                "agreement.report", path={"project_id": project_id}, query={"level": level}
            )
            body: Json = answer.json()
            if answer.status_code == 200:
                return body
            if body.get("status") in ("failed", "cancelled"):
                raise JobFailed(f"agreement report {body['status']}: {body.get('error', '')}", body)
            if not wait or time.monotonic() >= deadline:
                if wait:
                    raise WaitTimeout(f"agreement report still {body.get('status')}", body)
                return body
            self._c._sleep(poll)

    def section(self, project_id: int, section: str, *, level: str | None = None) -> Json:
        return self._obj(
            "agreement.section", path={"project_id": project_id, "section": section}, query={"level": level}
        )

    def judge_lab(
        self, project_id: int, *, baseline: str | None = None, ppi_share: float | None = None
    ) -> Json:
        """The judge lab of a project: each pairwise judge run's biases, calibration, length-controlled and
        prediction-powered win rates (``ppi_share`` keeps only that share of the human votes)."""
        return self._obj(
            "agreement.judge_lab",
            path={"project_id": project_id},
            query={"baseline": baseline, "ppi_share": ppi_share},
        )

    def span_scores(self, project_id: int, *, bootstrap: int | None = None, seed: int | None = None) -> Json:
        """MQM or ESA scores per system of an error-span project, with intervals and span agreement."""
        return self._obj(
            "agreement.span_scores",
            path={"project_id": project_id},
            query={"bootstrap": bootstrap, "seed": seed},
        )


class Arena(_Part):
    def leaderboard(
        self,
        project_id: int,
        *,
        ties: str | None = None,
        style: Sequence[str] = (),
        bootstrap: int | None = None,
        seed: int | None = None,
    ) -> Json:
        """An arena's leaderboard: the object ``manage.py leaderboard --json`` prints (ratings, intervals,
        rank ranges, style coefficients, votes per pair). ``ties``: ``half`` or ``davidson``; ``style``: the
        features to control for (``length``, ``headers``, ``bold``, ``lists``)."""
        return self._obj(
            "arena.leaderboard",
            path={"project_id": project_id},
            query={"ties": ties, "style": list(style) or None, "bootstrap": bootstrap, "seed": seed},
        )


class Exports(_Part):
    def list(self, *, project: int | None = None) -> JsonList:
        return list(self._c.paginate("exports.list", project=project))

    def create(self, *, project: int, **options: Any) -> Json:
        """Queue an export (``format``, ``strategy``, filters, ``split``...); ``push_to_hub="owner/name"``
        also pushes it to the Hugging Face Hub."""
        return self._obj("exports.create", body={"project": project, **options})

    def push(self, *, project: int, repo: str, private: bool = True, **options: Any) -> Json:
        return self.create(project=project, push_to_hub=repo, private=private, **options)

    def get(self, export_id: int) -> Json:
        return self._obj("exports.get", path={"export_id": export_id})

    def wait(self, export_id: int, *, timeout: float = 3600, poll: float = 1.0) -> Json:
        return self._c.wait_job(
            "exports.get", path={"export_id": export_id}, timeout=timeout, poll=poll, noun="export"
        )

    def cancel(self, export_id: int) -> Json:
        return self._obj("exports.cancel", path={"export_id": export_id})

    def retry(self, export_id: int) -> Json:
        return self._obj("exports.retry", path={"export_id": export_id})

    def download(self, export_id: int, destination: str | Path) -> Path:
        """Stream the export's zip to ``destination`` (a file, or a folder to put ``export-<id>.zip`` in)."""
        target = Path(destination)
        if target.is_dir():
            target = target / f"export-{export_id}.zip"
        partial = target.with_name(target.name + ".part")
        try:
            with partial.open("wb") as handle:
                self._c.request("exports.download", path={"export_id": export_id}, stream_to=handle)
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
        return target


class Webhooks(_Part):
    def list(self, *, project: int | None = None) -> JsonList:
        return list(self._c.paginate("webhooks.list", project=project))

    def create(
        self, *, url: str, events: Sequence[str], project: int | None = None, description: str = ""
    ) -> Json:
        """Register ``url`` for ``events`` of a project (or of the whole site without one); the answer holds
        the signing ``secret``."""
        return self._obj(
            "webhooks.create",
            body={"url": url, "events": list(events), "project": project, "description": description},
        )

    def get(self, hook_id: int) -> Json:
        return self._obj("webhooks.get", path={"hook_id": hook_id})

    def update(self, hook_id: int, **fields: Any) -> Json:
        return self._obj("webhooks.update", path={"hook_id": hook_id}, body=fields)

    def delete(self, hook_id: int) -> None:
        self._c.call("webhooks.delete", path={"hook_id": hook_id})

    def rotate_secret(self, hook_id: int) -> Json:
        return self._obj("webhooks.rotate_secret", path={"hook_id": hook_id})

    def deliveries(self, hook_id: int) -> JsonList:
        return list(self._c.paginate("webhooks.deliveries", path={"hook_id": hook_id}))

    def redeliver(self, delivery_id: int) -> Json:
        return self._obj("webhooks.redeliver", path={"delivery_id": delivery_id})
