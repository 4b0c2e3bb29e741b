"""``push_to_hub`` through the real huggingface_hub client against a local stand-in for the Hub.

The stand-in (``http.server`` in a thread on 127.0.0.1) answers exactly the calls the installed client
makes for ``create_repo`` + ``upload_folder`` of small files: ``POST /api/repos/create``,
``POST /api/validate-yaml`` (README.md metadata), ``POST /api/datasets/<repo>/preupload/<rev>`` (every file
"regular", so no LFS/Xet transfer) and ``POST /api/datasets/<repo>/commit/<rev>`` with an NDJSON body.
The client's optional ``GET /api/agent-harnesses`` gets a 404 it ignores; anything else is answered 404
and recorded, so an unexpected call fails the test.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import huggingface_hub.constants
import pytest

from exports.services import ExportInvalid, ExportOptions, export_create, hub_push

TOKEN = "hf_local_test_token"


class FakeHub:
    def __init__(self) -> None:
        self.created: list[dict] = []
        self.commits: list[dict] = []
        self.files: dict[str, bytes] = {}
        self.unexpected: list[str] = []
        self.unauthorised: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _reply(self, code: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.split("?")[0] == "/api/agent-harnesses":
                    # The client's best-effort, once-a-day registry fetch; it shrugs off a 404.
                    return self._reply(404, {"error": "no registry here"})
                hub.unexpected.append(f"GET {self.path}")
                self._reply(404, {"error": "not served by the test hub"})

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    hub.unauthorised.append(self.path)
                path = self.path.split("?")[0]
                parts = path.strip("/").split("/")
                if path == "/api/repos/create":
                    payload = json.loads(body)
                    hub.created.append(payload)
                    repo = f"{payload['organization']}/{payload['name']}"
                    return self._reply(200, {"url": f"{hub.url}/datasets/{repo}", "name": repo})
                if path == "/api/validate-yaml":
                    return self._reply(200, {"errors": [], "warnings": []})
                if len(parts) == 6 and parts[:2] == ["api", "datasets"] and parts[4] == "preupload":
                    files = json.loads(body)["files"]
                    return self._reply(
                        200,
                        {
                            "files": [
                                {
                                    "path": f["path"],
                                    "uploadMode": "regular",
                                    "shouldIgnore": False,
                                    "oid": None,
                                }
                                for f in files
                            ]
                        },
                    )
                if len(parts) == 6 and parts[:2] == ["api", "datasets"] and parts[4] == "commit":
                    lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
                    header = next(line["value"] for line in lines if line["key"] == "header")
                    for line in lines:
                        if line["key"] == "file":
                            hub.files[line["value"]["path"]] = base64.b64decode(line["value"]["content"])
                    oid = hashlib.sha1(body).hexdigest()
                    hub.commits.append({"repo": f"{parts[2]}/{parts[3]}", "revision": parts[5], **header})
                    repo_url = f"{hub.url}/datasets/{parts[2]}/{parts[3]}"
                    return self._reply(
                        200,
                        {"commitUrl": f"{repo_url}/commit/{oid}", "commitOid": oid, "pullRequestUrl": None},
                    )
                hub.unexpected.append(f"POST {self.path}")
                return self._reply(404, {"error": "not served by the test hub"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_hub(monkeypatch):
    # The local server must be reached directly, whatever proxy the environment names.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with FakeHub() as hub:
        yield hub


def test_hub_push_creates_the_repo_and_commits_every_file(fake_hub, tmp_path):
    folder = tmp_path / "dataset"
    (folder / "data").mkdir(parents=True)
    (folder / "README.md").write_text('---\nlicense: "cc-by-4.0"\n---\n\n# Contoh\n', encoding="utf-8")
    (folder / "data" / "train-00000-of-00001.parquet").write_bytes(b"PAR1-not-really-parquet-PAR1")
    commit = hub_push(
        folder=folder,
        repo_id="timbang-lab/contoh-pref",
        private=True,
        commit_message="Timbang export 1",
        token=TOKEN,
        endpoint=fake_hub.url,
    )
    assert fake_hub.unexpected == [] and fake_hub.unauthorised == []
    assert fake_hub.created == [
        {"name": "contoh-pref", "organization": "timbang-lab", "visibility": "private", "type": "dataset"}
    ]
    assert len(fake_hub.commits) == 1
    assert fake_hub.commits[0]["repo"] == "timbang-lab/contoh-pref"
    assert fake_hub.commits[0]["summary"] == "Timbang export 1"
    assert fake_hub.files == {
        "README.md": (folder / "README.md").read_bytes(),
        "data/train-00000-of-00001.parquet": b"PAR1-not-really-parquet-PAR1",
    }
    assert len(commit.oid) == 40 and commit.commit_url.endswith(commit.oid)
    assert commit.repo_url == f"{fake_hub.url}/datasets/timbang-lab/contoh-pref"


@pytest.mark.django_db
def test_export_with_push_records_the_commit(
    fake_hub, likert_project, tmp_path, settings, monkeypatch, django_capture_on_commit_callbacks
):
    # The service leaves the endpoint to huggingface_hub's configuration (HF_ENDPOINT, read at import).
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", fake_hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    settings.EXPORTS_DIR = tmp_path / "exports"
    with django_capture_on_commit_callbacks(execute=True):
        record = export_create(
            project=likert_project,
            options=ExportOptions(bootstrap_draws=50),
            hub_repo_id="timbang-lab/likert",
            hub_private=False,
        )
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    assert fake_hub.unexpected == [] and fake_hub.unauthorised == []
    assert fake_hub.created[0]["visibility"] == "public"
    assert len(record.hub_revision) == 40
    assert record.hub_url == f"{fake_hub.url}/datasets/timbang-lab/likert"
    folder = Path(record.folder_path)
    assert set(fake_hub.files) == {"README.md", "data/train-00000-of-00001.parquet"}
    assert fake_hub.files["README.md"] == (folder / "README.md").read_bytes()
    assert TOKEN not in json.dumps(record.options) + json.dumps(record.counts) + record.error


@pytest.mark.django_db
def test_push_without_a_token_is_refused_before_anything_runs(likert_project, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    with pytest.raises(ExportInvalid) as caught:
        export_create(project=likert_project, options=ExportOptions(), hub_repo_id="timbang-lab/likert")
    assert caught.value.errors == {"push_to_hub": "no Hugging Face token: set HF_TOKEN"}
