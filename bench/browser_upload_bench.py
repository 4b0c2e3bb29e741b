"""Import a large file through the page's HTTP path and measure the web server's memory while it uploads.

    python bench/browser_upload_bench.py --lines 200000 [--port 8765] [--keep]

Starts, on a scratch ``TIMBANG_VAR_DIR`` (SQLite and the filesystem broker, unless ``DATABASE_URL`` and
``REDIS_URL`` are set), a gunicorn web server (one sync worker) and a Celery worker (solo pool), logs in,
then does what the Datasets page does: uploads an AlpacaEval-style CSV whose columns need a mapping
(``POST /datasets/import/upload/``, multipart), opens its preview, posts the column mapping (which queues
the import) and polls the import until it has finished. While the upload runs, the web worker's resident
memory is sampled every 20 ms.

Prints one JSON object: the file's size; ``upload_s`` (the upload request), ``to_finished_s`` (from the
start of the upload to the import's end, as the page would see it), ``import_s`` (the worker's run);
the web worker's RSS before the upload and its peak while uploading; the Celery worker's peak RSS
(VmHWM); the import's counts; how often the polls saw the import's progress, and the last they saw. Everything started is stopped at the end.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
USER, PASSWORD = "bench-pm", "bench-upload-password"
MAPPING_POST = {
    "use_mapping": "on",
    "col-id": "#row",
    "col-prompt": "instruction",
    "col-category": "dataset",
    "const-language": "ind",
    "resp-0-text": "output_1",
    "resp-0-model_column": "generator_1",
    "resp-1-text": "output_2",
    "resp-1-model_column": "generator_2",
    "keep_other_columns": "on",
}


def write_csv(path: Path, lines: int) -> None:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["instruction", "output_1", "generator_1", "output_2", "generator_2", "dataset"])
        for i in range(lines):
            writer.writerow(
                [
                    f"Tuliskan penjelasan singkat tentang topik nomor {i} untuk pelajar SMA.",
                    f"Jawaban pertama untuk topik {i}: " + "kalimat contoh " * 8,
                    "sahabat-ai-9b",
                    f"Jawaban kedua untuk topik {i}: " + "kalimat lain " * 8,
                    ("komodo-7b", "seallm-v3", "gemma-2-9b")[i % 3],
                    ("analysis", "math", "safety", "coding")[i % 4],
                ]
            )


def status_kb(pid: int, key: str) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    match = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return int(match.group(1)) if match else 0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Sampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, status_kb(self.pid, "VmRSS"))
            time.sleep(0.02)


def wait_for(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=20)
            return
        except requests.RequestException:
            time.sleep(0.3)
    raise SystemExit(f"the web server did not answer at {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--keep", action="store_true", help="Keep the scratch folder.")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="timbang-upload-bench-"))
    env = os.environ | {
        "TIMBANG_VAR_DIR": str(scratch / "var"),
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PYTHONPATH": str(ROOT),
    }
    manage = [PYTHON, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--verbosity", "0"], env=env, check=True, cwd=ROOT)
    create_user = (
        "from django.contrib.auth import get_user_model as g; U = g(); "
        f"U.objects.filter(username='{USER}').exists() or "
        f"U.objects.create_superuser('{USER}', 'bench@example.org', '{PASSWORD}')"
    )
    subprocess.run([*manage, "shell", "-c", create_user], env=env, check=True, cwd=ROOT)
    path = scratch / "alpaca-bench.csv"
    write_csv(path, args.lines)

    bin_dir = Path(PYTHON).parent
    logs = (scratch / "web.log").open("w"), (scratch / "worker.log").open("w")
    web = subprocess.Popen(
        [str(bin_dir / "gunicorn"), "config.wsgi", "--workers", "1", "--timeout", "600",
         "--bind", f"127.0.0.1:{args.port}"],
        env=env, cwd=ROOT, stdout=logs[0], stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    worker = subprocess.Popen(
        [str(bin_dir / "celery"), "-A", "config", "worker", "--pool", "solo", "-Q", "default",
         "--loglevel", "WARNING"],
        env=env, cwd=ROOT, stdout=logs[1], stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{args.port}"
    try:
        wait_for(base + "/accounts/login/")
        web_pid = next(iter(children(web.pid)), web.pid)
        session = requests.Session()
        session.get(base + "/accounts/login/")
        login = session.post(
            base + "/accounts/login/",
            data={
                "username": USER,
                "password": PASSWORD,
                "csrfmiddlewaretoken": session.cookies["csrftoken"],
            },
            headers={"Referer": base + "/accounts/login/"},
        )
        login.raise_for_status()
        session.get(base + "/datasets/")
        csrf = {"X-CSRFToken": session.cookies["csrftoken"], "Referer": base + "/datasets/"}

        rss_before = status_kb(web_pid, "VmRSS")
        sampler = Sampler(web_pid)
        sampler.start()
        started = time.perf_counter()
        with path.open("rb") as handle:
            uploaded = session.post(
                base + "/datasets/import/upload/",
                files={"file": (path.name, handle, "text/csv")},
                data={"name": "bench-upload", "replace": "on"},
                headers=csrf,
                allow_redirects=False,
            )
        upload_s = time.perf_counter() - started
        if uploaded.status_code != 302:
            raise SystemExit(f"upload answered {uploaded.status_code}: {uploaded.text[:500]}")
        preview_url = base + uploaded.headers["Location"]
        session.get(preview_url).raise_for_status()
        queued = session.post(preview_url, data=MAPPING_POST, headers=csrf, allow_redirects=False)
        if queued.status_code != 302:
            raise SystemExit(f"the mapping answered {queued.status_code}: {queued.text[:500]}")
        sampler.stop.set()
        import_id = int(queued.headers["Location"].rstrip("/").split("/")[-1])
        record: dict = {}
        progress_seen: list[dict] = []
        while time.perf_counter() - started < args.timeout:
            record = session.get(f"{base}/api/v1/datasets/imports/{import_id}").json()
            if record["status"] not in ("queued", "running"):
                break
            if record.get("progress"):
                progress_seen.append(record["progress"])
            time.sleep(0.5)
        to_finished = time.perf_counter() - started
        worker_pid = worker.pid
        import_s = None
        if record.get("started_at") and record.get("finished_at"):
            from datetime import datetime

            import_s = (
                datetime.fromisoformat(record["finished_at"]) - datetime.fromisoformat(record["started_at"])
            ).total_seconds()
        report = {
            "lines": args.lines,
            "file_mb": round(path.stat().st_size / 2**20, 1),
            "database": "postgresql" if os.environ.get("DATABASE_URL") else "sqlite",
            "status": record.get("status"),
            "counts": record.get("counts"),
            "upload_s": round(upload_s, 2),
            "to_finished_s": round(to_finished, 2),
            "import_s": round(import_s, 2) if import_s is not None else None,
            "web_rss_before_upload_mb": round(rss_before / 1024, 1),
            "web_rss_peak_during_upload_mb": round(max(sampler.peak, rss_before) / 1024, 1),
            "worker_peak_rss_mb": round(status_kb(worker_pid, "VmHWM") / 1024, 1),
            # How the page saw the import advance: the number of polls that showed progress, and the last.
            "progress_polls": len(progress_seen),
            "last_progress": progress_seen[-1] if progress_seen else None,
        }
        print(json.dumps(report))
    finally:
        for process in (web, worker):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in (web, worker):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        for log in logs:
            log.close()
        if not args.keep:
            import shutil

            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
